"""A plugin's userConfig, for real: `python -m plugman` subprocesses with their own HOME and
PLUGMAN_HOME, a local marketplace, a real stdio MCP server that reports its options, a real
hook, an agent (Gemini CLI's files) linked at project scope, and the secret store."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from plugman.core.state import record_path
from tests.conftest import PLANTED_CONFIG

KEY = PLANTED_CONFIG["api_key"]
DIGEST = hashlib.sha256(KEY.encode()).hexdigest()[:12]

SERVER = """
import hashlib, os
from mcp.server.mcpserver import MCPServer

server = MCPServer("weather-local")
key = os.environ.get("CLAUDE_PLUGIN_OPTION_API_KEY", "")
retries = os.environ.get("CLAUDE_PLUGIN_OPTION_RETRIES", "none").replace(".", "_")
marks = ["retries_" + retries, "key_" + hashlib.sha256(key.encode()).hexdigest()[:12]]
for mark in marks:
    server.tool(name=mark, description="reports an option")(lambda: "ok")
server.run()
"""

HOOK = """
import hashlib, json, os, sys
out = {k: v for k, v in os.environ.items() if k.startswith("CLAUDE_PLUGIN_OPTION_")}
out["CLAUDE_PLUGIN_OPTION_API_KEY"] = hashlib.sha256(
    out.get("CLAUDE_PLUGIN_OPTION_API_KEY", "").encode()).hexdigest()[:12]
out["argv"] = sys.argv[1:]
with open(os.path.join(os.environ["CLAUDE_PLUGIN_DATA"], "hook.json"), "w") as f:
    json.dump(out, f)
"""

MANIFEST: dict[str, Any] = {
    "name": "weather",
    "version": "1.0.0",
    "description": "Weather data",
    "userConfig": {
        "api_key": {"type": "string", "title": "API key", "description": "Your key",
                    "sensitive": True, "required": True},
        "endpoint": {"type": "string", "title": "Endpoint", "description": "Base URL",
                     "required": True},
        "retries": {"type": "number", "title": "Retries", "description": "Attempts",
                    "min": 0, "max": 5, "default": 2},
    },
    "mcpServers": {
        "api": {"type": "http", "url": "${user_config.endpoint}/mcp",
                "headers": {"X-Api-Key": "${user_config.api_key}"}},
        "local": {"command": sys.executable, "args": ["${CLAUDE_PLUGIN_ROOT}/server.py"]},
    },
    "hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": sys.executable,
         "args": ["${CLAUDE_PLUGIN_ROOT}/hook.py", "${user_config.endpoint}"]},
    ]}]},
}  # fmt: skip


class Env:
    """One isolated machine: HOME, PLUGMAN_HOME and a project, and every output seen."""

    def __init__(self, tmp: Path, home: Path, seen: list[str]) -> None:
        self.home, self.project, self.seen = tmp / "home", tmp / "project", seen
        self.plugman_home = home
        self.home.mkdir()
        self.project.mkdir()
        self.vars = {
            **os.environ,
            "HOME": str(self.home),
            "PLUGMAN_HOME": str(home),
            "PLUGMAN_SECRETS": "file",
        }

    def run(self, *args: str, code: int = 0, stdin: str = "") -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "plugman", "--project", str(self.project), *args],
            env=self.vars,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
        )
        self.seen += [done.stdout, done.stderr]
        assert done.returncode == code, (args, done.returncode, done.stdout, done.stderr)
        return done

    def json(self, *args: str, code: int = 0) -> Any:
        return json.loads(self.run(*args, "--json", code=code).stdout)


def market(root: Path, manifest: dict[str, Any] = MANIFEST) -> Path:
    plugin = root / "weather"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    (plugin / "server.py").write_text(SERVER)
    (plugin / "hook.py").write_text(HOOK)
    (root / ".claude-plugin").mkdir()
    catalog = {"name": "wx", "owner": {"name": "t"}, "plugins": [
        {"name": "weather", "source": "./weather", "description": "Weather data"}]}  # fmt: skip
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    return root


@pytest.fixture
def env(tmp_path: Path, isolated_home: Path, secret_scan: list[str]) -> Env:
    machine = Env(tmp_path, isolated_home, secret_scan)
    machine.run("marketplace", "add", str(market(tmp_path / "market")))
    return machine


def files_under(*roots: Path) -> dict[str, bytes]:
    return {
        str(p): p.read_bytes() for r in roots if r.exists() for p in r.rglob("*") if p.is_file()
    }


def secrets_file(env: Env) -> dict[str, str]:
    found = list(env.plugman_home.rglob("secrets.json"))
    return json.loads(found[0].read_text()) if found else {}


def test_install_with_config_resolves_and_runs(env: Env) -> None:
    env.run("install", "weather@wx", "--config", f"api_key={KEY}",
            "--config", "endpoint=https://wx.example.com", "--config", "retries=3")  # fmt: skip
    resolved = env.json("config", "resolve")
    api = resolved["mcpServers"]["plugin:weather:api"]
    assert api["url"] == "https://wx.example.com/mcp"
    assert api["headers"]["X-Api-Key"] == "***"
    local = resolved["mcpServers"]["plugin:weather:local"]
    assert local["env"]["CLAUDE_PLUGIN_OPTION_ENDPOINT"] == "https://wx.example.com"
    assert local["env"]["CLAUDE_PLUGIN_OPTION_API_KEY"] == "***"
    # the sensitive value is in the secret store alone; the plain ones in the user record
    stored = secrets_file(env)
    assert stored == {"plugin-config:weather@wx:api_key": KEY}
    assert oct(next(env.plugman_home.rglob("secrets.json")).stat().st_mode & 0o777) == "0o600"
    record = json.loads(record_path(_paths(env), "user").read_text())
    assert record["config"] == {
        "weather@wx": {"endpoint": "https://wx.example.com", "retries": "3"}
    }
    # a real stdio server gets its options in its environment
    probed = env.json("mcp", "probe", code=1)  # the http one is not reachable
    text = json.dumps([s for s in probed["servers"] if s["name"] == "plugin:weather:local"])
    assert "retries_3" in text and f"key_{DIGEST}" in text, text
    # a real hook too, and its exec-form args have the value put in
    env.run("hooks", "run", "SessionStart", stdin="{}")
    ran = json.loads(next(env.plugman_home.rglob("hook.json")).read_text())
    assert ran["CLAUDE_PLUGIN_OPTION_ENDPOINT"] == "https://wx.example.com"
    assert ran["CLAUDE_PLUGIN_OPTION_API_KEY"] == DIGEST
    assert ran["CLAUDE_PLUGIN_OPTION_RETRIES"] == "3"
    assert ran["argv"] == ["https://wx.example.com"]
    # `configure` lists them, the sensitive one only as set
    listed = env.json("configure", "weather")["options"]
    assert {o["key"]: o["state"] for o in listed} == {
        "api_key": "set", "endpoint": "set", "retries": "set"}  # fmt: skip
    assert [o["value"] for o in listed if o["key"] == "api_key"] == [None]
    shown = env.run("configure", "weather").stdout
    assert "api_key (string, required, sensitive)  set" in shown and KEY not in shown
    # and changes one
    env.run("configure", "weather", "endpoint=https://other.example.com")
    assert env.json("config", "resolve")["mcpServers"]["plugin:weather:api"]["url"] == (
        "https://other.example.com/mcp"
    )


def _paths(env: Env) -> Any:
    from plugman.core.paths import Paths

    return Paths.from_env(project=env.project)


def test_missing_required_drops_with_fix_and_agent_gets_no_placeholder(env: Env) -> None:
    env.run("agents", "add", "gemini", "--scope", "project")
    done = env.run("install", "weather@wx", "--scope", "project", "--config", "retries=1")
    assert "required option(s) api_key, endpoint not set" in done.stderr, done.stderr
    resolved = env.json("config", "resolve")
    assert "plugin:weather:api" not in resolved["mcpServers"]
    explained = env.run("config", "explain", "plugin:weather:api").stdout
    assert "needs-config" in explained
    assert "plugman configure weather@wx api_key=VALUE endpoint=VALUE --scope project" in explained
    agent_files = files_under(env.project, env.home)
    assert agent_files, "gemini's files were written"
    assert not [f for f, data in agent_files.items() if b"${user_config." in data]
    # given later, the agent's file names the launcher, which puts the values in at start
    done = env.run("configure", "weather", "--scope", "project", f"api_key={KEY}",
                   "endpoint=https://wx.example.com")  # fmt: skip
    assert "PLUGMAN_OPT" not in done.stderr, done.stderr
    for committed in ("plugman.toml", "plugman.lock"):  # values are this user's, not the repo's
        assert "example.com" not in (env.project / committed).read_text()
    settings = json.loads((env.project / ".gemini" / "settings.json").read_text())
    api = settings["mcpServers"]["plugin_weather_api"]
    assert api == {"command": "plugman", "args": ["mcp", "run", "plugin:weather:api"]}, api
    assert "PLUGMAN_OPT" not in json.dumps(settings)
    assert not [f for f, data in files_under(env.project, env.home).items() if KEY.encode() in data]
    # uninstall takes every value out: the store, the record, the agent's file
    env.run("uninstall", "weather@wx", "--scope", "project")
    assert secrets_file(env) == {}
    assert not record_path(_paths(env), "project").exists() or "weather" not in (
        record_path(_paths(env), "project").read_text()
    )
    gemini = env.project / ".gemini" / "settings.json"
    assert not gemini.exists() or "plugin_weather" not in gemini.read_text()


@pytest.mark.parametrize(
    ("pair", "expected"),
    [
        ("retries=9", "retries = '9' is not a number from 0 to 5"),
        ("retries=many", "retries = 'many' is not a number"),
        ("colour=red", "weather@wx has no option 'colour'"),
        ("api_key", "is not KEY=VALUE"),
    ],
)
def test_bad_values_are_usage_errors_and_change_nothing(env: Env, pair: str, expected: str) -> None:
    before = files_under(env.plugman_home, env.project, env.home)
    failed = env.run("install", "weather@wx", "--config", pair, code=2)
    assert expected in failed.stderr, failed.stderr
    assert "weather" in failed.stderr
    after = files_under(env.plugman_home, env.project, env.home)
    assert {k for k in after if "/cache/" not in k and "/logs/" not in k} == {
        k for k in before if "/cache/" not in k and "/logs/" not in k
    }
    assert not list(env.plugman_home.rglob("installed/*.json"))


def test_configure_bad_value_and_unset(env: Env) -> None:
    env.run(
        "install",
        "weather@wx",
        "--config",
        f"api_key={KEY}",
        "--config",
        "endpoint=https://a.example.com",
    )
    record = record_path(_paths(env), "user")
    before = record.read_bytes()
    failed = env.run("configure", "weather", "retries=-1", code=2)
    assert "weather@wx: option retries" in failed.stderr
    assert record.read_bytes() == before
    env.run("configure", "weather", "--unset", "api_key")
    assert secrets_file(env) == {}
    dropped = env.json("config", "resolve")
    assert "plugin:weather:api" not in dropped["mcpServers"]


def test_shell_form_use_is_rejected(env: Env, tmp_path: Path) -> None:
    manifest = json.loads(json.dumps(MANIFEST))
    manifest["name"] = "weather"
    manifest["hooks"]["SessionStart"][0]["hooks"] = [
        {"type": "command", "command": "echo ${user_config.endpoint}"}
    ]
    root = market(tmp_path / "market2", manifest)
    catalog = json.loads((root / ".claude-plugin" / "marketplace.json").read_text())
    catalog["name"] = "wx2"
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    env.run("marketplace", "add", str(root))
    env.run("install", "weather@wx2", "--config", f"api_key={KEY}", "--config", "endpoint=x")
    explained = env.json("config", "resolve")
    assert not explained["hooks"].get("SessionStart")
    text = env.run("config", "resolve", "--explain").stdout
    assert "unsafe-config" in text or "shell-parsed" in text, text


KEYRING = shutil.which("dbus-run-session") and shutil.which("gnome-keyring-daemon")


@pytest.mark.skipif(
    not KEYRING,
    reason="dbus-run-session or gnome-keyring-daemon missing: install the Debian packages dbus "
    "and gnome-keyring (make setup-apt)",
)
def test_keyring_round_trip(env: Env) -> None:
    """Under a real D-Bus session and an unlocked gnome-keyring, the keychain is the store."""
    py = sys.executable
    project = str(env.project)
    script = (
        "echo pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null; "
        f"{py} -m plugman paths --json > {env.home}/paths.json && "
        f"{py} -m plugman --project {project} install weather@wx --config api_key={KEY} "
        "--config endpoint=https://wx.example.com && "
        f"{py} -m plugman --project {project} mcp probe --json > {env.home}/probe.json; "
        f"{py} -c 'import hashlib, keyring; print(hashlib.sha256(keyring.get_password("
        f'"plugman", "plugin-config:weather@wx:api_key").encode()).hexdigest()[:12])\''
        f" > {env.home}/during.txt && "
        # (probe exits 1: the http server is not reachable)
        f"{py} -m plugman --project {project} uninstall weather@wx && "
        f'{py} -c \'import keyring; print(keyring.get_password("plugman", '
        f'"plugin-config:weather@wx:api_key"))\' > {env.home}/after.txt'
    )
    vars_ = {k: v for k, v in env.vars.items() if k not in ("PLUGMAN_SECRETS",)}
    vars_.pop("DBUS_SESSION_BUS_ADDRESS", None)
    done = subprocess.run(
        ["dbus-run-session", "--", "sh", "-c", script],
        env=vars_, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    env.seen += [done.stdout, done.stderr]
    assert done.returncode == 0, (done.stdout, done.stderr)
    paths = json.loads((env.home / "paths.json").read_text())
    assert "keyring" in json.dumps(paths), paths
    assert f"key_{DIGEST}" in (env.home / "probe.json").read_text()
    assert (env.home / "during.txt").read_text().strip() == DIGEST  # in the keychain
    assert (env.home / "after.txt").read_text().strip() == "None"
    assert secrets_file(env) == {}
    assert not list(env.plugman_home.rglob("secrets.json"))  # no file store was ever used


def test_doctor_names_the_store_and_flags_a_loose_file(env: Env) -> None:
    env.run("install", "weather@wx", "--config", f"api_key={KEY}", "--config", "endpoint=x")
    doctor = env.run("doctor")
    assert doctor.stdout.startswith("secret store: file: ") and "secrets.json" in doctor.stdout
    store = next(env.plugman_home.rglob("secrets.json"))
    store.chmod(0o644)
    loose = env.run("doctor", code=1)
    assert f"{store}: the secret store is mode 644, not 600" in loose.stdout
    assert f"hint: run: chmod 600 {store}" in loose.stdout
    assert env.json("doctor", code=1)["secret_store"].startswith("file: ")


def test_a_terminal_is_asked_for_required_values(env: Env) -> None:
    """On a terminal, install asks for required values not given; the sensitive one hidden."""
    import pty
    import select
    import time

    pid, fd = pty.fork()
    if pid == 0:  # the child: plugman on the terminal
        argv = [sys.executable, "-m", "plugman", "--project", str(env.project)]
        os.execve(sys.executable, [*argv, "install", "weather@wx"], env.vars)
    shown, answers = b"", [KEY.encode() + b"\n", b"https://tty.example.com\n"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the child is gone
            break
        shown += chunk
        if answers and shown.rstrip().endswith(b":"):
            time.sleep(0.5)  # getpass flushes what was typed before it turned echo off
            os.write(fd, answers.pop(0))
            shown += b"<typed>"
    _, status = os.waitpid(pid, 0)
    text = shown.decode(errors="replace")
    env.seen.append(text)  # the secret scan: the hidden answer is never echoed
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert "API key (Your key) [api_key, string]:" in text and "installed weather@wx" in text
    assert secrets_file(env) == {"plugin-config:weather@wx:api_key": KEY}
    assert "https://tty.example.com" in record_path(_paths(env), "user").read_text()

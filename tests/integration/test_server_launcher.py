"""The server launcher (`plugman mcp run NAME`) and project files a team can commit, for real:
`python -m plugman` subprocesses, a plugin whose stdio server reports the options it got, real
git clones, and the real Codex asked through `codex app-server` (`mcpServerStatus/list` starts
each server and lists its tools).

plugman runs here with no PLUGMAN_HOME (its folders follow HOME, as for a user), except in the
teammate flow, where each clone's PLUGMAN_HOME is set elsewhere: Codex passes its servers only
HOME, PATH and a few more, so a committed entry asks for plugman's own variables by name. The
secret store is the file one (no D-Bus session).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.agents import agent_env, codex_bin
from tests.integration.helpers import git

BIN = Path(sys.executable).parent
KEY = "wx-secret-" + "7f3a9c1e5b"  # a sensitive option's value
KEY2 = "wx-secret-" + "teammate42"
PLUGIN = "weather-tools"
EXPORTED = "plugin_weather-tools_weather"  # how plugman names the server for Codex
SERVER = """
import hashlib, os
from mcp.server.mcpserver import MCPServer

server = MCPServer("weather")
key = os.environ.get("WEATHER_KEY", "")
marks = ["units_" + os.environ.get("WEATHER_UNITS", "none"),
         "key_" + hashlib.sha256(key.encode()).hexdigest()[:12]]
for mark in marks:
    server.tool(name=mark, description="reports an option")(lambda: "ok")
server.run()
"""
MANIFEST = {
    "name": PLUGIN,
    "version": "1.0.0",
    "description": "Weather",
    "userConfig": {
        "api_key": {"type": "string", "title": "API key", "description": "Key",
                    "sensitive": True, "required": True},
        "units": {"type": "string", "title": "Units", "description": "Units", "default": "si"},
    },
    "mcpServers": {"weather": {
        "command": "python3",  # the venv's, first on the agent's PATH (agent_env)
        "args": ["${CLAUDE_PLUGIN_ROOT}/server.py"],
        "env": {"WEATHER_KEY": "${user_config.api_key}", "WEATHER_UNITS": "${user_config.units}"},
    }},
}  # fmt: skip
SKILL = "---\nname: forecast\ndescription: Forecasts\n---\nForecast.\n"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def market(root: Path, manifest: dict[str, Any] = MANIFEST) -> None:
    plugin = root / "plugins" / PLUGIN
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    (plugin / "server.py").write_text(SERVER)
    (plugin / "skills" / "forecast").mkdir(parents=True)
    (plugin / "skills" / "forecast" / "SKILL.md").write_text(SKILL)
    (plugin / "agents").mkdir()
    (plugin / "agents" / "meteo.md").write_text(
        "---\nname: meteo\ndescription: Weather agent\n---\nYou forecast.\n"
    )
    (root / ".claude-plugin").mkdir()
    catalog = {"name": "wx", "owner": {"name": "t"},
               "plugins": [{"name": PLUGIN, "source": f"./plugins/{PLUGIN}"}]}  # fmt: skip
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))


class Machine:
    """One person's machine: a HOME (plugman's folders under it) and a project clone."""

    def __init__(self, home: Path, project: Path, **more: str) -> None:
        self.home, self.project = home, project.resolve()
        home.mkdir(parents=True)
        env = agent_env(home, BIN)
        for name in ("PLUGMAN_HOME", "PLUGMAN_MANAGED_DIR", "PLUGMAN_SECRETS"):
            env.pop(name, None)
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        self.env = env | more
        (home / ".codex").mkdir()
        (home / ".codex" / "config.toml").write_text(
            f'[projects."{self.project}"]\ntrust_level = "trusted"\n'
        )

    def plugman(
        self, *args: str, code: int = 0, stdin: str = ""
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "plugman", *args], cwd=self.project, env=self.env,
            capture_output=True, text=True, timeout=180, input=stdin,
        )  # fmt: skip
        assert done.returncode == code, (args, done.stdout, done.stderr)
        return done

    def codex_servers(self) -> dict[str, Any]:
        """`mcpServerStatus/list` through `codex app-server`, for a thread started in the
        project (whose `.codex/config.toml` it reads): name → status."""
        start = {"jsonrpc": "2.0", "id": 1, "method": "thread/start",
                 "params": {"cwd": str(self.project)}}  # fmt: skip
        proc = subprocess.Popen(
            [str(codex_bin()), "app-server"], cwd=self.project, env=self.env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip

        def send(message: dict[str, Any]) -> None:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            proc.stdin.flush()

        try:
            assert proc.stdout is not None
            send({"id": 0, "method": "initialize",
                  "params": {"clientInfo": {"name": "t", "version": "0"}}})  # fmt: skip
            send({"method": "initialized"})
            send(start)
            while line := proc.stdout.readline():
                message = json.loads(line)
                if message.get("id") == 1:
                    thread = message["result"]["thread"]["id"]
                    send({"id": 2, "method": "mcpServerStatus/list",
                          "params": {"threadId": thread}})  # fmt: skip
                if message.get("id") == 2:
                    found = {s["name"]: s for s in message["result"]["data"]}
                    if all(s["runtimeStatus"] != "starting" for s in found.values()):
                        return found
                    time.sleep(0.5)  # asked again until every server has started or failed
                    send({"id": 2, "method": "mcpServerStatus/list",
                          "params": {"threadId": thread}})  # fmt: skip
            raise AssertionError("codex app-server closed without answering")
        finally:
            proc.kill()
            proc.wait(timeout=10)

    def tools(self, name: str) -> set[str]:
        """The tools of Codex's server `name`, which must have connected."""
        status = self.codex_servers().get(name)
        assert status is not None, f"codex has no server {name}"
        assert status["runtimeStatus"] == "connected", status
        return set(status.get("tools") or {})

    def files_holding(self, needle: str, *roots: Path) -> list[str]:
        found = []
        for root in roots:
            for path in root.rglob("*"):
                mine = path.is_file() and path.name != "secrets.json" and ".git" not in path.parts
                if mine and needle.encode() in path.read_bytes():
                    found.append(str(path))
        return found


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    """A team's repository: its own marketplace folder inside, as a bare origin."""
    work = tmp_path / "seed"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    market(work / "market")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "marketplace")
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    return bare


def clone(origin: Path, where: Path) -> Path:
    git(origin.parent, "clone", "-q", str(origin), str(where))
    return where


def traced(machine: Machine, tmp_path: Path) -> Path:
    """Put a `plugman` first on the agent's PATH that is the real one with
    PLUGMAN_LAUNCH_TRACE set (Codex passes its servers only some variables): the file each
    server start appends the path it took to (`plan` or `full`)."""
    trace, shim = tmp_path / "trace", tmp_path / "shim"
    shim.mkdir()
    script = shim / "plugman"
    script.write_text(f'#!/bin/sh\nPLUGMAN_LAUNCH_TRACE="{trace}" exec "{BIN}/plugman" "$@"\n')
    script.chmod(0o755)
    machine.env["PATH"] = f"{shim}:{machine.env['PATH']}"
    return trace


def paths_taken(trace: Path) -> list[str]:
    """The paths the server starts took, `mcp run` ones only, in order."""
    lines = trace.read_text().splitlines() if trace.exists() else []
    return [line.split()[0] for line in lines if " mcp run " in f" {line} "]


@pytest.mark.slow
def test_codex_starts_the_plugin_server_with_its_secret(tmp_path: Path, origin: Path) -> None:
    me = Machine(tmp_path / "home", clone(origin, tmp_path / "project"))
    me.plugman("agents", "add", "codex", "--scope", "project")
    me.plugman("marketplace", "add", "./market", "--scope", "project")
    me.plugman("install", f"{PLUGIN}@wx", "--scope", "project", "--config", "api_key=first")
    done = me.plugman("configure", PLUGIN, f"api_key={KEY}", "units=metric", "--scope", "project")
    assert "PLUGMAN_OPT" not in done.stderr and "cannot" not in done.stderr, done.stderr
    # the real Codex starts the server through the launcher, with the values set now: the
    # first start on Codex's own environment (it passes few variables) misses and writes the
    # plan for it, the next one starts from that plan, its key read from the store at start
    trace = traced(me, tmp_path)
    assert {f"key_{digest(KEY)}", "units_metric"} <= me.tools(EXPORTED)
    assert {f"key_{digest(KEY)}", "units_metric"} <= me.tools(EXPORTED)
    assert paths_taken(trace)[-1:] == ["plan"]
    # configure again: Codex's file is not rewritten, the next start gets the new value
    config = me.project / ".codex" / "config.toml"
    before = config.read_bytes()
    me.plugman("configure", PLUGIN, f"api_key={KEY2}", "--scope", "project")
    assert config.read_bytes() == before
    assert f"key_{digest(KEY2)}" in me.tools(EXPORTED)
    assert f"key_{digest(KEY2)}" in me.tools(EXPORTED)
    assert paths_taken(trace)[-1:] == ["plan"]
    # the secret is in no file plugman wrote but the secret store
    for key in (KEY, KEY2):
        assert me.files_holding(key, me.home, me.project) == []
    assert (me.home / ".local" / "share" / "plugman").is_dir()  # its home followed HOME
    text = config.read_text()
    assert f'args = ["mcp", "run", "plugin:{PLUGIN}:weather"]' in text, text
    assert str(me.home) not in text and "store" not in text


@pytest.mark.slow
def test_launcher_refuses_what_is_not_resolved(tmp_path: Path, origin: Path) -> None:
    me = Machine(tmp_path / "home", clone(origin, tmp_path / "project"))
    me.plugman("marketplace", "add", "./market", "--scope", "project")
    me.plugman("install", f"{PLUGIN}@wx", "--scope", "project")  # api_key not given
    name = f"plugin:{PLUGIN}:weather"
    failed = me.plugman("mcp", "run", name, code=1)
    assert "needs-config" in failed.stderr and "plugman configure" in failed.stderr
    assert failed.stdout == ""
    me.plugman("configure", PLUGIN, f"api_key={KEY}", "--scope", "project")
    me.plugman("disable", PLUGIN, "--scope", "project")
    failed = me.plugman("mcp", "run", name, code=1)
    assert "is disabled" in failed.stderr and "plugman enable" in failed.stderr
    failed = me.plugman("mcp", "run", "plugin:nope:x", code=1)
    assert "no such server" in failed.stderr
    assert KEY not in failed.stderr + failed.stdout
    me.plugman("enable", PLUGIN, "--scope", "project")
    managed = me.home / "managed"
    managed.mkdir()
    (managed / "managed-settings.toml").write_text(
        f'deniedMcpServers = [{{ serverName = "{name}" }}]\n'
    )
    me.env["PLUGMAN_MANAGED_DIR"] = str(managed)
    failed = me.plugman("mcp", "run", name, code=1)
    assert "policy" in failed.stderr and failed.stdout == "", failed.stderr


def committed_clean(machine: Machine, *secrets: str) -> list[str]:
    """`git status --porcelain` after an install: what the team would commit, each file free
    of this machine's paths and of secrets."""
    status = git(machine.project, "status", "--porcelain", "--untracked-files=all")
    changed = sorted(line[3:] for line in status.splitlines())
    for rel in changed:
        text = (machine.project / rel).read_text()
        for needle in (str(machine.home), "/store/", sys.executable, *secrets):
            assert needle not in text, (rel, needle, text)
    return changed


MARK = 'mkdir -p "$CLAUDE_PLUGIN_DATA"\necho "$1" >> "$CLAUDE_PLUGIN_DATA/marks"\n'
GUARD = {"matcher": "Bash", "hooks": [{
    "type": "command", "command": 'sh "${CLAUDE_PLUGIN_ROOT}/mark.sh" commit',
    "if": "Bash(git commit:*)",
}]}  # fmt: skip
HOOK = f"plugman hooks exec codex PostToolUse '{PLUGIN}@wx#0'"  # what .codex/hooks.json names


@pytest.fixture
def hooked_origin(tmp_path: Path) -> Path:
    """The team's repository whose plugin also has a conditional hook (security-guidance's
    shape: `PostToolUse` on `Bash`, `if: "Bash(git commit:*)"`) calling a script of its own,
    which appends its argument to a file in the plugin's data folder (under plugman's home)."""
    work = tmp_path / "seed"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    market(work / "market")
    plugin = work / "market" / "plugins" / PLUGIN
    (plugin / "mark.sh").write_text(MARK)
    (plugin / "hooks").mkdir()
    (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"PostToolUse": [GUARD]}}))
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "marketplace")
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    return bare


def codex_hooks(machine: Machine) -> dict[str, str]:
    """Codex's own list of the project's hooks (`hooks/list`): command → trust status."""
    from tests.integration.test_agent_hooks import rpc_hooks

    listed = rpc_hooks(codex_bin(), machine.project, machine.env)
    return {h["command"]: h["trustStatus"] for h in listed}


def codex_turn(machine: Machine, command: str) -> list[str]:
    """One real `codex exec` turn in the project in which the (fake) model runs `command`
    (tests/integration/fake_responses); the lines the plugin's hook has written so far."""
    from tests.integration.fake_responses import codex_exec_args, responses_server

    with responses_server(command) as url:
        done = subprocess.run(
            [str(codex_bin()), *codex_exec_args(url), "run it"], cwd=machine.project,
            env={**machine.env, "FAKE_OPENAI_KEY": "sk-fake"}, capture_output=True, text=True,
            timeout=180, check=False,
        )  # fmt: skip
    said = done.stdout + done.stderr
    assert done.returncode == 0, said[-4000:]
    assert "hook: PostToolUse Completed" in said, said[-4000:]  # Codex ran the launcher
    found = list(Path(machine.env["PLUGMAN_HOME"]).rglob("marks"))
    return found[0].read_text().splitlines() if found else []


@pytest.mark.slow
def test_a_teammates_clone_works(tmp_path: Path, hooked_origin: Path) -> None:
    """The issue's teammate flow: one person installs a plugin with a server, a skill, a
    subagent and a conditional hook at project scope with Codex linked and commits only what
    is meant to be shared; a teammate (another HOME and PLUGMAN_HOME, which the launchers Codex
    starts must find) syncs, configures, approves, and the real Codex in their clone trusts
    the hook, runs it only for `git commit`, exactly once, and connects the server."""
    a, b = tmp_path / "a", tmp_path / "b" / "elsewhere"
    me = Machine(a / "home", clone(hooked_origin, a / "repo"), PLUGMAN_HOME=str(a / "plugman"))
    me.plugman("agents", "add", "codex", "--scope", "project")
    me.plugman("marketplace", "add", "./market", "--scope", "project")
    me.plugman("install", f"{PLUGIN}@wx", "--scope", "project", "--config", f"api_key={KEY}")
    me.plugman("trust", "approve", "--all")
    assert (me.project / ".agents" / "skills" / "forecast" / "SKILL.md").is_file()
    assert list((me.project / ".codex" / "agents").glob("*.toml"))
    changed = committed_clean(me, KEY, str(tmp_path))
    shared = [".codex/config.toml", ".codex/hooks.json", "plugman.lock", "plugman.toml"]
    assert changed == shared, changed
    exclude = (me.project / ".git" / "info" / "exclude").read_text()
    assert "/.agents/skills/forecast" in exclude, exclude
    assert codex_hooks(me) == {HOOK: "trusted"}
    assert f"key_{digest(KEY)}" in me.tools(EXPORTED)
    git(me.project, "add", *changed)
    git(me.project, "commit", "-q", "-m", "weather tools")
    git(me.project, "push", "-q", "origin", "main")

    mate = Machine(b / "home", clone(hooked_origin, b / "wt"), PLUGMAN_HOME=str(b / "ph"))
    assert (mate.project / ".codex" / "hooks.json").is_file()
    mate.plugman("sync")
    mate.plugman("configure", PLUGIN, f"api_key={KEY2}", "--scope", "project")  # their own
    waiting = mate.plugman("mcp", "run", f"plugin:{PLUGIN}:weather", code=1)  # as Codex would
    assert "pending-approval" in waiting.stderr and "trust approve" in waiting.stderr
    assert codex_hooks(mate) == {HOOK: "untrusted"}  # Codex does not run it yet
    mate.plugman("trust", "approve", "--all")
    assert git(mate.project, "status", "--porcelain", "--untracked-files=all") == ""
    assert (mate.project / ".agents" / "skills" / "forecast" / "SKILL.md").is_file()
    assert codex_hooks(mate) == {HOOK: "trusted"}
    git(mate.project, "config", "user.name", "mate")
    git(mate.project, "config", "user.email", "mate@example.com")
    assert codex_turn(mate, "echo hello") == []  # its `if` does not admit another command
    assert codex_turn(mate, "git commit --allow-empty -m second") == ["commit"]  # once
    assert "second" in git(mate.project, "log", "--oneline")  # Codex really committed
    assert f"key_{digest(KEY2)}" in mate.tools(EXPORTED)
    # the committed entries are plugman's in this clone too: uninstall takes them out
    mate.plugman("uninstall", f"{PLUGIN}@wx", "--scope", "project")
    status = git(mate.project, "status", "--porcelain", "--untracked-files=all")
    assert sorted(line[3:] for line in status.splitlines()) == shared, status
    config = (mate.project / ".codex" / "config.toml").read_text()
    assert EXPORTED not in config and HOOK not in codex_hooks(mate)
    assert not (mate.project / ".agents" / "skills" / "forecast").exists()
    assert "forecast" not in (mate.project / ".git" / "info" / "exclude").read_text()


@pytest.mark.slow
def test_mcp_vars_reach_codex_through_a_user_launcher(tmp_path: Path) -> None:
    """A user server whose env names an `mcp vars` variable: Codex's own file (user scope)
    names the launcher with this machine's PLUGMAN_HOME (Codex passes its servers only a few
    variables), and `mcp vars set` takes effect at the next start, the file untouched."""
    project = tmp_path / "project"
    project.mkdir()
    server = tmp_path / "server.py"
    server.write_text(SERVER)
    elsewhere = tmp_path / "plugman-elsewhere"
    me = Machine(tmp_path / "home", project, PLUGMAN_HOME=str(elsewhere), PLUGMAN_SECRETS="file")
    me.plugman("agents", "add", "codex")
    me.plugman("mcp", "add", "wx", "--scope", "user", "-e", "WEATHER_KEY=${WX_TOKEN}",
               "-e", "WEATHER_UNITS=imperial", "--", "python3", str(server))  # fmt: skip
    me.plugman("mcp", "vars", "set", "WX_TOKEN", stdin=KEY)
    config = me.home / ".codex" / "config.toml"
    text = config.read_text()
    assert '"mcp", "run", "wx"' in text and str(elsewhere) in text, text
    assert {f"key_{digest(KEY)}", "units_imperial"} <= me.tools("wx")
    me.plugman("mcp", "vars", "set", "WX_TOKEN", stdin=KEY2)
    assert config.read_text() == text
    assert f"key_{digest(KEY2)}" in me.tools("wx")
    for key in (KEY, KEY2):
        assert me.files_holding(key, me.home, elsewhere, project) == []


@pytest.mark.slow
def test_a_remote_server_needing_a_secret_is_bridged(tmp_path: Path) -> None:
    """A plugin's http server whose header is a sensitive option: Codex's file names the
    launcher, which connects with the key from the store and serves the server over stdio."""
    from tests.integration.test_remote import remote

    with remote(tmp_path, key=KEY) as server:
        manifest = json.loads(json.dumps(MANIFEST))
        headers = {"X-Api-Key": "${user_config.api_key}"}
        manifest["mcpServers"] = {"api": {"type": "http", "url": server.url, "headers": headers}}
        market(tmp_path / "market", manifest)
        project = tmp_path / "project"
        project.mkdir()
        git(project, "init", "-q")
        me = Machine(tmp_path / "home", project)
        me.plugman("agents", "add", "codex", "--scope", "project")
        me.plugman("marketplace", "add", str(tmp_path / "market"))
        done = me.plugman("install", f"{PLUGIN}@wx", "--scope", "project", "--config",
                          f"api_key={KEY}")  # fmt: skip
        assert "PLUGMAN_OPT" not in done.stderr, done.stderr
        config = (me.project / ".codex" / "config.toml").read_text()
        assert f'args = ["mcp", "run", "plugin:{PLUGIN}:api"]' in config, config
        assert "add" in me.tools("plugin_weather-tools_api")
        assert me.files_holding(KEY, me.home, me.project) == []
        me.plugman("configure", PLUGIN, "api_key=wrong-key", "--scope", "project")
        status = me.codex_servers()["plugin_weather-tools_api"]
        assert status["runtimeStatus"] == "failed", status
        failed = me.plugman("mcp", "run", f"plugin:{PLUGIN}:api", code=1)
        assert "HTTP 401" in failed.stderr and "plugman mcp login" in failed.stderr

"""A sensitive value never reaches argv, an error or a log (issue 33, "secrets stay secret").

Attacks on the launchers, for real: `python -m plugman` subprocesses with their own
PLUGMAN_HOME and the file secret store, a local marketplace whose plugin asks for a sensitive
option (`userConfig.api_key`, given with `install --config`), and `plugman mcp vars` values.

- A server entry whose args carry the secret (`--token ${user_config.api_key}`, or an
  `mcp vars` value in args) would put it on the server's command line, which every user of the
  machine reads in `ps` (/proc/PID/cmdline): `plugman mcp run` refuses to start it, saying how
  to pass it in the environment; the same server taking the value from its `env` starts, and
  its real /proc/PID/cmdline holds no secret while its /proc/PID/environ does.
- A hook handler whose args carry it is not run by `plugman hooks exec`; from its env it runs.
- The launcher's errors (a remote server that cannot be reached, whose expanded URL holds the
  key) never show the value: agents keep a launcher's stderr in their logs.

Every command output here is also scanned by tests/conftest.py's `secret_scan` for the planted
option value.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PLANTED_CONFIG

KEY = PLANTED_CONFIG["api_key"]
DB_PASSWORD = "db-planted-password-42c9"
SERVER = """
import os, sys
with open(sys.argv[1], "w") as out:
    out.write(str(os.getpid()))
sys.stdin.read()
"""
HOOK = """
import os, sys
with open(sys.argv[1], "w") as out:
    out.write("ran")
"""


def manifest(mark: Path, hook_mark: Path, in_args: bool) -> dict[str, Any]:
    """The plugin: one stdio server and one SessionStart hook, each given the sensitive
    option either as an argument (`in_args`) or in its environment."""
    secret = "${user_config.api_key}"
    server: dict[str, Any] = {
        "command": sys.executable,
        "args": ["${CLAUDE_PLUGIN_ROOT}/server.py", str(mark)],
    }
    hook: dict[str, Any] = {
        "type": "command",
        "command": sys.executable,
        "args": ["${CLAUDE_PLUGIN_ROOT}/hook.py", str(hook_mark)],
    }
    if in_args:
        server["args"] += ["--token", secret]
        hook["args"] += ["--token", secret]
    else:
        server["env"] = {"WEATHER_TOKEN": secret}
        hook["env"] = {"WEATHER_TOKEN": secret}
    return {
        "name": "weather",
        "version": "1.0.0",
        "description": "Weather data",
        "userConfig": {
            "api_key": {"type": "string", "title": "API key", "description": "Your key",
                        "sensitive": True, "required": True},
        },
        "mcpServers": {"local": server},
        "hooks": {"SessionStart": [{"hooks": [hook]}]},
    }  # fmt: skip


class Machine:
    """One isolated machine: HOME, PLUGMAN_HOME, a project, and every output seen."""

    def __init__(self, tmp: Path, plugman_home: Path, seen: list[str]) -> None:
        self.tmp, self.seen = tmp, seen
        self.home, self.project = tmp / "home", tmp / "project"
        self.home.mkdir()
        self.project.mkdir()
        self.vars = {
            **os.environ,
            "HOME": str(self.home),
            "PLUGMAN_HOME": str(plugman_home),
            "PLUGMAN_SECRETS": "file",
        }

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "plugman", "--project", str(self.project), *args]

    def run(self, *args: str, code: int = 0, stdin: str = "") -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            self.argv(*args), env=self.vars, cwd=self.project, input=stdin,
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        self.seen += [done.stdout, done.stderr]
        assert done.returncode == code, (args, done.returncode, done.stdout, done.stderr)
        return done

    def plugin(self, in_args: bool) -> tuple[Path, Path]:
        """Install the weather plugin (its option given); the files its server and its hook
        write when they start."""
        mark, hook_mark = self.tmp / "server-started", self.tmp / "hook-ran"
        root = self.tmp / "market"
        plugin = root / "weather"
        (plugin / ".claude-plugin").mkdir(parents=True)
        data = manifest(mark, hook_mark, in_args)
        (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps(data))
        (plugin / "server.py").write_text(SERVER)
        (plugin / "hook.py").write_text(HOOK)
        (root / ".claude-plugin").mkdir()
        catalog = {"name": "wx", "owner": {"name": "t"},
                   "plugins": [{"name": "weather", "source": "./weather"}]}  # fmt: skip
        (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
        self.run("marketplace", "add", str(root))
        self.run("install", "weather@wx", "--config", f"api_key={KEY}")
        return mark, hook_mark

    def launch(self, name: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.argv("mcp", "run", name), env=self.vars, cwd=self.project,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip


@pytest.fixture
def machine(tmp_path: Path, isolated_home: Path, secret_scan: list[str]) -> Machine:
    return Machine(tmp_path, isolated_home, secret_scan)


def started(machine: Machine, process: subprocess.Popen[str], mark: Path) -> tuple[bytes, bytes]:
    """The real server's /proc/PID/cmdline and /proc/PID/environ, read while it runs (the
    launcher execs it: the same PID)."""
    deadline = time.monotonic() + 30
    while not mark.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert mark.exists(), f"the server never started: {process.communicate(timeout=10)}"
        assert int(mark.read_text()) == process.pid
        proc = Path("/proc") / str(process.pid)
        return (proc / "cmdline").read_bytes(), (proc / "environ").read_bytes()
    finally:
        out, err = process.communicate("", timeout=30)
        machine.seen += [out, err]


def test_plugin_secret_in_server_args_is_refused(machine: Machine) -> None:
    """Attack: a plugin's server entry puts its sensitive option in args (`--token
    ${user_config.api_key}`): started by `plugman mcp run`, the key would sit in the
    server's /proc/PID/cmdline for every local user. Invariant (runtime.launch.
    refuse_secret_argv): not started, exit 1, an error naming where and how to pass it in
    the environment, and the key in no output."""
    mark, _ = machine.plugin(in_args=True)
    done = machine.run("mcp", "run", "plugin:weather:local", code=1)
    assert "would carry a secret value on the command line" in done.stderr
    assert "args[3]" in done.stderr and "CLAUDE_PLUGIN_OPTION_" in done.stderr
    assert "Traceback" not in done.stderr
    assert not mark.exists(), "the server started with the key in its argv"


def test_plugin_secret_in_server_env_starts_with_a_clean_cmdline(machine: Machine) -> None:
    """The legitimate variant: the same option in the server's `env` starts it; its real
    /proc/PID/cmdline (what `ps` shows every user) has no key, its environment has it."""
    mark, _ = machine.plugin(in_args=False)
    cmdline, environ = started(machine, machine.launch("plugin:weather:local"), mark)
    assert KEY.encode() not in cmdline
    assert b"server.py" in cmdline
    assert f"WEATHER_TOKEN={KEY}".encode() in environ.split(b"\0")


@pytest.mark.parametrize("in_args", [True, False], ids=["args-refused", "env-runs"])
def test_hook_secret_in_args(machine: Machine, in_args: bool) -> None:
    """Attack: an exec-form hook handler with the sensitive option in its args, run by the
    hook launcher (`plugman hooks exec`, what agents other than Claude Code run): its argv
    would show the key. Invariant (runtime.hooks.secret_in_argv): not run, a non-blocking
    error (exit 1) saying why, no key in it; from its `env` the same hook runs."""
    _, hook_mark = machine.plugin(in_args=in_args)
    event = json.dumps({"hook_event_name": "SessionStart", "source": "startup"})
    args = ("hooks", "exec", "gemini", "SessionStart", "weather@wx#0")
    if in_args:
        done = machine.run(*args, code=1, stdin=event)
        assert "would carry a secret value" in done.stderr
        assert not hook_mark.exists(), "the hook ran with the key in its argv"
    else:
        machine.run(*args, stdin=event)
        assert hook_mark.read_text() == "ran"


@pytest.mark.parametrize("in_args", [True, False], ids=["args-refused", "env-runs"])
def test_mcp_vars_secret_in_args(machine: Machine, in_args: bool) -> None:
    """Attack: the user's own server (`mcp add`) names an `mcp vars` value (kept in the
    secret store) in its args: `plugman mcp run` would put it on the command line. Invariant:
    refused, with the `mcp add --env` way in the hint; the same variable in `env` starts, with
    a clean /proc/PID/cmdline."""
    mark = machine.tmp / "db-started"
    (machine.tmp / "server.py").write_text(SERVER)
    machine.run("mcp", "vars", "set", "DB_PASSWORD", stdin=DB_PASSWORD + "\n")
    command = [sys.executable, str(machine.tmp / "server.py"), str(mark)]
    if in_args:
        machine.run("mcp", "add", "db", "--", *command, "--password", "${DB_PASSWORD}")
        done = machine.run("mcp", "run", "db", code=1)
        assert "would carry a secret value on the command line" in done.stderr
        assert "--env VAR=${VAR}" in done.stderr
        assert DB_PASSWORD not in done.stderr + done.stdout
        assert not mark.exists()
        return
    machine.run("mcp", "add", "db", "--env", "DB_PASSWORD=${DB_PASSWORD}", "--", *command)
    cmdline, environ = started(machine, machine.launch("db"), mark)
    assert DB_PASSWORD.encode() not in cmdline
    assert f"DB_PASSWORD={DB_PASSWORD}".encode() in environ.split(b"\0")


def test_launcher_error_does_not_show_the_secret(machine: Machine) -> None:
    """Attack on the launcher's error, which agents keep in their logs: a remote server whose
    URL carries an `mcp vars` key (`?api_key=${API_TOKEN}`) cannot be reached; the error
    quotes the URL as expanded. Invariant (output.common.error through config.redact.message):
    the key is masked in the error, the server and host are
    still named."""
    machine.run("mcp", "vars", "set", "API_TOKEN", stdin="tok-planted-launcher-77e1\n")
    url = "http://127.0.0.1:9/mcp?api_key=${API_TOKEN}"
    machine.run("mcp", "add", "--transport", "http", "remote", url)
    done = machine.run("mcp", "run", "remote", code=1)
    said = done.stderr + done.stdout
    assert "tok-planted-launcher-77e1" not in said
    assert "remote" in done.stderr and "127.0.0.1:9" in done.stderr

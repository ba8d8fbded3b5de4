"""A server.json's secret header becomes a `${VAR}` reference (never a value), and the value the
user keeps with `plugman mcp vars set` fills it where plugman runs the server: the real remote
server (tests/servers/remote_server.py, which demands X-Api-Key) is reached with it, and the
value shows in no output and in no file but the secret store."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_gateway import plugman_argv
from tests.integration.test_remote import remote

KEY = "vars-key-6b0e4f9a2c"  # planted: must appear in no output
VAR = "WEB_X_API_KEY"


def plugman(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> Any:
    done = subprocess.run(
        plugman_argv(*args, "--json"),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert KEY not in done.stdout + done.stderr, args
    assert done.returncode == 0, (args, done.stderr)
    return json.loads(done.stdout)


def _server_json(tmp_path: Path, url: str) -> Path:
    header = {"name": "X-Api-Key", "isRequired": True, "isSecret": True}
    document = {
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
        "name": "io.example/web",
        "description": "Adds numbers, behind an API key.",
        "version": "1.0.0",
        "remotes": [{"type": "streamable-http", "url": url, "headers": [header]}],
    }
    path = tmp_path / "server.json"
    path.write_text(json.dumps(document))
    return path


def _on_a_terminal(argv: list[str], answer: str) -> bytes:
    """Run plugman on a real pty, answer its value prompt with `answer`; all it showed (it
    must exit 0)."""
    import os
    import pty
    import select

    pid, fd = pty.fork()
    if pid == 0:  # the child: plugman on the pty
        os.execvpe(argv[0], argv, dict(os.environ))
    seen = b""
    while b"(empty: set it in the environment instead): " not in seen:
        ready, _, _ = select.select([fd], [], [], 60)
        assert ready, seen
        seen += os.read(fd, 1024)
    os.write(fd, answer.encode() + b"\n")
    while True:
        ready, _, _ = select.select([fd], [], [], 60)
        try:
            chunk = os.read(fd, 1024) if ready else b""
        except OSError:  # the child closed the pty
            break
        if not chunk:
            break
        seen += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, seen
    return seen


def _tools_through(argv: list[str]) -> set[str]:
    """The tools a stdio MCP server started by `argv` lists (initialize, then tools/list)."""
    messages = [
        {"id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
         "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"method": "notifications/initialized"},
        {"id": 2, "method": "tools/list", "params": {}},
    ]  # fmt: skip
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for message in messages:
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            proc.stdin.flush()
        while line := proc.stdout.readline():
            answer = json.loads(line)
            if answer.get("id") == 2:
                assert "result" in answer, answer
                return {tool["name"] for tool in answer["result"]["tools"]}
        raise AssertionError(f"no tools/list answer: {proc.stderr.read() if proc.stderr else ''}")
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_a_value_answered_at_mcp_add_from_reaches_a_linked_agent(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex linked (by its files), `mcp add --from` on a terminal with the secret answered at
    its prompt: Codex's file names the launcher (plugman alone holds the value), not a bare
    `${VAR}` Codex cannot fill, and the launcher Codex would start reaches the server with the
    key. The key is in no file but the secret store, no output and no argv."""
    monkeypatch.delenv(VAR, raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "project"
    project.mkdir()
    at = ("--project", str(project))
    with remote(tmp_path, "http", key=KEY) as server:
        plugman(*at, "agents", "add", "codex")
        source = str(_server_json(tmp_path, server.url))
        seen = _on_a_terminal(plugman_argv(*at, "mcp", "add", "web", "--scope", "user",
                                           "--from", source), KEY)  # fmt: skip
        assert KEY.encode() not in seen
        config = (home / ".codex" / "config.toml").read_text()
        assert '"mcp", "run", "web"' in config, config
        assert VAR not in config and KEY not in config
        assert "add" in _tools_through(plugman_argv(*at, "mcp", "run", "web"))
    files = [p for root in (isolated_home, home, project) for p in root.rglob("*") if p.is_file()]
    holding = [p.name for p in files if KEY in p.read_bytes().decode("utf-8", "replace")]
    assert holding in ([], ["secrets.json"])  # the keychain, or its 0600 file


def test_a_kept_value_fills_the_reference_and_never_shows(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(VAR, raising=False)
    project = tmp_path / "project"
    project.mkdir()
    at = ("--project", str(project))
    with remote(tmp_path, "http", key=KEY) as server:
        added = plugman(*at, "mcp", "add", "web", "--from", str(_server_json(tmp_path, server.url)))
        assert added["needs"] == [VAR]
        missing = plugman(*at, "config", "resolve")
        assert "web" not in missing["mcpServers"]
        assert [d["message"] for d in missing["diagnostics"]] == [
            f"server 'web' from local ({project}/.plugman/local.toml) dropped: unset: {VAR}"
        ]

        assert plugman(*at, "mcp", "vars", "set", VAR, stdin=KEY + "\n")["changed"] is True
        assert plugman(*at, "mcp", "vars", "list")["variables"] == [
            {"name": VAR, "environment_overrides": False}
        ]
        resolved = plugman(*at, "config", "resolve")["mcpServers"]["web"]
        assert resolved["headers"]["X-Api-Key"] not in (KEY, "${" + VAR + "}")  # masked
        probed = {s["name"]: s for s in plugman(*at, "mcp", "probe")["servers"]}
        assert probed["web"]["state"] == "connected", probed["web"]

        files = [p for p in isolated_home.rglob("*") if p.is_file()]
        holding = [p.name for p in files if KEY in p.read_bytes().decode("utf-8", "replace")]
        assert holding in ([], ["secrets.json"])  # the keychain, or its 0600 file
        entry = (project / ".plugman" / "local.toml").read_text()
        assert "${" + VAR + "}" in entry and KEY not in entry

        assert plugman(*at, "mcp", "vars", "unset", VAR)["changed"] is True
        assert "web" not in plugman(*at, "config", "resolve")["mcpServers"]
        assert plugman(*at, "mcp", "vars", "list")["variables"] == []


def test_bad_names_and_empty_values_are_refused(isolated_home: Path) -> None:
    done = subprocess.run(
        plugman_argv("mcp", "vars", "set", "9lives"), input="x", capture_output=True, text=True
    )
    assert done.returncode == 2 and "not a variable name" in done.stderr
    done = subprocess.run(
        plugman_argv("mcp", "vars", "set", "EMPTY"), input="", capture_output=True, text=True
    )
    assert done.returncode == 2 and "no value given for EMPTY" in done.stderr
    assert not (isolated_home / "state" / "server-vars.json").exists()


def test_mcp_add_from_asks_a_terminal_for_what_it_needs(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal (a real pty), `mcp add --from` asks for each value without echo and keeps
    it: the answer is not shown back, and the variable is then kept."""

    monkeypatch.delenv(VAR, raising=False)
    source = _server_json(tmp_path, "http://127.0.0.1:9/mcp")
    seen = _on_a_terminal(plugman_argv("--project", str(tmp_path), "mcp", "add", "web", "--from",
                                       str(source)), KEY)  # fmt: skip
    assert KEY.encode() not in seen and b"WEB_X_API_KEY" in seen
    assert plugman("mcp", "vars", "list")["variables"] == [
        {"name": VAR, "environment_overrides": False}
    ]

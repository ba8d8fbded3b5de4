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
    import os
    import pty
    import select

    monkeypatch.delenv(VAR, raising=False)
    source = _server_json(tmp_path, "http://127.0.0.1:9/mcp")
    pid, fd = pty.fork()
    if pid == 0:  # the child: plugman on the pty
        argv = plugman_argv("--project", str(tmp_path), "mcp", "add", "web", "--from", str(source))
        os.execvpe(argv[0], argv, dict(os.environ))
    seen = b""
    while b"(empty: set it in the environment instead): " not in seen:
        ready, _, _ = select.select([fd], [], [], 60)
        assert ready, seen
        seen += os.read(fd, 1024)
    os.write(fd, KEY.encode() + b"\n")
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
    assert KEY.encode() not in seen and b"WEB_X_API_KEY" in seen
    assert plugman("mcp", "vars", "list")["variables"] == [
        {"name": VAR, "environment_overrides": False}
    ]

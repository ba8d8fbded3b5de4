"""The gateway's first answers from memory (issue 36, plugman.runtime.gateway.early).

`plugman mcp serve` (a subprocess, its stdin and stdout pipes as an agent starts it) in front
of the notes server and a server of the test's own, spoken to in raw JSON-RPC lines. After one
session that saw every server up, a later one answers `initialize` and the first lists from
memory (its log says so) with exactly what the full server answers (the same gateway with
PLUGMAN_GATEWAY_EARLY=0), then hands over: a call right after
works, and lists after it come from the full server, still the same.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from plugman.runtime.gateway import early
from tests.integration.test_gateway import NOTES, notes, plugman_argv

DEADLINE = 60.0
LISTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
EXTRA = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("extra", instructions="The extra server's own instructions.")


@server.tool()
def exfiltrate(text: str) -> str:
    \"\"\"Send text away.\"\"\"
    return text


@server.prompt()
def greet(name: str) -> str:
    \"\"\"Say hello.\"\"\"
    return f"hello {name}"


@server.resource("extra://readme", name="readme")
def readme() -> str:
    return "read me"


@server.resource("extra://items/{item}", name="item")
def item(item: str) -> str:
    return item


server.run()
"""


def initialize(version: str = "2025-06-18") -> dict[str, Any]:
    client = {"name": "t", "version": "1"}
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": client}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def request(ident: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}}


def lists(first: int = 2) -> list[dict[str, Any]]:
    return [request(first + n, method) for n, method in enumerate(LISTS)]


def echo(ident: int) -> dict[str, Any]:
    return request(ident, "tools/call", {"name": "notes__echo", "arguments": {"text": "hi"}})


class Raw:
    """A gateway over pipes, spoken to one JSON-RPC line at a time."""

    def __init__(self, project: Path, env: dict[str, str] | None = None) -> None:
        argv = plugman_argv("--project", str(project), "mcp", "serve")
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )
        self.pending = b""
        self.answers: dict[int, dict[str, Any]] = {}

    def send(self, *messages: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        self.process.stdin.flush()

    def answer(self, ident: int) -> dict[str, Any]:
        """The response to request `ident` (notifications in between are skipped)."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        end = time.monotonic() + DEADLINE
        while True:
            while b"\n" in self.pending:
                line, _, self.pending = self.pending.partition(b"\n")
                found = json.loads(line)
                if "id" in found:
                    self.answers[found["id"]] = found
            if ident in self.answers:
                return self.answers.pop(ident)
            ready, _, _ = select.select([fd], [], [], max(0.0, end - time.monotonic()))
            assert ready, f"no answer to request {ident} within {DEADLINE:g} s"
            chunk = os.read(fd, 1 << 16)
            assert chunk, f"the gateway ended before answering request {ident}"
            self.pending += chunk

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(DEADLINE)


def served_in_full(project: Path, *messages: dict[str, Any]) -> list[Any]:
    """The full server's answers to `messages` (PLUGMAN_GATEWAY_EARLY=0: no early path)."""
    gateway = Raw(project, {early.OFF_ENV: "0"})
    gateway.send(*messages)
    found = [gateway.answer(m["id"]) for m in messages if "id" in m]
    gateway.close()
    return found


def configure(home: Path, **scripts: Path) -> None:
    """User scope: one stdio server per name, running that Python script."""
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "plugman.toml").write_text(
        "".join(
            f"[mcp_servers.{name}]\ncommand = {json.dumps(sys.executable)}\n"
            f"args = [{json.dumps(str(script))}]\n"
            for name, script in scripts.items()
        )
    )


def learn(project: Path) -> None:
    """One session that calls a tool (so every backend came up and was remembered)."""
    gateway = Raw(project)
    gateway.send(initialize(), INITIALIZED, request(2, "tools/list"), echo(3))
    assert gateway.answer(3)["result"]["content"][0]["text"] == "hi"
    gateway.close()


def early_lines(home: Path) -> list[str]:
    log = (home / "state" / "logs" / "gateway.log").read_text()
    return [line for line in log.splitlines() if "answered from memory" in line]


def setup(tmp_path: Path, home: Path) -> Path:
    extra = tmp_path / "extra.py"
    extra.write_text(EXTRA)
    configure(home, notes=NOTES, extra=extra)
    project = tmp_path / "project"
    project.mkdir()
    learn(project)
    return project


def test_the_handshake_versions_are_the_sdks() -> None:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    assert early.HANDSHAKE == HANDSHAKE_PROTOCOL_VERSIONS


@pytest.mark.parametrize("version", early.HANDSHAKE)
def test_the_early_answers_are_the_full_servers(
    tmp_path: Path, isolated_home: Path, version: str
) -> None:
    project = setup(tmp_path, isolated_home)
    before = len(early_lines(isolated_home))

    gateway = Raw(project)
    gateway.send(initialize(version))
    opened = gateway.answer(1)
    gateway.send(INITIALIZED, *lists())
    listed = [gateway.answer(n) for n in range(2, 2 + len(LISTS))]
    gateway.send(echo(9), request(10, "tools/list"))
    called, again = gateway.answer(9), gateway.answer(10)
    gateway.send(request(11, "ping"))
    gateway.answer(11)
    gateway.close()
    assert gateway.answers == {}  # initialize was answered once: the replayed one is not sent

    said = early_lines(isolated_home)[before:]
    assert len(said) == 1 and "initialize, tools/list, prompts/list, resources/list" in said[0]
    assert called["result"]["content"][0]["text"] == "hi"
    assert again == {**listed[0], "id": 10}  # the full server's list, after the hand-over
    full = served_in_full(project, initialize(version), INITIALIZED, *lists())
    assert [opened, *listed] == full
    assert len(early_lines(isolated_home)) == before + 1  # turned off: no early answers
    tools = {tool["name"] for tool in listed[0]["result"]["tools"]}
    assert tools == notes("notes__") | {"extra__exfiltrate"}
    assert "The extra server's own instructions." in opened["result"]["instructions"]


def test_a_client_starting_otherwise_is_handed_over_at_once(
    tmp_path: Path, isolated_home: Path
) -> None:
    """A first message the early path does not answer (an unknown protocol version here) goes to
    the full server as it came."""
    project = setup(tmp_path, isolated_home)
    before = len(early_lines(isolated_home))
    gateway = Raw(project)
    gateway.send(initialize("2099-01-01"))
    opened = gateway.answer(1)
    gateway.send(INITIALIZED, echo(2))
    called = gateway.answer(2)
    gateway.close()
    assert opened["result"]["protocolVersion"] in early.HANDSHAKE
    assert called["result"]["content"][0]["text"] == "hi"
    assert early_lines(isolated_home)[before:] == []

"""The gateway's first list is complete for a client that lists once (issue 24).

A real `mcp` SDK client lists once, right after initialize, from `plugman mcp serve` (a
subprocess) in front of the notes server and a server that sleeps SLOW_DELAY seconds before it
serves (`slow_server`: it writes `slow.up` once it is about to serve, so a test knows whether
it could have answered yet). The first session ever waits for it (within `--first-list-wait`);
a later one lists what it offered then, at once, before it is up; a call to one of those tools
waits for it; a catalog that changed since is announced, and a server that fails is withdrawn.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.integration.test_gateway import NOTES, notes, plugman_argv, text

SLOW_DELAY = 3.0
SESSION_TIMEOUT = 120
SLOW_SERVER = """
import json, pathlib, sys, time

here = pathlib.Path(__file__).parent
plan = json.loads((here / "slow.json").read_text())
time.sleep(plan["delay"])
if plan.get("fail"):
    sys.exit(3)
from mcp.server.mcpserver import MCPServer

server = MCPServer("slow")


def answer(name):
    return lambda: f"{name} answered"


for name in plan["tools"]:
    server.add_tool(answer(name), name=name, description=f"the {name} tool")
(here / "slow.up").write_text("up")
server.run()
"""
SECRET = "slow-secret-value-0123456789"


def slow_server(folder: Path, delay: float, tools: list[str], fail: bool = False) -> Path:
    """A stdio MCP server (in `folder`) that sleeps `delay` seconds, then serves `tools` (each
    answers `<name> answered`), or exits 3 with `fail`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "slow.json").write_text(json.dumps({"delay": delay, "tools": tools, "fail": fail}))
    (folder / "slow.up").unlink(missing_ok=True)
    script = folder / "slow_server.py"
    script.write_text(SLOW_SERVER)
    return script


def configure(home: Path, slow: Path) -> None:
    """User scope: the notes server and the slow one (with an env value never to be kept)."""
    lines = []
    for name, script in (("notes", NOTES), ("slow", slow)):
        lines += [
            f"[mcp_servers.{name}]",
            f"command = {json.dumps(sys.executable)}",
            f"args = [{json.dumps(str(script))}]",
        ]
    lines += ["[mcp_servers.slow.env]", f'SLOW_TOKEN = "{SECRET}"']
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "plugman.toml").write_text("\n".join(lines) + "\n")


async def first_list(
    tmp_path: Path, wait: str, then: Any = None, seen: list[Any] | None = None
) -> set[str]:
    """The tool names of the one list a client asks for right after initialize; `then(client)`
    runs after it, in the same session."""
    from mcp import Client, StdioServerParameters, stdio_client

    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    argv = plugman_argv("--project", str(project), "mcp", "serve", "--first-list-wait", wait)
    env = {**os.environ, "PLUGMAN_GATEWAY_BACKOFF": "30"}
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)

    async def on_message(message: Any) -> None:
        if seen is not None:
            seen.append(message)

    with (tmp_path / "gateway.stderr").open("a") as errlog:
        client = Client(
            stdio_client(params, errlog=errlog),
            mode="legacy",
            read_timeout_seconds=60,
            message_handler=on_message,
        )
        with anyio.fail_after(SESSION_TIMEOUT):
            async with client:
                listed = {tool.name for tool in (await client.list_tools()).tools}
                if then is not None:
                    await then(client, listed)
    return listed


async def changed(seen: list[Any], deadline: float = 60) -> None:
    from mcp import types

    with anyio.fail_after(deadline):
        while not any(isinstance(m, types.ToolListChangedNotification) for m in seen):
            await anyio.sleep(0.1)


@pytest.mark.slow
def test_a_client_listing_once_sees_every_tool(tmp_path: Path, isolated_home: Path) -> None:
    folder = tmp_path / "slow"
    script = slow_server(folder, SLOW_DELAY, ["alpha", "beta"])
    configure(isolated_home, script)
    everything = notes("notes__") | {"slow__alpha", "slow__beta"}
    memory = isolated_home / "state" / "gateway-memory.json"

    # The first session ever: nothing remembered, so the list waits for the slow server.
    assert anyio.run(first_list, tmp_path, "60") == everything
    kept = memory.read_text()
    assert "the alpha tool" in kept and SECRET not in kept and "SLOW_TOKEN" not in kept

    # A later session, never waiting: listed from memory while the server is still asleep.
    slow_server(folder, SLOW_DELAY, ["alpha", "beta"])

    async def before_it_is_up(client: Any, listed: set[str]) -> None:
        assert not (folder / "slow.up").exists(), "the slow server was up: nothing was recalled"
        called = await client.call_tool("slow__alpha", {})  # waits for the server
        assert (called.is_error, text(called)) == (False, "alpha answered")

    assert anyio.run(first_list, tmp_path, "0", before_it_is_up) == everything


@pytest.mark.slow
def test_a_changed_catalog_is_announced_and_a_failed_server_withdrawn(
    tmp_path: Path, isolated_home: Path
) -> None:
    folder = tmp_path / "slow"
    configure(isolated_home, slow_server(folder, 0, ["alpha", "beta"]))
    anyio.run(first_list, tmp_path, "60")  # remembered: alpha, beta

    slow_server(folder, SLOW_DELAY, ["alpha", "gamma"])  # same entry, another catalog
    seen: list[Any] = []

    async def real_catalog(client: Any, listed: set[str]) -> None:
        await changed(seen)
        now = {tool.name for tool in (await client.list_tools()).tools}
        assert {"slow__alpha", "slow__gamma"} <= now and "slow__beta" not in now
        gone = await client.call_tool("slow__beta", {})
        assert gone.is_error and "Unknown tool: slow__beta" in text(gone)

    first = anyio.run(first_list, tmp_path, "0", real_catalog, seen)
    assert {"slow__alpha", "slow__beta"} <= first  # what it offered last time

    slow_server(folder, 1, ["alpha", "gamma"], fail=True)
    seen = []

    async def withdrawn(client: Any, listed: set[str]) -> None:
        await changed(seen)
        now = {tool.name for tool in (await client.list_tools()).tools}
        assert now == notes("notes__"), "a server that failed kept its remembered tools"

    first = anyio.run(first_list, tmp_path, "0", withdrawn, seen)
    assert {"slow__alpha", "slow__gamma"} <= first


@pytest.mark.slow
def test_a_changed_entry_is_not_recalled_and_the_wait_is_bounded(
    tmp_path: Path, isolated_home: Path
) -> None:
    folder = tmp_path / "slow"
    configure(isolated_home, slow_server(folder, 0, ["alpha"]))
    anyio.run(first_list, tmp_path, "60")
    moved = tmp_path / "moved"
    configure(isolated_home, slow_server(moved, 30, ["alpha"]))  # another command line
    assert anyio.run(first_list, tmp_path, "1") == notes("notes__")  # waited 1 s, not 30

    failing = tmp_path / "failing"
    configure(isolated_home, slow_server(failing, 0, ["alpha"], fail=True))
    started = time.monotonic()
    assert anyio.run(first_list, tmp_path, "90") == notes("notes__")
    assert time.monotonic() - started < 60, "the list waited out the budget for a failed server"

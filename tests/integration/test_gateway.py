"""`plugman mcp serve` for real: the gateway as a subprocess, real backends, a real client.

Backends: the sample notes server over stdio (started by the gateway from a user-scope
`[mcp_servers.notes]` entry) and a second notes server over streamable HTTP that the test
starts, kills and restarts on the same port. A PreToolUse hook in the user plugman.toml blocks
`notes__delete_note`. Every wait is bounded; polls have deadlines.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

REPO = Path(__file__).resolve().parents[2]
NOTES = REPO / "sample-plugins" / "plugins" / "notes-server" / "server" / "notes_server.py"
NOTES_TOOLS = {"add_note", "list_notes", "get_note", "delete_note", "echo", "add"}
START_TIMEOUT = 60.0  # a loaded 2-core box can take seconds to start a Python server
READ_TIMEOUT = 30.0
HOOK = "echo blocked-by-test >&2; exit 2"


def plugman_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "plugman", *args]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    end = time.monotonic() + START_TIMEOUT
    while True:
        assert proc.poll() is None, log.read_text()
        assert time.monotonic() < end, "the notes server did not listen in time"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)


class HttpNotes:
    """The notes server over streamable HTTP on a fixed port, started and killed at will."""

    def __init__(self, port: int, log: Path) -> None:
        self.port, self.log = port, log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        cmd = [
            sys.executable,
            str(NOTES),
            "--transport",
            "streamable-http",
            "--port",
            str(self.port),
        ]
        with self.log.open("ab") as err:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=err)
        wait_for_port(self.port, self.proc, self.log)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


@contextmanager
def http_notes(tmp_path: Path) -> Iterator[HttpNotes]:
    server = HttpNotes(free_port(), tmp_path / "web-notes.log")
    server.start()
    try:
        yield server
    finally:
        server.kill()


def configure(
    home: Path,
    web_port: int | None,
    hooks: dict[str, list[tuple[str, str]]],
    scripts: dict[str, Path] | None = None,
) -> None:
    """User scope: the notes server over stdio, maybe the HTTP one, more stdio servers (name:
    Python script), and hooks by event as (matcher, command) pairs."""
    lines = []
    for name, script in {"notes": NOTES, **(scripts or {})}.items():
        lines += [
            f"[mcp_servers.{name}]",
            f"command = {json.dumps(sys.executable)}",
            f"args = [{json.dumps(str(script))}]",
            "",
        ]
    if web_port is not None:
        url = f"http://127.0.0.1:{web_port}/mcp"
        lines += ["[mcp_servers.web]", 'type = "http"', f"url = {json.dumps(url)}", ""]
    lines += ["[hooks]"]
    for event, pairs in hooks.items():
        groups = [
            f'{{ matcher = {json.dumps(matcher)}, hooks = [{{ type = "command", '
            f"command = {json.dumps(command)} }}] }}"
            for matcher, command in pairs
        ]
        lines.append(f"{event} = [{', '.join(groups)}]")
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "plugman.toml").write_text("\n".join(lines) + "\n")


GROWING = """
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("growing")


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    \"\"\"Add a tool called `name`, and say so.\"\"\"
    server.add_tool(lambda: "grown", name=name, description="added at run time")
    await ctx.session.send_tool_list_changed()
    return "ok"


server.run()
"""
BLOCK_DELETE = {"PreToolUse": [("mcp__notes__delete_note", HOOK)]}
REWRITE = """
import json, sys
event = json.load(sys.stdin)
text = event["tool_input"]["text"].upper()
output = {"hookEventName": "PreToolUse", "permissionDecision": "allow"}
output["updatedInput"] = {"text": text}
print(json.dumps({"hookSpecificOutput": output}))
"""


@asynccontextmanager
async def gateway(
    tmp_path: Path, *options: str, seen: list[Any] | None = None, backoff: str = "0.5"
) -> AsyncIterator[Any]:
    """A client session with `plugman mcp serve` started as a subprocess over stdio."""
    from mcp import Client, StdioServerParameters, stdio_client

    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    env = {**os.environ, "PLUGMAN_GATEWAY_BACKOFF": backoff}
    argv = plugman_argv("--project", str(project), "mcp", "serve", *options)
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)

    async def on_message(message: Any) -> None:
        if seen is not None:
            seen.append(message)

    stderr = tmp_path / "gateway.stderr"
    with stderr.open("a") as errlog:
        client = Client(
            stdio_client(params, errlog=errlog),
            mode="legacy",
            read_timeout_seconds=READ_TIMEOUT,
            message_handler=on_message,
        )
        async with client:
            yield client
    assert "Traceback" not in stderr.read_text(), stderr.read_text()


async def tool_names(client: Any) -> set[str]:
    listed = await client.list_tools(cache_mode="refresh")
    return {tool.name for tool in listed.tools}


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


async def poll(client: Any, wanted: Any, deadline: float) -> set[str]:
    end = time.monotonic() + deadline
    while True:
        names = await tool_names(client)
        if wanted(names) or time.monotonic() > end:
            return names
        await anyio.sleep(0.2)


async def told(seen: list[Any], deadline: float = 10) -> bool:
    """Whether a ToolListChanged notification arrived (it may trail the list that shows it)."""
    from mcp import types

    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if any(isinstance(m, types.ToolListChangedNotification) for m in seen):
            return True
        await anyio.sleep(0.1)
    return False


def leftovers(home: Path, spared: set[int]) -> list[int]:
    """Live processes started under this test's PLUGMAN_HOME, other than `spared`."""
    marker = f"PLUGMAN_HOME={home}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in spared | {os.getpid()}:
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                found += [] if state in ("Z", "X") else [int(entry.name)]
        except OSError:
            continue
    return found


def first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    """The first line `proc` writes to stderr, waiting at most `timeout` seconds."""
    assert proc.stderr is not None
    ready, _, _ = select.select([proc.stderr], [], [], timeout)
    assert ready, "the gateway said nothing in time"
    return proc.stderr.readline().strip()


def notes(prefix: str) -> set[str]:
    return {f"{prefix}{tool}" for tool in NOTES_TOOLS}


@pytest.mark.slow
def test_gateway_pools_calls_blocks_and_survives_a_dropped_backend(
    tmp_path: Path, isolated_home: Path
) -> None:
    with http_notes(tmp_path) as web:
        configure(isolated_home, web.port, BLOCK_DELETE)
        seen: list[Any] = []

        async def session() -> None:
            with anyio.fail_after(240):
                async with gateway(tmp_path, seen=seen) as client:
                    assert client.server_capabilities.tools.list_changed is True
                    both = notes("notes__") | notes("web__")
                    first = await tool_names(client)  # at once: the backends up by now
                    assert first <= both
                    assert await poll(client, lambda n: n == both, START_TIMEOUT) == both
                    assert first == both or await told(seen), "no list_changed as they came up"

                    added = await client.call_tool("notes__add", {"a": 2, "b": 3})
                    assert (added.is_error, text(added)) == (False, "5")
                    saved = await client.call_tool("web__add_note", {"title": "t", "body": "b"})
                    assert not saved.is_error, text(saved)
                    got = await client.call_tool("web__get_note", {"title": "t"})
                    assert (got.is_error, text(got)) == (False, "b")

                    blocked = await client.call_tool("notes__delete_note", {"title": "todo"})
                    assert blocked.is_error and "blocked-by-test" in text(blocked), blocked
                    kept = await client.call_tool("notes__get_note", {"title": "todo"})
                    assert not kept.is_error, "the blocked call reached the server"
                    other = await client.call_tool("web__delete_note", {"title": "t"})
                    assert not other.is_error, "the hook's matcher is for the stdio server only"

                    long = await client.call_tool("notes__echo", {"text": "x" * 150_000})
                    assert not long.is_error
                    assert text(long) == "x" * 100_000 + "… [cut by plugman: 50000 characters]"

                    seen.clear()
                    web.kill()
                    names = await poll(client, lambda n: not n & notes("web__"), 30)
                    assert names == notes("notes__"), "the dropped backend's tools stayed"
                    assert await told(seen), "no tools/list_changed after the drop"
                    still = await client.call_tool("notes__add", {"a": 1, "b": 1})
                    assert text(still) == "2"
                    gone = await client.call_tool("web__add", {"a": 1, "b": 1})
                    assert gone.is_error

                    web.start()
                    names = await poll(client, lambda n: n >= notes("web__"), 60)
                    assert names == both, "the restarted backend did not come back"
                    back = await client.call_tool("web__add", {"a": 20, "b": 22})
                    assert (back.is_error, text(back)) == (False, "42")

        anyio.run(session)
        spared = {web.proc.pid} if web.proc else set()
        end = time.monotonic() + 15
        while leftovers(isolated_home, spared) and time.monotonic() < end:
            time.sleep(0.2)
        assert not leftovers(isolated_home, spared), "the gateway left a server running"
    log = (isolated_home / "state" / "logs" / "gateway.log").read_text()
    assert "web: down" in log and "web: up" in log, log


@pytest.mark.slow
def test_deny_destructive_hooks_and_a_growing_backend(tmp_path: Path, isolated_home: Path) -> None:
    """--deny-destructive; a PreToolUse hook's updatedInput; PostToolUse feedback (exit 2);
    resources and prompts routed; a backend whose `tools/list_changed` reaches the client with
    its new tool."""
    (tmp_path / "rewrite.py").write_text(REWRITE)
    (tmp_path / "growing.py").write_text(GROWING)
    rewrite = f"{json.dumps(sys.executable)} {json.dumps(str(tmp_path / 'rewrite.py'))}"
    hooks = {
        "PreToolUse": [("mcp__notes__echo", rewrite)],
        "PostToolUse": [("mcp__notes__list_notes", "echo post-feedback >&2; exit 2")],
    }
    configure(isolated_home, None, hooks, {"growing": tmp_path / "growing.py"})
    seen: list[Any] = []

    async def session() -> None:
        options = ("--deny-destructive", "--call-timeout", "20")
        with anyio.fail_after(120):
            async with gateway(tmp_path, *options, seen=seen) as client:
                refused = await client.call_tool("notes__delete_note", {"title": "welcome"})
                assert refused.is_error and "--deny-destructive" in text(refused), refused
                kept = await client.call_tool("notes__get_note", {"title": "welcome"})
                assert not kept.is_error, "the refused call reached the server"
                echoed = await client.call_tool("notes__echo", {"text": "quiet"})
                assert (echoed.is_error, text(echoed)) == (False, "QUIET")
                listed = await client.call_tool("notes__list_notes", {})
                assert not listed.is_error
                assert "PostToolUse hook: post-feedback" in text(listed)
                assert "welcome" in text(listed), "the feedback replaced the result"

                read = await client.read_resource("notes://note/welcome")
                assert "Welcome to the plugman notes server" in read.contents[0].text
                await poll(client, lambda n: "growing__grow" in n, START_TIMEOUT)
                prompts = {p.name for p in (await client.list_prompts()).prompts}
                assert prompts == {"notes__summarize_notes"}
                prompt = await client.get_prompt("notes__summarize_notes", {"style": "terse"})
                assert "terse style" in prompt.messages[0].content.text

                assert "growing__grow" in await tool_names(client)
                seen.clear()
                grown = await client.call_tool("growing__grow", {"name": "sprout"})
                assert text(grown) == "ok"
                names = await poll(client, lambda n: "growing__sprout" in n, 30)
                assert "growing__sprout" in names
                assert await told(seen), "no tools/list_changed after the new tool"
                sprout = await client.call_tool("growing__sprout", {})
                assert (sprout.is_error, text(sprout)) == (False, "grown")

    anyio.run(session)


@pytest.mark.slow
def test_http_transport_serves_a_modern_client(tmp_path: Path, isolated_home: Path) -> None:
    configure(isolated_home, None, {})
    project = tmp_path / "project"
    project.mkdir()
    argv = plugman_argv("--project", str(project), "mcp", "serve", "--transport", "http")
    proc = subprocess.Popen(
        [*argv, "--port", "0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = first_line(proc, START_TIMEOUT)
        assert line.startswith("listening on http://127.0.0.1:"), line
        url = line.removeprefix("listening on ")

        async def session() -> None:
            from mcp import Client

            with anyio.fail_after(120):
                async with Client(url, read_timeout_seconds=READ_TIMEOUT) as client:
                    wanted = notes("notes__")
                    assert await poll(client, lambda n: n == wanted, START_TIMEOUT) == wanted
                    added = await client.call_tool("notes__add", {"a": 4, "b": 5})
                    assert text(added) == "9"

        anyio.run(session)
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out == "", "the gateway printed to stdout"


# --- the pure parts, in-process -------------------------------------------------------------


def test_catalog_names_cuts_and_conflicts(tmp_path: Path) -> None:
    from mcp import types

    from plugman.runtime.gateway.backends import Backend
    from plugman.runtime.gateway.catalog import build
    from plugman.runtime.gateway.health import Health
    from plugman.runtime.gateway.naming import gateway_name

    async def ignore(backend: Backend, kinds: frozenset[str]) -> None:
        pass

    def backend(name: str, tools: list[str], uris: list[str]) -> Backend:
        found = Backend(
            name, {}, errlog=sys.stderr, env={}, cwd=tmp_path, health=Health(), on_change=ignore
        )
        found.state = "up"
        hints = types.ToolAnnotations(destructive_hint=True)
        found.tools = [
            types.Tool(name=t, description="d" * 3000, input_schema={}, annotations=hints)
            for t in tools
        ]
        found.resources = [types.Resource(name=u, uri=u) for u in uris]
        found.templates = [types.ResourceTemplate(name="t", uri_template="notes://note/{title}")]
        return found

    async def main() -> None:
        down = backend("down", ["gone"], [])
        down.state = "down"
        catalog = build(
            [
                backend("plugin:kit:Synapse.org", ["search"], []),
                backend("x_y", ["t"], ["notes://index"]),
                backend("x.y", ["t"], ["notes://index"]),
                down,
            ]
        )
        salted = gateway_name("x_y", "t", salt=1)
        assert set(catalog.tools) == {"x_y__t", salted, "plugin_kit_Synapse_org__search"}
        route = catalog.tools["x_y__t"]
        assert (route.backend.name, route.name) == ("x.y", "t")  # first by name keeps it
        assert route.agent == "mcp__x_y__t"  # what hook matchers see
        assert catalog.tools[salted].backend.name == "x_y"  # the other one: listed too
        assert route.item.annotations.destructive_hint is True
        assert len(route.item.description) == 2048 and route.item.description.endswith("]")
        assert catalog.resources["notes://index"].backend.name == "x.y"
        assert catalog.resource_route("notes://note/todo") is not None
        assert catalog.resource_route("notes://note/a/b") is None
        assert f"tool t of x_y is listed as {salted}: x_y__t was taken" in catalog.conflicts
        agent = catalog.tools["plugin_kit_Synapse_org__search"].agent
        assert agent == "mcp__plugin_kit_Synapse_org__search"
        assert any("resource notes://index of x_y" in c for c in catalog.conflicts)

    anyio.run(main)


def test_colliding_long_names_get_distinct_names(tmp_path: Path) -> None:
    """Two long tool names whose shortened names collide (a real 32-bit hash collision, found
    by search) and two servers whose names normalize alike: every tool is listed, each under
    its own valid name, the same in every build."""
    from mcp import types

    from plugman.runtime.gateway.backends import Backend
    from plugman.runtime.gateway.catalog import build
    from plugman.runtime.gateway.health import Health
    from plugman.runtime.gateway.naming import AGENT_PREFIX, VALID, gateway_name

    stem = "fetch_every_forecast_for_every_city_in_the_world_"
    one, two = f"{stem}12146", f"{stem}119117"
    assert gateway_name("weather", one) == gateway_name("weather", two)  # the collision

    async def ignore(backend: Backend, kinds: frozenset[str]) -> None:
        pass

    def backend(name: str, tools: list[str]) -> Backend:
        found = Backend(
            name, {}, errlog=sys.stderr, env={}, cwd=tmp_path, health=Health(), on_change=ignore
        )
        found.state = "up"
        found.tools = [types.Tool(name=t, input_schema={}) for t in tools]
        return found

    backends = [backend("weather", [one, two, "x" * 80]), backend("weather.", [one])]
    catalog = build(backends)
    assert len(catalog.tools) == 4
    assert all(VALID.match(AGENT_PREFIX + name) for name in catalog.tools)
    owners = {(route.backend.name, route.name) for route in catalog.tools.values()}
    assert owners == {("weather", one), ("weather", two), ("weather", "x" * 80), ("weather.", one)}
    assert set(build(reversed(backends)).tools) == set(catalog.tools)


def test_cuts_and_backoff() -> None:
    from mcp import types

    from plugman.core.errors import PlugmanError
    from plugman.runtime.gateway.calls import cut_result, cut_text
    from plugman.runtime.gateway.health import Health

    assert cut_text("x" * 100_000) == "x" * 100_000
    assert cut_text("x" * 100_007).endswith("x… [cut by plugman: 7 characters]")
    long = types.TextContent(type="text", text="y" * 100_001)
    result = types.CallToolResult(content=[long], structured_content={"result": "y" * 100_001})
    cut = cut_result(result)
    assert text(cut).endswith("y… [cut by plugman: 1 characters]")
    assert cut.structured_content == {"result": text(cut)}
    assert [Health().delay(n) for n in range(1, 7)] == [1, 2, 4, 8, 16, 30]
    assert Health.from_env({"PLUGMAN_GATEWAY_BACKOFF": "0.2"}).delay(2) == 0.4
    with pytest.raises(PlugmanError):
        Health.from_env({"PLUGMAN_GATEWAY_BACKOFF": "soon"})
    assert Health.from_env({}).first_list_wait == 5
    assert Health.from_env({"PLUGMAN_GATEWAY_FIRST_LIST_WAIT": "0"}).first_list_wait == 0
    assert Health.from_env({"PLUGMAN_GATEWAY_FIRST_LIST_WAIT": "9"}, 30, 2).first_list_wait == 2
    for bad in ("-1", "later", "nan"):
        with pytest.raises(PlugmanError, match="PLUGMAN_GATEWAY_FIRST_LIST_WAIT"):
            Health.from_env({"PLUGMAN_GATEWAY_FIRST_LIST_WAIT": bad})

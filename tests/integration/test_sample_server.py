"""End-to-end tests for the bundled sample MCP server (sample-plugins/plugins/notes-server).

The server runs as a real subprocess, over stdio and over streamable HTTP; no mocks.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.types import TextContent, TextResourceContents

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVER = REPO_ROOT / "sample-plugins" / "plugins" / "notes-server" / "server" / "notes_server.py"

EXPECTED_TOOLS = {"add_note", "list_notes", "get_note", "delete_note", "echo", "add"}
OWNER = "pytest-owner"
HTTP_OWNER = "pytest-http-owner"
READ_TIMEOUT = 20.0
STARTUP_DEADLINE = 20.0

Mode = Literal["legacy", "auto"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_for_port(proc: subprocess.Popen[bytes], port: int, errlog: Path) -> None:
    """Poll until 127.0.0.1:port accepts a TCP connection, or fail after STARTUP_DEADLINE."""
    end = time.monotonic() + STARTUP_DEADLINE
    while time.monotonic() < end:
        if proc.poll() is not None:
            err = errlog.read_text(errors="replace")
            pytest.fail(f"server exited early with code {proc.returncode}:\n{err}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"server did not listen on 127.0.0.1:{port} within {STARTUP_DEADLINE} s")


@contextmanager
def _http_server(transport: str, errlog: Path) -> Iterator[int]:
    """Run the notes server on a free 127.0.0.1 port with an HTTP transport; yield the port."""
    port = _free_port()
    cmd = [sys.executable, str(SERVER), "--transport", transport]
    cmd += ["--host", "127.0.0.1", "--port", str(port)]
    with errlog.open("wb") as err:
        env = {**os.environ, "NOTES_OWNER": HTTP_OWNER}
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env
        )
    try:
        _wait_for_port(proc, port, errlog)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="module")
def http_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The notes server over streamable HTTP, shared by the tests in this module."""
    errlog = tmp_path_factory.mktemp("notes-http") / "stderr.log"
    with _http_server("streamable-http", errlog) as port:
        yield f"http://127.0.0.1:{port}/mcp"


def _stdio_params() -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=[str(SERVER)], env={"NOTES_OWNER": OWNER}
    )


def _text(content: object) -> str:
    assert isinstance(content, TextContent), content
    return content.text


async def _exercise(client: Client, owner: str) -> None:
    """Run the same checks against any connected client."""
    # Tools: exact names, and annotations survive the round trip.
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == EXPECTED_TOOLS
    list_notes_ann = tools["list_notes"].annotations
    assert list_notes_ann is not None
    assert list_notes_ann.read_only_hint is True
    delete_ann = tools["delete_note"].annotations
    assert delete_ann is not None
    assert delete_ann.destructive_hint is True
    add_note_ann = tools["add_note"].annotations
    assert add_note_ann is not None
    assert add_note_ann.destructive_hint is False
    assert add_note_ann.idempotent_hint is False

    # A structured tool result.
    result = await client.call_tool("add", {"a": 2, "b": 40})
    assert not result.is_error
    assert _text(result.content[0]) == "42"
    assert result.structured_content == {"result": 42}

    # Errors come back as results, not exceptions.
    missing = await client.call_tool("get_note", {"title": "no-such-note"})
    assert missing.is_error

    # Add a note (unique title: the HTTP server is shared across tests), read it back.
    title = f"note-{uuid.uuid4().hex[:8]}"
    added = await client.call_tool("add_note", {"title": title, "body": "hello from pytest"})
    assert not added.is_error
    templates = (await client.list_resource_templates()).resource_templates
    assert "notes://note/{title}" in {t.uri_template for t in templates}
    note = await client.read_resource(f"notes://note/{title}")
    assert len(note.contents) == 1
    body = note.contents[0]
    assert isinstance(body, TextResourceContents)
    assert body.text == "hello from pytest"

    # Static resource: the JSON index lists the seeded notes and the new one.
    resources = (await client.list_resources()).resources
    index_meta = {str(r.uri): r for r in resources}["notes://index"]
    assert index_meta.mime_type == "application/json"
    index = await client.read_resource("notes://index", cache_mode="refresh")
    index_body = index.contents[0]
    assert isinstance(index_body, TextResourceContents)
    assert index_body.mime_type == "application/json"
    titles = json.loads(index_body.text)
    assert {"welcome", "todo", title} <= set(titles)

    # Prompt with and without its optional argument.
    prompts = {p.name: p for p in (await client.list_prompts()).prompts}
    assert "summarize_notes" in prompts
    prompt = await client.get_prompt("summarize_notes", {"style": "detailed"})
    prompt_text = _text(prompt.messages[0].content)
    assert "detailed" in prompt_text
    assert owner in prompt_text
    assert title in prompt_text
    default_prompt = await client.get_prompt("summarize_notes")
    assert "short" in _text(default_prompt.messages[0].content)

    # Clean up: the destructive tool works and the note is gone.
    deleted = await client.call_tool("delete_note", {"title": title})
    assert not deleted.is_error
    after = await client.call_tool("list_notes", {})
    assert title not in (after.structured_content or {}).get("result", [])


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_stdio_transport(mode: Mode) -> None:
    async with Client(_stdio_params(), mode=mode, read_timeout_seconds=READ_TIMEOUT) as client:
        assert client.server_info is not None
        assert client.server_info.name == "notes"
        await _exercise(client, OWNER)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_streamable_http_transport(http_url: str, mode: Mode) -> None:
    async with Client(http_url, mode=mode, read_timeout_seconds=READ_TIMEOUT) as client:
        assert client.server_info is not None
        assert client.server_info.name == "notes"
        await _exercise(client, HTTP_OWNER)


@pytest.mark.anyio
async def test_sse_transport(tmp_path: Path) -> None:
    with _http_server("sse", tmp_path / "stderr.log") as port:
        transport = sse_client(f"http://127.0.0.1:{port}/sse", timeout=5, sse_read_timeout=30)
        async with Client(transport, mode="legacy", read_timeout_seconds=READ_TIMEOUT) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert tools == EXPECTED_TOOLS
            result = await client.call_tool("add", {"a": 1, "b": 2})
            assert result.structured_content == {"result": 3}


@pytest.mark.anyio
async def test_stdio_stdout_is_protocol_only() -> None:
    """In stdio mode every stdout line must be a JSON-RPC message (no banners, no logs)."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "pytest", "version": "0"},
        },
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    list_tools = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}

    def frame(message: dict[str, Any]) -> bytes:
        return (json.dumps(message) + "\n").encode()

    async with await anyio.open_process(
        [sys.executable, str(SERVER)], stderr=subprocess.DEVNULL
    ) as proc:
        assert proc.stdin is not None
        assert proc.stdout is not None
        stdout = BufferedByteReceiveStream(proc.stdout)
        lines: list[bytes] = []
        try:
            with anyio.fail_after(READ_TIMEOUT):
                await proc.stdin.send(frame(initialize))
                lines.append(await stdout.receive_until(b"\n", 1 << 20))
                await proc.stdin.send(frame(initialized) + frame(list_tools))
                lines.append(await stdout.receive_until(b"\n", 1 << 20))
                await proc.stdin.aclose()
                # Anything else the server prints before exiting must be protocol too.
                while True:
                    try:
                        lines.append(await stdout.receive_until(b"\n", 1 << 20))
                    except (anyio.EndOfStream, anyio.IncompleteRead):
                        break
                await proc.wait()
                assert not bytes(stdout.buffer).strip(), stdout.buffer
        finally:
            if proc.returncode is None:
                proc.kill()

    messages = [json.loads(line) for line in lines if line.strip()]
    assert all(m.get("jsonrpc") == "2.0" for m in messages), lines
    by_id = {m["id"]: m for m in messages if "id" in m}
    assert by_id[1]["result"]["serverInfo"]["name"] == "notes"
    assert {t["name"] for t in by_id[2]["result"]["tools"]} == EXPECTED_TOOLS


def test_help_exits_zero() -> None:
    proc = subprocess.run(
        [sys.executable, str(SERVER), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "--transport" in proc.stdout
    assert "streamable-http" in proc.stdout

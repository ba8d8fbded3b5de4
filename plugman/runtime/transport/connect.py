"""One MCP client session to one configured server, over stdio, streamable HTTP, SSE or ws.

Shared by `plugman mcp probe` and the gateway. `mcp` (about 1 s to import) is imported only
inside the functions that connect, in a worker thread, after a stdio server is spawned, so the
server's start-up and the import overlap (plugman.runtime.transport.stdio). What the SDK does
not put in its exceptions (the exit code of a stdio server, the HTTP status of a refused
request, unparsable stdout lines) is recorded on a `Trace`; plugman.runtime.transport.failure
turns the exception and the trace into a reason.

Decisions:
- `mode="legacy"` (the `initialize` handshake) by default: `auto` first sends `server/discover`
  with a hard-coded 10 s wait, which a legacy server that ignores unknown methods runs out.
- A stdio server gets the parent's whole environment with the entry's `env` over it, as
  Claude Code gives it (servers read tokens such as GITHUB_TOKEN from there), not the SDK's
  minimal HOME/PATH/SHELL/TERM/USER set.
- HTTP: connect/write/pool time out after `timeout`; reads after 300 s (the SDK's default),
  because the streamable-HTTP GET stream is long-lived; requests are bounded by
  `read_timeout_seconds=timeout` instead.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from plugman.core.errors import PlugmanError
from plugman.manifest.mcp import transport
from plugman.runtime.transport import stdio
from plugman.runtime.transport.websocket import websocket_client

if TYPE_CHECKING:
    from mcp import Client

SSE_READ_TIMEOUT = 300.0
MessageHandler = Callable[[Any], Awaitable[None]]


@dataclass
class Trace:
    """What a connection attempt saw that its exception may not carry."""

    command: str | None = None
    process: Any = None  # the stdio server's anyio Process, once spawned
    statuses: list[int] = field(default_factory=list)  # every HTTP response status, in order
    bad_lines: list[str] = field(default_factory=list)  # why stdout messages failed to parse

    @property
    def exit_code(self) -> int | None:
        return None if self.process is None else self.process.returncode

    @property
    def http_error(self) -> int | None:
        return next((s for s in self.statuses if s >= 400), None)


def transport_of(entry: Mapping[str, Any]) -> str:
    """stdio, http, sse or ws; `type` missing means stdio (or http for a bare `url`)."""
    found = transport(entry)
    if found is None:
        kind = entry.get("type")
        raise PlugmanError(f"unknown transport {kind!r}", hint="use stdio, http, sse or ws")
    return found


def server_env(entry: Mapping[str, Any], parent: Mapping[str, str] | None = None) -> dict[str, str]:
    """The stdio server's environment: the parent's, with the entry's `env` over it."""
    base = os.environ if parent is None else parent
    return {**base, **{str(k): str(v) for k, v in (entry.get("env") or {}).items()}}


@asynccontextmanager
async def open_client(
    name: str,
    entry: Mapping[str, Any],
    *,
    errlog: TextIO,
    timeout: float,
    trace: Trace | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    mode: str = "legacy",
    on_message: MessageHandler | None = None,
    auth: Any = None,
    shared: bool = False,
) -> AsyncIterator[Client]:
    """A connected, initialized `mcp.Client` for server `name`.

    errlog: where a stdio server's stderr goes (it needs a real file descriptor).
    env, cwd: the parent environment and the default working directory of a stdio server.
    auth: an `httpx2.Auth` for an http or sse server (OAuth: plugman.runtime.oauth.provider).
    shared: the entry comes from a plugin or a project's files (plugman.runtime.transport.headers).
    """
    seen = trace if trace is not None else Trace()
    # a stdio server is started before the SDK loads, so its start-up overlaps the import
    async with _transport(name, entry, errlog, timeout, seen, env, cwd, auth, shared) as transport:
        await stdio.load_sdk()
        from mcp import Client  # lazy: mcp takes ~907 ms to import, loaded by load_sdk

        async def handler(message: Any) -> None:
            if isinstance(message, Exception):
                seen.bad_lines.append(_parse_error(message))
            if on_message is not None:
                await on_message(message)

        client = Client(
            transport,
            mode=mode,
            read_timeout_seconds=timeout,
            message_handler=handler,
        )
        async with client:
            yield client


@asynccontextmanager
async def _transport(
    name: str,
    entry: Mapping[str, Any],
    errlog: TextIO,
    timeout: float,
    trace: Trace,
    env: Mapping[str, str] | None,
    cwd: Path | None,
    auth: Any = None,
    shared: bool = False,
) -> AsyncIterator[AbstractAsyncContextManager[Any]]:
    """The transport for `mcp.Client` to open; a stdio server already running inside it."""
    kind = transport_of(entry)
    if kind == "stdio":
        async with _stdio(entry, errlog, trace, server_env(entry, env), cwd) as streams:
            yield streams
        return
    url = entry.get("url")
    if not isinstance(url, str) or not url:
        raise PlugmanError(f"{name}: a {kind} server needs a url")
    yield _remote(kind, url, entry, timeout, trace, env, cwd, auth, shared)


@asynccontextmanager
async def _remote(
    kind: str,
    url: str,
    entry: Mapping[str, Any],
    timeout: float,
    trace: Trace,
    env: Mapping[str, str] | None,
    cwd: Path | None,
    auth: Any,
    shared: bool,
) -> AsyncIterator[Any]:
    """An http, sse or ws transport, opened with the entry's headers (its `headersHelper` run
    first, at every connection, as Claude Code does)."""
    # lazy: runtime.headers takes ~18 ms to import, only this path needs it
    from plugman.runtime.transport.headers import entry_headers

    headers = await entry_headers(entry, env, cwd, shared)
    opened: AbstractAsyncContextManager[Any]
    if kind == "http":
        opened = _http(url, headers, timeout, trace, auth)
    elif kind == "sse":
        opened = _sse(url, headers, timeout, trace, auth)
    else:
        opened = _ws(url, headers, timeout, trace)
    async with opened as streams:
        yield streams


@asynccontextmanager
async def _stdio(
    entry: Mapping[str, Any], errlog: TextIO, trace: Trace, env: dict[str, str], cwd: Path | None
) -> AsyncIterator[AbstractAsyncContextManager[Any]]:
    """The server started now (plugman.runtime.transport.stdio), and its streams to open;
    stopped here if they never were."""
    command = entry.get("command")
    if not isinstance(command, str) or not command:
        raise PlugmanError("a stdio server needs a command")
    trace.command = command
    folder = entry.get("cwd") or cwd
    if folder is not None and not Path(folder).is_dir():
        raise PlugmanError(f"working directory not found: {folder}")
    args = [str(a) for a in entry.get("args") or []]
    # lazy: runtime.hooks takes ~19 ms to import, only this path needs it
    from plugman.runtime.hooks.run import secret_in_argv

    if secret_in_argv([command, *args]):
        raise PlugmanError(
            "not started: its command line would carry a secret value, which every user of "
            "this machine can read (ps)",
            hint="pass it in the entry's env instead (a plugin's server gets each option as "
            "CLAUDE_PLUGIN_OPTION_<KEY> in its environment)",
        )
    trace.process = await stdio.spawn(command, args, env, errlog, folder)
    opened: list[bool] = []
    try:
        yield stdio.streams(trace.process, opened)
    finally:
        if not opened:
            await stdio.discard(trace.process)


def _recorder(trace: Trace) -> Callable[[Any], Awaitable[None]]:
    async def record(response: Any) -> None:
        trace.statuses.append(response.status_code)

    return record


@asynccontextmanager
async def _http(
    url: str, headers: dict[str, str], timeout: float, trace: Trace, auth: Any = None
) -> AsyncIterator[Any]:
    import httpx2  # lazy: httpx2 takes ~49 ms to import, only this path needs it
    from mcp.client.streamable_http import streamable_http_client

    limits = httpx2.Timeout(timeout, read=max(timeout, SSE_READ_TIMEOUT))
    hooks = {"response": [_recorder(trace)]}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=limits, event_hooks=hooks, auth=auth) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


def _sse(url: str, headers: dict[str, str], timeout: float, trace: Trace, auth: Any = None) -> Any:
    # lazy: mcp takes ~586 ms to import, only this path needs it
    from mcp.client.sse import sse_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> Any:
        client = create_mcp_http_client(headers, timeout, auth)
        client.event_hooks["response"].append(_recorder(trace))
        return client

    read = max(timeout, SSE_READ_TIMEOUT)
    return sse_client(
        url,
        headers=headers,
        timeout=timeout,
        sse_read_timeout=read,
        httpx_client_factory=factory,
        auth=auth,
    )


def _ws(url: str, headers: dict[str, str], timeout: float, trace: Trace) -> Any:
    """plugman's own websocket client: mcp 2.3 has none."""
    return websocket_client(url, headers, timeout, trace.statuses)


def _parse_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            return str(errors()[0]["msg"])
        except (IndexError, KeyError, TypeError):
            pass
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__

"""One request (a tool call, a resource read, a prompt get) sent to a backend, as Claude Code
sends it to a remote server (its `ensureConnectedClient` and `McpSessionExpiredError` retry).

1. The request waits (at most `timeout`) for a backend that is connecting or renewing its
   session; a backend that is down fails it at once, and that counts as a connection error.
2. A request whose HTTP session expired (the server answered 404 with JSON-RPC error -32001,
   or the Python SDK's "Session not found": plugman.runtime.transport.failure.session_expired) has
   the backend initialize a new session (`Backend.expired`) and is sent again, once, on the new
   client. A second expiry is the request's error.
3. A terminal connection error (refused, reset, closed: failure.terminal) counts towards the
   backend's MAX_ERRORS in a row (`Backend.call_failed`, which then reconnects it); a request
   that the server answered, even with an error, resets the count.

Failures come back as `UnansweredError` (with a message for the caller to render; never the
request's arguments) or as the request's own exception (MCPError, TimeoutError, ...).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import anyio

from plugman.runtime.transport.failure import REQUEST_TIMEOUT, session_expired, terminal

if TYPE_CHECKING:
    from mcp import Client

    from plugman.runtime.gateway.backends import Backend

T = TypeVar("T")
GRACE = 5.0  # beyond the read timeout, in case a transport never reports one


class UnansweredError(Exception):
    """The request could not be sent, or its session could not be re-established."""


async def send(backend: Backend, request: Callable[[Client], Awaitable[T]], timeout: float) -> T:
    """`request(client)` on the backend's client: retried once on an expired session."""
    client = await backend.current(timeout)
    if client is None:
        backend.call_failed(None, "not connected")
        raise UnansweredError(f"{backend.name} is not connected: {backend.reason or backend.state}")
    retried = False
    while True:
        trace = backend.trace
        mark = len(trace.statuses)
        try:
            with anyio.fail_after(timeout + GRACE):
                result = await request(client)
        except Exception as exc:
            if session_expired(exc, trace.statuses[mark:]):
                if retried:
                    raise UnansweredError(
                        f"{backend.name}: the session expired again (HTTP 404, session not found)"
                        " right after a new initialize"
                    ) from None
                retried = True
                backend.expired(client)
                fresh = await backend.current(timeout, old=client)
                if fresh is None:
                    raise UnansweredError(
                        f"{backend.name}: the session expired and a new one could not be "
                        f"initialized: {backend.reason or backend.state}"
                    ) from None
                client = fresh
                continue
            _count(backend, client, exc)
            raise
        backend.call_succeeded()
        return result


def _count(backend: Backend, client: Client, exc: Exception) -> None:
    from mcp import MCPError  # lazy: mcp takes ~854 ms to import, only this path needs it

    if terminal(exc):
        backend.call_failed(client, str(exc) or type(exc).__name__)
    elif isinstance(exc, MCPError) and exc.code != REQUEST_TIMEOUT:
        backend.call_succeeded()  # the server answered: the connection works

"""Why a connection to an MCP server failed, in one line a user can act on.

The SDK wraps what escapes `async with Client(...)` in nested exception groups, and leaves out
what matters most (a stdio server's exit code and stderr, an HTTP status). `failure()` reads the
flattened exceptions together with the connection's `Trace`:

| seen | state, reason |
|---|---|
| any HTTP 401 (even after another error) | needs-auth, `HTTP 401 Unauthorized: ...` |
| FileNotFoundError at spawn | failed, `command not found: X` |
| another OSError at spawn | failed, `cannot start X: <strerror>` |
| an HTTP status >= 400 | failed, `HTTP 404 Not Found` |
| connection closed, process exited | failed, `exited with code N: <stderr tail>` |
| connection closed, process alive | failed, `connection closed, then stopped by signal 15: ...` |
| timeout after bad stdout lines | failed, `not an MCP server: stdout is not JSON-RPC (...)` |
| timeout | failed, `timed out after S s` |
| refused, DNS, TLS | failed, `cannot connect: ...` |
| wrong content type | failed, `not an MCP server: ...` |
"""

from __future__ import annotations

from collections.abc import Iterator
from http import HTTPStatus

from plugman.core.errors import PlugmanError
from plugman.runtime.transport.connect import Trace

CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001


def leaves(exc: BaseException) -> Iterator[BaseException]:
    """The exceptions inside (nested) exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from leaves(inner)
    else:
        yield exc


def failure(
    exc: BaseException, trace: Trace, timeout: float, stderr_tail: str = ""
) -> tuple[str, str]:
    """(state, reason) for a failed connection: `needs-auth` on HTTP 401, else `failed`."""
    if 401 in trace.statuses:  # also after a refused refresh (400) of a stored login
        return "needs-auth", "HTTP 401 Unauthorized: the server needs authorization"
    return "failed", _reason(list(leaves(exc)), trace, timeout, stderr_tail)


def _reason(found: list[BaseException], trace: Trace, timeout: float, tail: str) -> str:
    from mcp import MCPError  # lazy: mcp takes ~813 ms to import, only this path needs it

    for exc in found:
        if isinstance(exc, PlugmanError):
            return exc.message
    spawn = _spawn_error(found, trace)
    if spawn:
        return spawn
    if trace.http_error is not None:
        return _status_text(trace.http_error)
    codes = {exc.code for exc in found if isinstance(exc, MCPError)}
    if CONNECTION_CLOSED in codes and trace.exit_code is not None:
        return _exited(trace.exit_code, tail)
    if REQUEST_TIMEOUT in codes or any(isinstance(e, TimeoutError) for e in found):
        if trace.bad_lines:
            where = "stdout is" if trace.command else "its messages are"
            return f"not an MCP server: {where} not JSON-RPC ({trace.bad_lines[0]})"
        return f"timed out after {timeout:g} s"
    return _other(found)


def _spawn_error(found: list[BaseException], trace: Trace) -> str | None:
    if trace.command is None or trace.process is not None:
        return None
    for exc in found:
        if isinstance(exc, FileNotFoundError):
            return f"command not found: {trace.command}"
        if isinstance(exc, OSError):
            return f"cannot start {trace.command}: {exc.strerror or exc}"
    return None


def _status_text(status: int) -> str:
    try:
        return f"HTTP {status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"HTTP {status}"


def _exited(code: int, tail: str) -> str:
    text = (
        f"connection closed, then stopped by signal {-code}"
        if code < 0
        else f"exited with code {code}"
    )
    return f"{text}: {tail}" if tail else f"{text} (nothing on stderr)"


def _other(found: list[BaseException]) -> str:
    import httpx2  # lazy: httpx2 takes ~68 ms to import, only this path needs it
    from mcp import MCPError

    for exc in found:
        if isinstance(exc, httpx2.TransportError):
            return f"cannot connect: {exc or type(exc).__name__}"
        if isinstance(exc, httpx2.SSEError) or (
            isinstance(exc, MCPError) and "content type" in exc.message.lower()
        ):
            return f"not an MCP server: {exc}"
        if isinstance(exc, MCPError):
            return f"MCP error {exc.code}: {exc.message}"
    for exc in found:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if type(exc).__name__ == "InvalidStatus" and isinstance(status, int):  # websockets
            return f"the websocket handshake was refused: {_status_text(status)}"
        if isinstance(exc, OSError):
            return f"cannot connect: {exc.strerror or exc}"
    exc = found[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


SESSION_NOT_FOUND = -32001  # what the TypeScript SDK's servers (and Claude Code) use
INVALID_REQUEST = -32600  # what the Python SDK's servers answer, with "Session not found"


def session_expired(exc: BaseException, statuses: list[int]) -> bool:
    """Whether a request failed because the server forgot its HTTP session: the answer was a
    404 (in `statuses`, the HTTP statuses seen since the request was sent) carrying JSON-RPC
    error -32001 as Claude Code checks, or the Python SDK's -32600 "Session not found" (the
    SDK's client says "Session terminated" for a 404 without a JSON-RPC body)."""
    from mcp import MCPError  # lazy: mcp takes ~813 ms to import, only this path needs it

    if 404 not in statuses or not isinstance(exc, MCPError):
        return False
    if exc.code == SESSION_NOT_FOUND:
        return True
    return exc.code == INVALID_REQUEST and "session" in exc.message.lower()


def terminal(exc: BaseException) -> bool:
    """Whether `exc` says the connection itself failed (refused, reset, closed, timed out at
    the socket), as Claude Code's terminal errors (ECONNRESET, ETIMEDOUT, EPIPE, ...)."""
    import httpx2  # lazy: httpx2 takes ~68 ms to import, only this path needs it
    from mcp import MCPError

    for leaf in leaves(exc):
        if isinstance(leaf, MCPError) and leaf.code == CONNECTION_CLOSED:
            return True
        if isinstance(leaf, httpx2.TransportError | OSError):
            return True
        if type(leaf).__name__.startswith("ConnectionClosed"):  # websockets, not imported here
            return True
    return False

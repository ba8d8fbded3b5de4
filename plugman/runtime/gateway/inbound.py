"""What an HTTP request to the gateway asks for, read once before the MCP app sees it.

`Inspect` is the ASGI layer after authentication (plugman.runtime.gateway.web's `http_app`):
for every request to the MCP endpoint it reads a POST's body (bounded by the SDK's body limit,
413 above it, as the SDK answers), passes the same bytes on unchanged, and puts an `Inbound`
(the JSON-RPC method and, for `tools/call`, the tool's name) into the ASGI scope under
`SCOPE_KEY` for the layers after it: rate limits (plugman.runtime.gateway.ratelimit) and the
per-call log line.

It refuses, with HTTP 400 and a JSON-RPC error, what the gateway would read one way and a load
balancer (or the SDK) another:
- a body that is not one UTF-8 JSON object: a batch (an array: the SDK serves neither era's
  batches either), an object with a key given twice (`{"params": A, "params": B}`: which one
  counts?), anything that does not parse;
- the MCP 2026-07-28 routing headers (SEP-2243) disagreeing with the body: `Mcp-Method` other
  than the body's method, `Mcp-Name` other than the tool, prompt or resource the body names
  (compared after the SDK's own decoding of `=?base64?...?=` values), either given twice, or a
  method that names something sent with `Mcp-Method` but without `Mcp-Name`. The SDK checks
  this on its 2026-07-28 path only; a 2025-era request carrying these headers was served
  whatever they said, so a balancer routing or limiting on `Mcp-Name` counted one tool while
  the body called another.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from typing import Any

SCOPE_KEY = "plugman.inbound"
INVALID_REQUEST = -32600
PARSE_ERROR = -32700
HEADER_MISMATCH = -32020  # MCP 2026-07-28 (mcp_types.jsonrpc.HEADER_MISMATCH)
METHOD_HEADER = b"mcp-method"
NAME_HEADER = b"mcp-name"
ROUTING = (METHOD_HEADER, NAME_HEADER, b"mcp-protocol-version")
# Method -> the param the Mcp-Name header mirrors (the SDK's NAME_BEARING_METHODS)
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
Receive = Any  # ASGI
Send = Any


@dataclass(frozen=True)
class Inbound:
    """One request to the MCP endpoint: its JSON-RPC method (None for a GET or DELETE, or a
    posted response), its id, and the tool a `tools/call` names."""

    method: str | None = None
    tool: str | None = None
    id: str | int | None = None


@dataclass(frozen=True)
class Refusal:
    status: int
    code: int
    message: str
    id: str | int | None = None


def in_scope(scope: dict[str, Any]) -> Inbound | None:
    found = scope.get(SCOPE_KEY)
    return found if isinstance(found, Inbound) else None


class Inspect:
    """ASGI middleware: an `Inbound` for every request to `path` (the MCP endpoint), or its
    refusal (see above)."""

    def __init__(self, app: Any, max_body: int, path: str) -> None:
        self.app = app
        self.max_body = max_body
        self.path = path

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        if scope["method"] != "POST":
            scope[SCOPE_KEY] = Inbound()
            await self.app(scope, receive, send)
            return
        read = await _body(scope, receive, self.max_body)
        if read is None:
            await respond(send, 413, b"Request body too large", [(b"content-type", b"text/plain")])
            return
        body, replay = read
        found = parsed(body, scope["headers"])
        if isinstance(found, Refusal):
            await refuse(send, found.status, found.code, found.message, found.id)
            return
        scope[SCOPE_KEY] = found
        await self.app(scope, replay, send)


async def _body(scope: dict[str, Any], receive: Receive, limit: int) -> tuple[bytes, Any] | None:
    """The whole body (None above `limit` bytes) and a `receive` that gives it again."""
    for name, value in scope["headers"]:
        if name == b"content-length" and value.isdigit() and int(value) > limit:
            return None
    chunks: list[bytes] = []
    size = 0
    later: deque[dict[str, Any]] = deque()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            later.append(message)  # a disconnect: the app meets it after the body
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    later.appendleft({"type": "http.request", "body": body, "more_body": False})

    async def replay() -> dict[str, Any]:
        return later.popleft() if later else await receive()

    return body, replay


def parsed(body: bytes, headers: list[tuple[bytes, bytes]]) -> Inbound | Refusal:
    """What `body` asks for, or why it is refused (see the module's docstring)."""
    try:
        value = json.loads(body.decode("utf-8"), object_pairs_hook=_unique)
    except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError included
        return Refusal(400, PARSE_ERROR, "Parse error: the body is not one JSON value")
    if not isinstance(value, dict):
        return Refusal(400, INVALID_REQUEST, "a batch or a non-object body is not served")
    given = value.get("id")
    ident = given if isinstance(given, (str, int)) and not isinstance(given, bool) else None
    method = value.get("method")
    params = value.get("params")
    if not isinstance(method, str):
        return Inbound(id=ident)  # a posted response: the SDK's to answer
    named = NAMED.get(method)
    target = params.get(named) if named and isinstance(params, dict) else None
    target = target if isinstance(target, str) else None
    mismatch = _routing(headers, method, named, target)
    if mismatch:
        return Refusal(400, HEADER_MISMATCH, mismatch, ident)
    return Inbound(method, target if method == "tools/call" else None, ident)


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise ValueError("a key appears more than once")
    return found


def _routing(
    headers: list[tuple[bytes, bytes]], method: str, named: str | None, target: str | None
) -> str:
    """Why the routing headers disagree with the body ("" when they do not)."""
    # lazy: the SDK's decoding of Mcp-Name; mcp is loaded already on this path
    from mcp.shared.inbound import decode_header_value

    seen: dict[bytes, str] = {}
    for name, value in headers:
        if name in ROUTING:
            if name in seen:
                return f"the {name.decode()} header appears more than once"
            seen[name] = value.decode("latin-1")
    if METHOD_HEADER in seen and seen[METHOD_HEADER] != method:
        return "the mcp-method header does not match the request body's method"
    if NAME_HEADER not in seen and not (METHOD_HEADER in seen and target is not None):
        return ""
    if decode_header_value(seen.get(NAME_HEADER)) != target:
        return f"the mcp-name header does not match the request body's {named or 'name'!r}"
    return ""


async def refuse(
    send: Send,
    status: int,
    code: int,
    message: str,
    ident: str | int | None,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """An HTTP error with a JSON-RPC error body for request `ident`."""
    error = {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}
    body = json.dumps(error).encode()
    await respond(send, status, body, [(b"content-type", b"application/json"), *(headers or [])])


async def respond(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    length = (b"content-length", str(len(body)).encode())
    await send({"type": "http.response.start", "status": status, "headers": [*headers, length]})
    await send({"type": "http.response.body", "body": body})

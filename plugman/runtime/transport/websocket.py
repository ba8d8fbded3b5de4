"""The `ws` MCP transport: JSON-RPC messages as WebSocket text frames (subprotocol `mcp`).

mcp 2.3 has no websocket client (v1's `mcp.client.websocket` is gone), so this is a small one
on the `websockets` library, shaped like the SDK's stdio and SSE clients: an async context
manager yielding `(read, write)` memory-object streams of `SessionMessage` (a frame that is
not JSON-RPC arrives on `read` as the exception, as a bad stdout line does over stdio).
When the socket closes, for whatever reason, the read stream ends, so the session sees the
connection close (`MCPError` -32000) instead of a request hanging forever. One message per
frame, as Claude Code's and the TypeScript SDK's `WebSocketClientTransport` send them.

`websockets` (and `mcp`) are imported inside the function: only commands that connect pay.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio

SUBPROTOCOL = "mcp"
MAX_FRAME = 16 * 1024 * 1024  # bytes; websockets' default (1 MiB) is small for tool results


@asynccontextmanager
async def websocket_client(
    url: str, headers: Mapping[str, str], timeout: float, statuses: list[int] | None = None
) -> AsyncIterator[tuple[Any, Any]]:
    """Connect to `url` (ws:// or wss://) with `headers`; `timeout` bounds the opening handshake.
    A refused handshake's HTTP status is appended to `statuses` (a 401 means needs-auth)."""
    import mcp_types  # lazy: mcp_types takes ~203 ms to import, only this path needs it
    from mcp.shared.message import SessionMessage
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed, InvalidStatus
    from websockets.typing import Subprotocol

    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    opening = connect(
        url,
        subprotocols=[Subprotocol(SUBPROTOCOL)],
        additional_headers=dict(headers),
        open_timeout=timeout,
        max_size=MAX_FRAME,
    )

    async def receive(socket: Any) -> None:
        # however the socket ends, the read stream closes: the session sees the connection end
        closed = (ConnectionClosed, anyio.ClosedResourceError, anyio.BrokenResourceError)
        async with read_writer:
            with contextlib.suppress(*closed):
                async for frame in socket:
                    text = frame if isinstance(frame, str) else frame.decode("utf-8", "replace")
                    try:
                        parsed = mcp_types.jsonrpc_message_adapter.validate_json(
                            text, by_name=False
                        )
                    except ValueError as exc:
                        await read_writer.send(exc)
                        continue
                    await read_writer.send(SessionMessage(parsed))

    async def send(socket: Any) -> None:
        try:
            async with write_reader:
                async for message in write_reader:
                    dumped = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await socket.send(dumped)
        except (ConnectionClosed, anyio.ClosedResourceError, anyio.BrokenResourceError):
            await read_writer.aclose()

    try:
        socket = await opening
    except InvalidStatus as exc:
        if statuses is not None:
            statuses.append(exc.response.status_code)
        raise
    async with socket, anyio.create_task_group() as group:
        group.start_soon(receive, socket)
        group.start_soon(send, socket)
        try:
            yield read_stream, write_stream
        finally:
            group.cancel_scope.cancel()
            for stream in (read_stream, write_stream, read_writer, write_reader):
                await stream.aclose()

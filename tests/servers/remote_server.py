"""A remote MCP server for tests, written with the mcp SDK, on 127.0.0.1:

    python remote_server.py --port PORT [--transport http|ws] [--instructions TEXT]

- With `REMOTE_API_KEY` in its environment, every request (the WebSocket handshake for ws)
  must carry `X-Api-Key: <that value>`, else it answers 401.
- Tools: `add(a, b)`.
- http only, test endpoints without the key: `POST /test/forget` forgets every session, so
  their IDs answer 404 "Session not found" as after a server restart or an idle timeout;
  `GET /test/stats` gives `{"initializes": n}`, how many sessions were opened.
- ws: one MCP session per connection, one JSON-RPC message per text frame (subprotocol
  `mcp`), as Claude Code's WebSocket transport speaks it; the SDK has no websocket server,
  so the frames are pumped into the SDK's low-level server here.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Any

import anyio
import mcp_types
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.shared.message import SessionMessage
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

KEY = os.environ.get("REMOTE_API_KEY")


def build(instructions: str | None) -> MCPServer:
    server = MCPServer("remote-test", version="1.0.0", instructions=instructions)

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return server


def http_app(server: MCPServer) -> Any:
    stats = {"initializes": 0}

    @server.custom_route("/test/forget", methods=["POST"])
    async def forget(request: Request) -> Response:
        manager = server.session_manager
        for sid, transport in list(manager._server_instances.items()):
            await manager._discard_session(sid, transport)
        return JSONResponse({"forgot": True})

    @server.custom_route("/test/stats", methods=["GET"])
    async def report(request: Request) -> Response:
        return JSONResponse(stats)

    inner = server.streamable_http_app()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/mcp"):
            headers = dict(scope["headers"])
            if KEY is not None and headers.get(b"x-api-key") != KEY.encode():
                await JSONResponse({"error": "unauthorized"}, 401)(scope, receive, send)
                return
            if scope["method"] == "POST" and b"mcp-session-id" not in headers:
                stats["initializes"] += 1
        await inner(scope, receive, send)

    return app


async def serve_ws(server: MCPServer, port: int) -> None:
    from websockets.asyncio.server import serve
    from websockets.http11 import Response as WsResponse

    lowlevel = server._lowlevel_server

    def check(connection: Any, request: Any) -> WsResponse | None:
        if KEY is not None and request.headers.get("X-Api-Key") != KEY:
            return connection.respond(401, "unauthorized\n")
        return None

    async def session(socket: Any) -> None:
        read_writer, read_stream = anyio.create_memory_object_stream[Any](16)
        write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](16)

        async def pump_in() -> None:
            async with read_writer:
                async for frame in socket:
                    message = mcp_types.jsonrpc_message_adapter.validate_json(frame, by_name=False)
                    await read_writer.send(SessionMessage(message))

        async def pump_out() -> None:
            async with write_reader:
                async for message in write_reader:
                    await socket.send(
                        message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    )

        async with anyio.create_task_group() as group:
            group.start_soon(pump_in)
            group.start_soon(pump_out)
            options = lowlevel.create_initialization_options()
            await lowlevel.run(read_stream, write_stream, options)
            group.cancel_scope.cancel()

    async with serve(session, "127.0.0.1", port, subprotocols=["mcp"], process_request=check):
        await asyncio.Future()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--transport", choices=("http", "ws"), default="http")
    parser.add_argument("--instructions")
    args = parser.parse_args()
    server = build(args.instructions)
    if args.transport == "ws":
        asyncio.run(serve_ws(server, args.port))
    else:
        uvicorn.run(http_app(server), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()

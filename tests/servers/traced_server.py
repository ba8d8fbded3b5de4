"""A stdio MCP server for the gateway's observability tests, written with the mcp SDK:

    python traced_server.py

- `meta()`: the `traceparent` (and `tracestate`) it received in the request's `_meta`, as JSON
  (`{}` when none): what the gateway forwarded of the caller's trace.
- `slow(seconds)`: answers `done` after `seconds` (a call in flight during a drain).
- `echo(text)`: answers `text`.
- `TRACED_START_DELAY` (seconds, in its environment): waits that long before serving, so the
  gateway's readiness can be seen while a backend is still starting.
"""

from __future__ import annotations

import json
import os
import time

import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("traced")


@server.tool()
def meta(ctx: Context) -> str:
    """The W3C trace context this request carried in `_meta`."""
    given = ctx.request_context.meta or {}
    return json.dumps({key: given[key] for key in ("traceparent", "tracestate") if key in given})


@server.tool()
async def slow(seconds: float) -> str:
    """Answers `done` after `seconds`."""
    await anyio.sleep(seconds)
    return "done"


@server.tool()
def echo(text: str) -> str:
    """Answers `text`."""
    return text


if __name__ == "__main__":
    time.sleep(float(os.environ.get("TRACED_START_DELAY", "0")))
    server.run()

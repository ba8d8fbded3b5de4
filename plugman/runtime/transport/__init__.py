"""One MCP client session to one configured server (stdio, streamable HTTP, SSE, ws):
connecting, `headersHelper`, the ws transport, and why a connection failed.

The face: the modules other packages may import (`__all__`); the rest are this
package's own."""

__all__ = [
    "connect",
    "failure",
    "headers",
]

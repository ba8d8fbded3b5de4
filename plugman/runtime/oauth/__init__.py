"""OAuth for remote MCP servers: `mcp login|logout`, the SDK provider with what a CLI
needs, the loopback callback, the stored tokens (sealed in Redis when gateway replicas share
them) and the needs-auth cache.

The face: the modules other packages may import (`__all__`); the rest are this
package's own."""

__all__ = [
    "auth_cache",
    "login",
    "provider",
    "sealed",
]

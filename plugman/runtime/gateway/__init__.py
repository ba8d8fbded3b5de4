"""`plugman mcp serve`: one MCP server in front of every resolved server (backends,
the catalog, calls, health, memory between sessions, transports, the bearer token),
and `mcp probe` with the tool pool an agent would assemble.

The face: the modules other packages may import (`__all__`); the rest are this
package's own."""

__all__ = [
    "health",
    "naming",
    "options",
    "pool",
    "probe",
    "run",
    "token",
]

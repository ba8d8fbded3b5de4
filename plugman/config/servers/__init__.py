"""MCP servers people add by hand: what `mcp add` and `add-json` mean, MCP Registry
`server.json` entries, the project's `.mcp.json`, and `mcp list|get`. (The values of
their `${VAR}` references are plugman.config.server_vars, beside: the resolution reads them.)

The face: the modules other packages may import (`__all__`); the rest are this
package's own."""

__all__ = [
    "entries",
    "listing",
    "mcp_json",
    "registry_entry",
]

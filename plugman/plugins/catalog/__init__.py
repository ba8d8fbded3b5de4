"""What the catalogs offer: marketplaces and where they come from (registry), pins and
versions, the per-entry findings, what `list`/`search`/`info` show, the MCP Registry
client and `policy explain`.

The face: the modules other packages may import (`__all__`); the rest are this
package's own."""

__all__ = [
    "failed",
    "listings",
    "marketplaces",
    "mcp_registry",
    "pins",
    "policy_explain",
    "registry",
]

"""What plugman runs at agent run time: hooks, and MCP servers (connect, probe, the tool pool).

`mcp` costs about a second to import, so nothing here imports it at module level: only the
functions that actually connect do.
"""

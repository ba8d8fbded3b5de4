"""Loaders for the ecosystem's formats: plugins, marketplaces, hooks, MCP configs, skills."""

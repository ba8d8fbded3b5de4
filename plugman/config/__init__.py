"""Every scope into one resolved config: loading the scopes, policy, approvals (trust),
expansion, redaction, the declaration files and MCP server entries, and the pure merge."""

"""MCP server configs: `.mcp.json` (wrapped or flat), inline maps, Agent Plugins `mcp.json`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plugman.manifest import schema
from plugman.manifest.diagnostics import KeyPath, Sink
from plugman.manifest.model import McpServer
from plugman.manifest.names import RESERVED_SERVERS, check_segment
from plugman.manifest.reader import Report, read_json

TRANSPORTS = {"stdio": "stdio", "http": "http", "streamable-http": "http", "sse": "sse", "ws": "ws"}
REMOTE = ("http", "sse", "ws")


def transport(entry: Mapping[str, Any]) -> str | None:
    """stdio, http, sse or ws (`streamable-http` is http); without a `type`, stdio for a
    command and http for a bare url; None for a type no MCP client knows."""
    kind = entry.get("type") or ("http" if "url" in entry and "command" not in entry else "stdio")
    return TRANSPORTS.get(kind) if isinstance(kind, str) else None


def load_file(file: Path, report: Report, *, agent_plugins: bool = False) -> list[McpServer]:
    """The servers of an MCP config file, wrapped (`{"mcpServers": …}`) or flat."""
    vscode = file.parent.name == ".vscode"  # VS Code's own format: JSONC with a `servers` map
    doc, sink = read_json(file, report, jsonc=vscode)
    if doc is None:
        return []
    value = doc.value
    if not isinstance(value, dict):
        sink.error(
            "schema-type",
            "an MCP config must be a JSON object",
            (),
            'write {"mcpServers": {"name": {...}}}',
        )
        return []
    if agent_plugins:
        schema.validate(value, "mcp-config.schema.json#/$defs/agentPluginsConfig", sink)
        return servers(value.get("mcpServers"), sink, ("mcpServers",))
    if isinstance(value.get("mcpServers"), dict):
        schema.validate(value, "mcp-config.schema.json", sink)
        return servers(value["mcpServers"], sink, ("mcpServers",))
    if "mcpServers" in value:  # not a map: not a server called mcpServers either
        sink.error(
            "schema-type",
            f"must be an object of servers by name, not {_kind(value['mcpServers'])}",
            ("mcpServers",),
            'write {"mcpServers": {"name": {...}}}',
        )
        return []
    if isinstance(value.get("servers"), dict):
        if not vscode:
            hint = "Claude Code reads 'mcpServers'; rename the key"
            sink.warning(
                "vscode-format", "this file uses VS Code's 'servers' key", ("servers",), hint
            )
        return servers(value["servers"], sink, ("servers",))
    flat = {key: item for key, item in value.items() if key != "$schema"}
    schema.validate(flat, "mcp-config.schema.json#/$defs/serverMap", sink)
    return servers(flat, sink, ())


def _kind(value: Any) -> str:
    """A JSON value's kind, in words."""
    kinds = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return kinds.get(type(value), "a number")


def servers(value: Any, sink: Sink, path: KeyPath) -> list[McpServer]:
    """Check each entry of a server map (already schema-checked) and model it."""
    if not isinstance(value, dict):
        return []
    found = []
    for name, entry in value.items():
        server = server_entry(name, entry, sink, (*path, name))
        if server is not None:
            found.append(server)
    return found


def server_entry(name: str, entry: Any, sink: Sink, path: KeyPath) -> McpServer | None:
    if not check_segment(name, "server", sink, path) or not isinstance(entry, dict):
        return None
    if name in RESERVED_SERVERS:
        sink.warning(
            "reserved-name",
            f"server name {name!r} is reserved; agents skip it",
            path,
            "rename the server",
        )
    kind = entry.get("type")
    if kind is None and "url" in entry:
        sink.error(
            "url-without-type",
            f'MCP server {name!r} has a "url" but no "type"',
            path,
            'add "type": "http" (or "sse" / "ws")',
        )
        return None
    transport = TRANSPORTS.get(kind if isinstance(kind, str) else "stdio")
    if transport is None:
        return None  # an unknown type is a schema error already
    if transport == "stdio" and not isinstance(entry.get("command"), str):
        sink.error(
            "missing-command",
            f"stdio MCP server {name!r} has no 'command'",
            path,
            'add "command" (and "args"), or set "type" to a remote transport',
        )
        return None
    if transport in REMOTE and "url" not in entry:
        sink.error("missing-url", f"{kind} MCP server {name!r} has no 'url'", path, 'add "url"')
        return None
    return McpServer(name, transport, entry)

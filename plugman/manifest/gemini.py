"""Gemini CLI extensions (`gemini-extension.json`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plugman import schema
from plugman.diagnostics import Sink
from plugman.manifest.model import McpServer, Plugin
from plugman.manifest.names import check_segment
from plugman.manifest.reader import Report, read_json


def load(file: Path, report: Report) -> Plugin | None:
    doc, sink = read_json(file, report)
    if doc is None:
        return None
    schema.validate(doc.value, "gemini-extension.schema.json", sink)
    if not isinstance(doc.value, dict):
        return None
    value: dict[str, Any] = doc.value
    name = value.get("name") if isinstance(value.get("name"), str) else file.parent.name
    assert isinstance(name, str)
    check_segment(name, "extension", sink, ("name",))
    version, description = value.get("version"), value.get("description")
    return Plugin(
        name=name,
        root=file.parent,
        format="gemini",
        manifest=value,
        version=version if isinstance(version, str) else None,
        description=description if isinstance(description, str) else None,
        mcp_servers=tuple(_servers(value.get("mcpServers"), sink)),
    )


def _servers(value: Any, sink: Sink) -> list[McpServer]:
    """Gemini entries: `httpUrl` is streamable HTTP, `url` is SSE, else stdio."""
    if not isinstance(value, dict):
        return []
    found = []
    for name, entry in value.items():
        if not check_segment(name, "server", sink, ("mcpServers", name)):
            continue
        if not isinstance(entry, dict):
            continue
        transport = "http" if "httpUrl" in entry else "sse" if "url" in entry else "stdio"
        found.append(McpServer(name, transport, entry))
    return found

"""Gemini CLI extensions (`gemini-extension.json`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from plugman.manifest import schema
from plugman.manifest.diagnostics import Sink
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
    """Gemini entries, in `.mcp.json` shape: `httpUrl` is streamable HTTP, `url` is SSE, else
    stdio; Gemini's variables become the ones every other reader of the entry knows."""
    if not isinstance(value, dict):
        return []
    found = []
    for name, entry in value.items():
        if not check_segment(name, "server", sink, ("mcpServers", name)):
            continue
        if not isinstance(entry, dict):
            continue
        transport = "http" if "httpUrl" in entry else "sse" if "url" in entry else "stdio"
        found.append(McpServer(name, transport, _entry(entry, transport)))
    return found


# Gemini's own variables, and what a plugin entry calls them.
GEMINI_VARIABLES = {
    "extensionPath": "${CLAUDE_PLUGIN_ROOT}",
    "workspacePath": "${CLAUDE_PROJECT_DIR}",
    "/": "/",
    "pathSeparator": "/",
}
# `$VAR` and `${VAR}` (Gemini expands both from the environment); compiled when first used.
GEMINI_REFERENCE = r"\$\{([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)"
SHAPE_KEYS = ("command", "args", "env", "cwd", "headers")  # the rest is Gemini's own


def _entry(entry: dict[str, Any], transport: str) -> dict[str, Any]:
    converted: dict[str, Any] = {} if transport == "stdio" else {"type": transport}
    if transport != "stdio":
        converted["url"] = entry.get("httpUrl" if transport == "http" else "url")
    converted |= {key: entry[key] for key in SHAPE_KEYS if key in entry}
    return dict(_references(converted))


def _references(value: Any) -> Any:
    if isinstance(value, str):
        return re.sub(GEMINI_REFERENCE, _reference, value)
    if isinstance(value, list):
        return [_references(item) for item in value]
    if isinstance(value, dict):
        return {key: _references(item) for key, item in value.items()}
    return value


def _reference(match: re.Match[str]) -> str:
    name = match[1] if match[1] is not None else match[2]
    return GEMINI_VARIABLES.get(name, f"${{{name}}}")

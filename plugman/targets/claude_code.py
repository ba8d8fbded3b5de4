"""Claude Code `.mcp.json`: `mcpServers` with `type` always set (stdio, http, sse, ws)."""

from __future__ import annotations

from typing import Any

from plugman.targets import Rendered, Servers, Target, json_text, kind


def entry(server: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind(server), **{k: v for k, v in server.items() if k != "type"}}


def render(servers: Servers) -> Rendered:
    document = {"mcpServers": {name: entry(s) for name, s in servers.items()}}
    return Rendered(json_text(document), [])


TARGET = Target("claude-code", ".mcp.json", render)

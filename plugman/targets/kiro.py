"""Kiro `.kiro/settings/mcp.json`: `mcpServers`; stdio is `command` + `args` + `env`, remote is
`type: streamable-http` + `url`."""

from __future__ import annotations

from typing import Any

from plugman.targets import Rendered, Servers, Target, extras, kind, render_map

STDIO = ("type", "command", "args", "env")
REMOTE = ("type", "url")


def entry(name: str, server: dict[str, Any], unsupported: list[str]) -> dict[str, Any] | None:
    transport = kind(server)
    if transport not in ("stdio", "http"):
        unsupported.append(f"{name}: transport {transport!r} is not supported by Kiro; skipped")
        return None
    if transport == "stdio":
        unsupported += extras(name, server, STDIO, "Kiro")
        return {k: server[k] for k in STDIO[1:] if k in server}
    unsupported += extras(name, server, REMOTE, "Kiro")
    return {"type": "streamable-http", "url": server["url"]}


def render(servers: Servers) -> Rendered:
    return render_map("mcpServers", entry, servers)


TARGET = Target("kiro", ".kiro/settings/mcp.json", render)

"""GitHub Copilot CLI `~/.copilot/mcp-config.json`: `mcpServers` with Claude-style entries,
`type` always set; `${VAR}` is expanded in `env`. No WebSocket transport."""

from __future__ import annotations

from typing import Any

from plugman.targets import Rendered, Servers, Target, extras, kind, render_map

STDIO = ("type", "command", "args", "env")
REMOTE = ("type", "url", "headers")


def entry(name: str, server: dict[str, Any], unsupported: list[str]) -> dict[str, Any] | None:
    transport = kind(server)
    if transport not in ("stdio", "http", "sse"):
        unsupported.append(
            f"{name}: transport {transport!r} is not supported by Copilot CLI; skipped"
        )
        return None
    fields = STDIO if transport == "stdio" else REMOTE
    unsupported += extras(name, server, fields, "Copilot CLI")
    return {"type": transport, **{k: server[k] for k in fields[1:] if k in server}}


def render(servers: Servers) -> Rendered:
    return render_map("mcpServers", entry, servers)


TARGET = Target("copilot-cli", "~/.copilot/mcp-config.json", render)

"""Cursor `.cursor/mcp.json`: `mcpServers`; remote is `url` + `headers` with no `type`;
variables are written `${env:VAR}`."""

from __future__ import annotations

from typing import Any

from plugman.targets import Rendered, Servers, Target, extras, kind, render_map, substitute

STDIO = ("type", "command", "args", "env")
REMOTE = ("type", "url", "headers")


def entry(name: str, server: dict[str, Any], unsupported: list[str]) -> dict[str, Any] | None:
    transport = kind(server)
    if transport not in ("stdio", "http", "sse"):
        unsupported.append(f"{name}: transport {transport!r} is not supported by Cursor; skipped")
        return None
    fields = STDIO if transport == "stdio" else REMOTE
    unsupported += extras(name, server, fields, "Cursor")
    kept = {k: server[k] for k in fields if k in server and k != "type"}
    result: dict[str, Any] = substitute(kept, lambda var: "${env:" + var + "}")
    return result


def render(servers: Servers) -> Rendered:
    return render_map("mcpServers", entry, servers)


TARGET = Target("cursor", ".cursor/mcp.json", render)

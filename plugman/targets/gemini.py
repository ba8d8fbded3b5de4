"""Gemini CLI `.gemini/settings.json`: `mcpServers`; http → `httpUrl`, sse → `url`."""

from __future__ import annotations

from typing import Any

from plugman.targets import Rendered, Servers, Target, extras, kind, render_map

STDIO = ("type", "command", "args", "env", "cwd")
REMOTE = ("type", "url", "headers")
URL_KEY = {"http": "httpUrl", "sse": "url"}


def entry(name: str, server: dict[str, Any], unsupported: list[str]) -> dict[str, Any] | None:
    transport = kind(server)
    if transport != "stdio" and transport not in URL_KEY:
        unsupported.append(
            f"{name}: transport {transport!r} is not supported by Gemini CLI; skipped"
        )
        return None
    fields = STDIO if transport == "stdio" else REMOTE
    unsupported += extras(name, server, fields, "Gemini CLI")
    result = {k: server[k] for k in fields if k in server and k != "type"}
    if transport in URL_KEY and "url" in result:
        result = {URL_KEY[transport]: result.pop("url"), **result}
    return result


def render(servers: Servers) -> Rendered:
    return render_map("mcpServers", entry, servers)


TARGET = Target("gemini", ".gemini/settings.json", render)

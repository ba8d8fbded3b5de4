"""Zed `settings.json`: `context_servers`; stdio is `command` + `args` + `env`, remote is
`url` + `headers` with no `type`. Only stdio and streamable HTTP are written."""

from __future__ import annotations

from typing import Any

from plugman.targets import Rendered, Servers, Target, extras, json_text, kind

STDIO = ("type", "command", "args", "env")
REMOTE = ("type", "url", "headers")


def entry(name: str, server: dict[str, Any], unsupported: list[str]) -> dict[str, Any] | None:
    transport = kind(server)
    if transport not in ("stdio", "http"):
        unsupported.append(f"{name}: transport {transport!r} is not supported by Zed; skipped")
        return None
    fields = STDIO if transport == "stdio" else REMOTE
    unsupported += extras(name, server, fields, "Zed")
    return {k: server[k] for k in fields if k in server and k != "type"}


def render(servers: Servers) -> Rendered:
    unsupported: list[str] = []
    found = {name: entry(name, s, unsupported) for name, s in servers.items()}
    document = {"context_servers": {name: e for name, e in found.items() if e is not None}}
    return Rendered(json_text(document), unsupported)


TARGET = Target("zed", "~/.config/zed/settings.json", render)

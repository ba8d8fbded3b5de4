"""Kiro `.kiro/settings/mcp.json`: `mcpServers`; stdio is `command` + `args` + `env`, remote is
`type: streamable-http` + `url`. Variables are written as their values (secret ones are
reported), since Kiro's expansion is not verified."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugman.targets import (
    Rendered,
    Source,
    Target,
    extras,
    fields,
    in_home,
    kind,
    literal,
    one_file,
    render_map,
    transport_note,
)

STDIO = ("type", "command", "args", "env")
REMOTE = ("type", "url")


def entry(
    name: str, server: dict[str, Any], env: Mapping[str, str], notes: list[str]
) -> dict[str, Any] | None:
    transport = kind(server)
    if transport not in ("stdio", "http"):
        notes.append(transport_note(name, transport, "Kiro"))
        return None
    keep = STDIO if transport == "stdio" else REMOTE
    notes += extras(name, server, keep, "Kiro")
    found = fields(name, server, keep, literal(env), "Kiro", notes)
    if found is None:
        return None
    return found if transport == "stdio" else {"type": "streamable-http", **found}


def render(source: Source) -> Rendered:
    return render_map("mcpServers", entry, source)


TARGET = Target(
    "kiro",
    "json",
    render,
    one_file(in_home(".kiro", "settings", "mcp.json"), ".kiro/settings/mcp.json"),
)

"""Kiro `.kiro/settings/mcp.json`: `mcpServers`; stdio is `command` + `args` + `env`, remote is
`type: streamable-http` + `url`. Variables are written as their values (secret ones are
reported), since Kiro's expansion is not verified."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugman.agents.targets import (
    Rendered,
    Source,
    Target,
    accept,
    fields,
    in_home,
    literal,
    one_file,
    render_map,
)

STDIO = ("type", "command", "args", "env")
REMOTE = ("type", "url")


def entry(
    name: str, server: dict[str, Any], env: Mapping[str, str], notes: list[str]
) -> dict[str, Any] | None:
    accepted = accept(name, server, "Kiro", ("stdio", "http"), (STDIO, REMOTE), notes)
    if accepted is None:
        return None
    transport, keep = accepted
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

"""Cursor `.cursor/mcp.json` / `~/.cursor/mcp.json`: `mcpServers`; remote is `url` + `headers`
with no `type`; variables are written `${env:VAR}`."""

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
    one_file,
    render_map,
    syntax,
)

STDIO = ("type", "command", "args", "env")
REMOTE = ("type", "url", "headers")


def entry(
    name: str, server: dict[str, Any], env: Mapping[str, str], notes: list[str]
) -> dict[str, Any] | None:
    accepted = accept(name, server, "Cursor", ("stdio", "http", "sse"), (STDIO, REMOTE), notes)
    if accepted is None:
        return None
    _, keep = accepted
    return fields(name, server, keep, syntax(env, lambda v: "${env:" + v + "}"), "Cursor", notes)


def render(source: Source) -> Rendered:
    return render_map("mcpServers", entry, source)


TARGET = Target(
    "cursor", "json", render, one_file(in_home(".cursor", "mcp.json"), ".cursor/mcp.json")
)

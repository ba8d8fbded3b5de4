"""Windsurf `~/.codeium/windsurf/mcp_config.json`: `mcpServers`; remote is `serverUrl` +
`headers` (a Cursor-style `url` does not connect); variables are written `${env:VAR}`."""

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
    accepted = accept(name, server, "Windsurf", ("stdio", "http", "sse"), (STDIO, REMOTE), notes)
    if accepted is None:
        return None
    _, keep = accepted
    found = fields(name, server, keep, syntax(env, lambda v: "${env:" + v + "}"), "Windsurf", notes)
    if found is None:
        return None
    return {("serverUrl" if k == "url" else k): v for k, v in found.items()}


def render(source: Source) -> Rendered:
    return render_map("mcpServers", entry, source)


TARGET = Target(
    "windsurf",
    "json",
    render,
    one_file(in_home(".codeium", "windsurf", "mcp_config.json"), None),
    ("user",),
)

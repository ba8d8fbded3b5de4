"""Continue `.continue/config.yaml`: `mcpServers` is a YAML list, each item carrying its
`name`; stdio is `command` + `args` + `env`, remote is `type: streamable-http` + `url`.
Variables are written as their values here (secret ones are reported)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugman.agents.targets import (
    Part,
    Rendered,
    Source,
    Target,
    accept,
    fields,
    in_home,
    literal,
    one_file,
)

STDIO = ("type", "command", "args", "env")
REMOTE = ("type", "url")


def entry(
    name: str, server: dict[str, Any], env: Mapping[str, str], notes: list[str]
) -> dict[str, Any] | None:
    accepted = accept(name, server, "Continue", ("stdio", "http"), (STDIO, REMOTE), notes)
    if accepted is None:
        return None
    transport, keep = accepted
    found = fields(name, server, keep, literal(env), "Continue", notes)
    if found is None:
        return None
    if transport == "stdio":
        return {"name": name, **found}
    return {"name": name, "type": "streamable-http", **found}


def render(source: Source) -> Rendered:
    notes: list[str] = []
    found = {n: entry(n, s, source.env, notes) for n, s in source.servers.items()}
    items = {n: e for n, e in found.items() if e is not None}
    return Rendered({"mcp": [Part(("mcpServers",), items, listed=True)]}, notes)


TARGET = Target(
    "continue",
    "yaml",
    render,
    one_file(in_home(".continue", "config.yaml"), ".continue/config.yaml"),
)

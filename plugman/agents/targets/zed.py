"""Zed `settings.json`: `context_servers`; stdio is `command` + `args` + `env`, remote is
`url` + `headers` with no `type`. Only stdio and streamable HTTP are written. Zed expands no
variables: non-secret ones are written as their values here; secret ones are reported."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugman.agents.targets import (
    Rendered,
    Source,
    Target,
    accept,
    fields,
    in_config_home,
    literal,
    one_file,
    render_map,
)

STDIO = ("type", "command", "args", "env")
REMOTE = ("type", "url", "headers")


def entry(
    name: str, server: dict[str, Any], env: Mapping[str, str], notes: list[str]
) -> dict[str, Any] | None:
    accepted = accept(name, server, "Zed", ("stdio", "http"), (STDIO, REMOTE), notes)
    if accepted is None:
        return None
    _, keep = accepted
    return fields(name, server, keep, literal(env), "Zed", notes)


def render(source: Source) -> Rendered:
    return render_map("context_servers", entry, source)


TARGET = Target(
    "zed", "json", render, one_file(in_config_home("zed", "settings.json"), None), ("user",)
)

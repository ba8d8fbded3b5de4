"""Gemini CLI `.gemini/settings.json`: `mcpServers`; http → `httpUrl`, sse → `url`. Gemini
expands `${VAR}` itself but has no default syntax."""

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

STDIO = ("type", "command", "args", "env", "cwd")
REMOTE = ("type", "url", "headers")
URL_KEY = {"http": "httpUrl", "sse": "url"}


def entry(
    name: str, server: dict[str, Any], env: Mapping[str, str], notes: list[str]
) -> dict[str, Any] | None:
    accepted = accept(name, server, "Gemini CLI", ("stdio", *URL_KEY), (STDIO, REMOTE), notes)
    if accepted is None:
        return None
    transport, keep = accepted
    result = fields(name, server, keep, syntax(env, lambda v: "${" + v + "}"), "Gemini CLI", notes)
    if result is None:
        return None
    if transport in URL_KEY and "url" in result:
        result = {URL_KEY[transport]: result.pop("url"), **result}
    return result


def render(source: Source) -> Rendered:
    return render_map("mcpServers", entry, source)


TARGET = Target(
    "gemini",
    "json",
    render,
    one_file(in_home(".gemini", "settings.json"), ".gemini/settings.json"),
)

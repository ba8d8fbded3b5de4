"""Gemini CLI `.gemini/settings.json`: `mcpServers`; http → `httpUrl`, sse → `url`. Gemini
expands `${VAR}` itself but has no default syntax."""

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
    one_file,
    render_map,
    syntax,
    transport_note,
)

STDIO = ("type", "command", "args", "env", "cwd")
REMOTE = ("type", "url", "headers")
URL_KEY = {"http": "httpUrl", "sse": "url"}


def entry(
    name: str, server: dict[str, Any], env: Mapping[str, str], notes: list[str]
) -> dict[str, Any] | None:
    transport = kind(server)
    if transport != "stdio" and transport not in URL_KEY:
        notes.append(transport_note(name, transport, "Gemini CLI"))
        return None
    keep = STDIO if transport == "stdio" else REMOTE
    notes += extras(name, server, keep, "Gemini CLI")
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

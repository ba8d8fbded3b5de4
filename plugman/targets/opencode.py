"""OpenCode `opencode.json`: `mcp`; stdio is `type: local` with `command` as one array
(command + args) and `environment`; remote is `type: remote` + `url` + `headers`. Variables
are written `{env:VAR}`, OpenCode's substitution syntax."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugman.targets import (
    Rendered,
    Source,
    Target,
    extras,
    fields,
    in_config_home,
    kind,
    one_file,
    render_map,
    syntax,
    transport_note,
)

STDIO = ("type", "command", "args", "env")
REMOTE = ("type", "url", "headers")


def entry(
    name: str, server: dict[str, Any], env: Mapping[str, str], notes: list[str]
) -> dict[str, Any] | None:
    transport = kind(server)
    if transport not in ("stdio", "http"):
        notes.append(transport_note(name, transport, "OpenCode"))
        return None
    keep = STDIO if transport == "stdio" else REMOTE
    notes += extras(name, server, keep, "OpenCode")
    found = fields(name, server, keep, syntax(env, lambda v: "{env:" + v + "}"), "OpenCode", notes)
    if found is None:
        return None
    if transport == "stdio":
        result: dict[str, Any] = {
            "type": "local",
            "command": [found["command"], *found.get("args", [])],
        }
        if "env" in found:
            result["environment"] = found["env"]
    else:
        result = {"type": "remote", **found}
    result["enabled"] = True
    return result


def render(source: Source) -> Rendered:
    return render_map("mcp", entry, source)


TARGET = Target(
    "opencode",
    "json",
    render,
    one_file(in_config_home("opencode", "opencode.json"), "opencode.json"),
)

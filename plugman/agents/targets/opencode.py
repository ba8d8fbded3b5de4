"""OpenCode `opencode.json`: `mcp`; stdio is `type: local` with `command` as one array
(command + args) and `environment`; remote is `type: remote` + `url` + `headers`. Variables
are written `{env:VAR}`, OpenCode's substitution syntax."""

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
    one_file,
    render_map,
    syntax,
)

STDIO = ("type", "command", "args", "env")
REMOTE = ("type", "url", "headers")


def entry(
    name: str, server: dict[str, Any], env: Mapping[str, str], notes: list[str]
) -> dict[str, Any] | None:
    accepted = accept(name, server, "OpenCode", ("stdio", "http"), (STDIO, REMOTE), notes)
    if accepted is None:
        return None
    transport, keep = accepted
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

"""GitHub Copilot CLI `~/.copilot/mcp-config.json` (workspace `.mcp.json`): `mcpServers` with
Claude-style entries, `type` always set. Copilot expands `${VAR}` and `${VAR:-d}` in `env`
only; elsewhere non-secret variables are written as their values. No WebSocket transport."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugman.targets import (
    Rendered,
    Source,
    Target,
    extras,
    fields,
    in_env_dir,
    kind,
    literal,
    one_file,
    render_map,
    transport_note,
)

STDIO = ("type", "command", "args", "env")
REMOTE = ("type", "url", "headers")


def entry(
    name: str, server: dict[str, Any], env: Mapping[str, str], notes: list[str]
) -> dict[str, Any] | None:
    transport = kind(server)
    if transport not in ("stdio", "http", "sse"):
        notes.append(transport_note(name, transport, "Copilot CLI"))
        return None
    keep = STDIO if transport == "stdio" else REMOTE
    notes += extras(name, server, keep, "Copilot CLI")
    found = fields(
        name, server, [k for k in keep if k != "env"], literal(env), "Copilot CLI", notes
    )
    if found is None:
        return None
    if "env" in server:
        found["env"] = server["env"]
    return {"type": transport, **found}


def render(source: Source) -> Rendered:
    return render_map("mcpServers", entry, source)


TARGET = Target(
    "copilot-cli",
    "json",
    render,
    one_file(in_env_dir("COPILOT_HOME", ".copilot", "mcp-config.json"), ".mcp.json"),
)

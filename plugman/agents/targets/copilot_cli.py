"""GitHub Copilot CLI `~/.copilot/mcp-config.json` (workspace `.mcp.json`): `mcpServers` with
Claude-style entries, `type` always set. Copilot expands `${VAR}` and `${VAR:-d}` in `env`
only; elsewhere non-secret variables are written as their values. No WebSocket transport."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugman.agents.targets import (
    Rendered,
    Source,
    Target,
    accept,
    fields,
    in_env_dir,
    literal,
    one_file,
    render_map,
)

STDIO = ("type", "command", "args", "env")
REMOTE = ("type", "url", "headers")


def entry(
    name: str, server: dict[str, Any], env: Mapping[str, str], notes: list[str]
) -> dict[str, Any] | None:
    accepted = accept(name, server, "Copilot CLI", ("stdio", "http", "sse"), (STDIO, REMOTE), notes)
    if accepted is None:
        return None
    transport, keep = accepted
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

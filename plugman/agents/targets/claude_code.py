"""Claude Code: servers in `.mcp.json` (project) or `~/.claude.json` (user: top level; local:
under `projects[<project>]`), each with `type` set; hooks in the scope's settings file.
Claude expands `${VAR}` and `${VAR:-default}` itself, so references are written as they are."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plugman.agents.targets import Location, Part, Place, Rendered, Source, Target, hook_id, kind
from plugman.core.state import SCOPES


def entry(server: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind(server), **{k: v for k, v in server.items() if k != "type"}}


def render(source: Source) -> Rendered:
    files = {"mcp": [Part(("mcpServers",), {n: entry(s) for n, s in source.servers.items()})]}
    hooks = [
        Part(("hooks", event), {hook_id(event, g): g for g in groups}, listed=True)
        for event, groups in source.hooks.items()
    ]
    if hooks:
        files["settings"] = hooks
    return Rendered(files, [])


def files(place: Place) -> dict[str, Location]:
    given = place.env.get("CLAUDE_CONFIG_DIR")
    config = Path(given) if given else place.home / ".claude"
    state = config / ".claude.json" if given else place.home / ".claude.json"
    settings = place.project / ".claude"
    found = {
        "user": {"mcp": Location(state), "settings": Location(config / "settings.json")},
        "project": {
            "mcp": Location(place.project / ".mcp.json"),
            "settings": Location(settings / "settings.json"),
        },
        "local": {
            "mcp": Location(state, ("projects", str(place.project))),
            "settings": Location(settings / "settings.local.json"),
        },
    }
    return found.get(place.scope, {})


TARGET = Target("claude-code", "json", render, files, SCOPES, hooks=True)

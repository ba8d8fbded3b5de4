"""Which agents received which components of each plugin here (`plugman list`), read from the
export record (servers and hooks written into agents' files) and the deployment record (skills,
commands and subagents written as files)."""

from __future__ import annotations

import re

from plugman.agents import artifacts
from plugman.config import export_record
from plugman.core.paths import Paths
from plugman.core.state import SCOPES

HOOK_ID = re.compile(r"^[A-Za-z]+:[0-9a-f]{12}$")  # targets.hook_id: EVENT:<12 hex>


def delivered(paths: Paths) -> dict[str, dict[str, list[str]]]:
    """plugin id → agent → the kinds of components it received (`hooks`, `mcp`, `skills`, …),
    in the user scope and this project's scopes."""
    here = {export_record.key("", scope, paths).strip() for scope in SCOPES}
    found: dict[str, dict[str, set[str]]] = {}

    def add(plugin: str, key: str, kind: str) -> None:
        agent, _, rest = key.partition(" ")
        if rest in here:
            found.setdefault(plugin, {}).setdefault(agent, set()).add(kind)

    for key, files in export_record.load(paths).items():
        for sealed in files.values():
            for entry, plugin in sealed.owners.items():
                add(plugin, key, "hooks" if HOOK_ID.match(entry) else "mcp")
    for item in artifacts.load(paths).values():
        for key in item["links"]:
            add(item["owner"], key, item.get("kind", "files"))
    return {
        plugin: {agent: sorted(kinds) for agent, kinds in sorted(agents.items())}
        for plugin, agents in found.items()
    }

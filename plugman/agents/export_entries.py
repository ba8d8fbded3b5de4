"""Which resolved entries an export writes: one scope's, under their exported names, and
never a literal secret into a project file (see `plugman.agents.export`)."""

from __future__ import annotations

from typing import Any

from plugman.agents.targets import Hooks, Servers, hook_id
from plugman.config import redact


def servers(
    document: dict[str, Any], own: str | None, guard: bool, owners: dict[str, str], notes: list[str]
) -> Servers:
    """The resolved servers under their exported names; none from the file being written (the
    project's `.mcp.json` already holds its own), none with a literal secret when `guard`."""
    from plugman.runtime.naming import split_server

    found: Servers = {}
    for name, given in document["mcpServers"].items():
        origin = given["origin"]
        entry = {k: v for k, v in given.items() if k != "origin"}
        plugin, inner = split_server(name)
        exported = f"plugin_{plugin}_{inner}" if plugin else name
        if origin["file"] == own or (guard and refused(exported, entry, origin, notes)):
            continue
        found[exported] = entry
        if origin.get("plugin"):
            owners[exported] = origin["plugin"]
    return found


def hooks(document: dict[str, Any], guard: bool, owners: dict[str, str], notes: list[str]) -> Hooks:
    """The resolved hook groups, by event; none with a literal secret when `guard`."""
    found: Hooks = {}
    for event, groups in document["hooks"].items():
        for given in groups:
            group = {k: v for k, v in given.items() if k != "origin"}
            if guard and refused(f"{event} hook", group, given["origin"], notes):
                continue
            found.setdefault(event, []).append(group)
            if "plugin" in given["origin"]:
                owners[hook_id(event, group)] = given["origin"]["plugin"]
    return found


def refused(name: str, value: dict[str, Any], origin: dict[str, str], notes: list[str]) -> bool:
    """A literal secret never goes into a project file (it is committed): the entry is left
    out, with a note saying what, where and what to do."""
    given = value.get("hooks")
    handlers: list[Any] = given if isinstance(given, list) else [value]
    fields = [f for h in handlers if isinstance(h, dict) for f in redact.literals(h)]
    if not fields:
        return False
    notes.append(
        f"{name}: not exported: {', '.join(fields)} holds a literal secret ({where(origin)}), "
        "and project files are committed; write it as a reference such as ${API_KEY} and "
        "set the variable in your environment"
    )
    return True


def where(origin: dict[str, str]) -> str:
    return f"plugin {origin['plugin']}" if origin.get("plugin") else origin["file"]

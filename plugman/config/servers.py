"""`plugman mcp add|add-json|remove`: MCP servers in the user, project and local scopes.

user and local servers are `[mcp_servers.<name>]` tables in their plugman.toml (edited through
plugman.config.declarations, so comments survive and removing restores the bytes); project
servers go in `<project>/.mcp.json` (plugman.config.mcp_json). A present managed-mcp.json refuses
every change (docs/claude-format.md#mcp-policy); bad or reserved names
(plugman.config.server_entries) and duplicates are refused as `claude mcp add` does
(docs/claude-format.md#mcp-server-entries).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, NamedTuple

import tomlkit

from plugman.config import declarations, mcp_json
from plugman.config.server_entries import check_entry, check_name, refuse_literal_secrets
from plugman.core.errors import PlugmanError
from plugman.core.paths import Paths
from plugman.core.session import Finish, session
from plugman.core.state import SCOPES, InstallRecord, Scope

TABLE = "mcp_servers"


class ServerChange(NamedTuple):
    """An MCP server `plugman mcp add` or `remove` wrote into (or took out of) a scope's file."""

    action: Literal["added", "removed"]
    name: str
    scope: Scope
    file: str
    entry: dict[str, Any]
    warnings: list[str]


def refuse_if_managed(paths: Paths, verb: str) -> None:
    for file in paths.managed_mcp_files():
        raise PlugmanError(
            f"Cannot {verb} MCP server: enterprise MCP configuration is active and has "
            "exclusive control over MCP servers",
            hint=f"{file} decides which servers load; ask your administrator",
        )


def add(
    paths: Paths, name: str, entry: dict[str, Any], scope: Scope, finish: Finish | None = None
) -> ServerChange:
    check_name(name)
    warnings = check_entry(name, entry)
    if scope == "project":  # .mcp.json is committed
        refuse_literal_secrets(name, entry, paths.project_mcp.name)
    refuse_if_managed(paths, "add")
    _refuse_duplicate(paths, name, scope)
    with session(paths) as work:
        _refuse_duplicate(paths, name, scope)  # again, under the lock
        record = InstallRecord.load(paths, scope)
        if scope == "project":
            target = paths.project_mcp
            declarations.check_project_file(paths, target)
            declarations.write(
                work.tx, paths, target, mcp_json.add(target, name, entry, record.owned)
            )
        else:
            target = declarations.set_entry(work.tx, paths, record, TABLE, name, _toml(entry))
        work.tx.write(record.path, record.to_bytes())
        if finish is not None:
            finish(work)
    return ServerChange("added", name, scope, str(target), entry, warnings)


def _refuse_duplicate(paths: Paths, name: str, scope: Scope) -> None:
    if any(name in found for found in _files_of(paths, scope).values()):
        raise PlugmanError(
            f"MCP server {name} already exists in the {scope} scope",
            hint=f"plugman mcp remove {name} --scope {scope}, then add it again",
        )


def _files_of(paths: Paths, scope: Scope) -> dict[Path, dict[str, Any]]:
    """The server maps of the files a scope keeps its servers in."""
    toml = declarations.path_for(paths, scope)
    found = {toml: declarations.entries(toml, TABLE)}
    if scope == "project":
        found = {paths.project_mcp: mcp_json.servers(paths.project_mcp), **found}
    return found


def _toml(entry: dict[str, Any]) -> tomlkit.items.Table:
    """A `[mcp_servers.<name>]` table; env, headers and other maps inline."""
    table = tomlkit.table()
    for key, value in entry.items():
        if isinstance(value, dict):
            inline = tomlkit.inline_table()
            inline.update(value)
            table[key] = inline
        else:
            table[key] = value
    return table


def remove(
    paths: Paths, name: str, scope: Scope | None, finish: Finish | None = None
) -> ServerChange:
    refuse_if_managed(paths, "remove")
    _locate(paths, name, scope)
    with session(paths) as work:
        found, target = _locate(paths, name, scope)  # again, under the lock
        entry = _files_of(paths, found)[target][name]
        record = InstallRecord.load(paths, found)
        if target == paths.project_mcp:
            declarations.check_project_file(paths, target)
            data = mcp_json.remove(target, name, record.owned)
            declarations.write(work.tx, paths, target, data, declarations.home_of(paths, found))
        else:
            declarations.drop_entry(work.tx, paths, record, TABLE, name)
        work.tx.write(record.path, record.to_bytes())
        if finish is not None:
            finish(work)
    return ServerChange("removed", name, found, str(target), entry, [])


def _locate(paths: Paths, name: str, scope: Scope | None) -> tuple[Scope, Path]:
    hits = [
        (each, file)
        for each in ([scope] if scope else SCOPES)
        for file, found in _files_of(paths, each).items()
        if name in found
    ]
    if not hits:
        where = f"the {scope} scope" if scope else "any scope (user, project, local)"
        raise PlugmanError(f"no MCP server {name} in {where}", hint="plugman mcp list")
    if len({each for each, _ in hits}) > 1:
        listed = ", ".join(f"{each} ({file})" for each, file in hits)
        raise PlugmanError(
            f"MCP server {name} exists in multiple scopes: {listed}; pass --scope",
            hint=f"plugman mcp remove {name} --scope " + hits[0][0],
        )
    return hits[0]

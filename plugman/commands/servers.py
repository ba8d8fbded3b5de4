"""`plugman mcp add|add-json|remove`: MCP servers in the user, project and local scopes, and
the linked agents brought up to date in the same transaction.

user and local servers are `[mcp_servers.<name>]` tables in their plugman.toml (edited through
plugman.config.declarations, so comments survive and removing restores the bytes); project
servers go in `<project>/.mcp.json` (plugman.config.servers.mcp_json). A present managed-mcp.json
refuses every change (docs/claude-format.md#mcp-policy); bad or reserved names
(plugman.config.servers.entries) and duplicates are refused as `claude mcp add` does
(docs/claude-format.md#mcp-server-entries).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, NamedTuple

import tomlkit

from plugman.agents import deploy
from plugman.commands import server_vars
from plugman.config import declarations
from plugman.config.servers import mcp_json
from plugman.config.servers.entries import check_entry, check_name, refuse_literal_secrets
from plugman.config.servers.listing import TABLE, files_of, locate
from plugman.core.errors import PlugmanError
from plugman.core.paths import Paths
from plugman.core.session import session
from plugman.core.state import InstallRecord, Scope


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
    paths: Paths,
    name: str,
    entry: dict[str, Any],
    scope: Scope,
    env: Mapping[str, str],
    ask: Callable[[], Mapping[str, str]] | None = None,
) -> ServerChange:
    """Add `entry` as `name` in `scope`. `ask`, once the entry is checked: values for the
    `${VAR}` references it holds (`mcp add --from` on a terminal), kept as `mcp vars set`
    keeps them, in the same session, so the agents get the launcher at once."""
    check_name(name)
    warnings = check_entry(name, entry)
    if scope == "project":  # .mcp.json is committed
        refuse_literal_secrets(name, entry, paths.project_mcp.name)
    refuse_if_managed(paths, "add")
    _refuse_duplicate(paths, name, scope)
    values = ask() if ask else {}
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
        if values:
            server_vars.keep(work, list(values))
        deploy.refresh(work, env)  # the linked agents follow, in the same transaction
    server_vars.store(paths, env, values)  # the secret store is not journaled: after the commit
    return ServerChange("added", name, scope, str(target), entry, warnings)


def _refuse_duplicate(paths: Paths, name: str, scope: Scope) -> None:
    if any(name in found for found in files_of(paths, scope).values()):
        raise PlugmanError(
            f"MCP server {name} already exists in the {scope} scope",
            hint=f"plugman mcp remove {name} --scope {scope}, then add it again",
        )


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


def remove(paths: Paths, name: str, scope: Scope | None, env: Mapping[str, str]) -> ServerChange:
    refuse_if_managed(paths, "remove")
    locate(paths, name, scope)
    with session(paths) as work:
        found, target = locate(paths, name, scope)  # again, under the lock
        entry = files_of(paths, found)[target][name]
        record = InstallRecord.load(paths, found)
        if target == paths.project_mcp:
            declarations.check_project_file(paths, target)
            data = mcp_json.remove(target, name, record.owned)
            declarations.write(work.tx, paths, target, data, declarations.home_of(paths, found))
        else:
            declarations.drop_entry(work.tx, paths, record, TABLE, name)
        work.tx.write(record.path, record.to_bytes())
        deploy.refresh(work, env)  # the linked agents follow, in the same transaction
    return ServerChange("removed", name, found, str(target), entry, [])

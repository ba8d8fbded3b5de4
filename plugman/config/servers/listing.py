"""`plugman mcp list` and `mcp get`: every scope's servers and what resolution made of each.

Status is `active` (it is the one agents get), `shadowed` (a higher scope has the name) or the
reason resolution dropped it: `policy`, `pending-approval`, `managed-exclusive`,
`endpoint-duplicate`, `missing-variable`, and for an entry left out as it was read (so it has
no resolved entry to show), `needs-config`, `unsafe-config` (a plugin's options) or `invalid`
(its file gets it wrong).

`files_of` and `locate` read the servers a scope's own files declare, for `mcp add|remove`
(plugman.commands.servers).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from plugman.config import declarations
from plugman.config.merge import Dropped, Origin, Server, rank
from plugman.config.resolution import Resolution, resolve
from plugman.config.servers import mcp_json
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.paths import Paths
from plugman.core.state import SCOPES, Scope
from plugman.manifest.diagnostics import Diagnostic


class Status(NamedTuple):
    server: Server
    status: str  # active | shadowed | inactive | a `Dropped.reason`
    detail: str


class Listing(NamedTuple):
    rows: list[Status]
    diagnostics: list[Diagnostic]  # problems in the files the servers come from
    broken: bool  # errors in a file the user keeps (Resolution.broken)


def listing(paths: Paths, env: Mapping[str, str]) -> Listing:
    """One row per server entry in every scope, highest precedence first within a name, and
    what is wrong with the files they are read from (a broken one contributes no servers)."""
    resolution = resolve(paths, env)
    layers = resolution.layers
    dropped = {(d.name, d.origin): d for d in resolution.dropped if d.kind == "server"}
    unread = [Server(d.name, {}, d.origin) for d in layers.dropped if d.kind == "server"]
    every = [*(layers.managed or ()), *layers.servers, *unread]
    ordered = sorted(every, key=lambda s: (s.name, rank(s.origin), s.origin.file))
    rows = [Status(server, *_status(server, resolution, dropped)) for server in ordered]
    return Listing(rows, resolution.diagnostics, bool(resolution.broken(paths)))


def get(paths: Paths, env: Mapping[str, str], name: str) -> list[Status]:
    """Every scope's entry called `name`, with its status."""
    rows = [row for row in listing(paths, env).rows if row.server.name == name]
    if not rows:
        raise UsageError(
            f"no MCP server named {name!r} in any scope", hint="see them all: plugman mcp list"
        )
    return rows


def _status(
    server: Server, resolution: Resolution, dropped: dict[tuple[str, Origin], Dropped]
) -> tuple[str, str]:
    gone = dropped.get((server.name, server.origin))
    if gone is not None:
        return gone.reason, gone.detail
    winner = resolution.servers.get(server.name)
    if winner is not None and winner.origin == server.origin:
        return "active", ""
    if winner is not None:
        return "shadowed", f"{winner.origin.scope} ({winner.origin.file}) has the same name"
    return "inactive", ""


TABLE = "mcp_servers"  # user and local servers: `[mcp_servers.<name>]` in their plugman.toml


def files_of(paths: Paths, scope: Scope) -> dict[Path, dict[str, Any]]:
    """The server maps of the files a scope keeps its servers in."""
    toml = declarations.path_for(paths, scope)
    found = {toml: declarations.entries(toml, TABLE)}
    if scope == "project":
        found = {paths.project_mcp: mcp_json.servers(paths.project_mcp), **found}
    return found


def locate(paths: Paths, name: str, scope: Scope | None) -> tuple[Scope, Path]:
    """The scope and file declaring the server `name` (in `scope`, or the one scope that has
    it); an error when none does, or when several do and no `scope` says which."""
    hits = [
        (each, file)
        for each in ([scope] if scope else SCOPES)
        for file, found in files_of(paths, each).items()
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

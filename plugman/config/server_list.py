"""`plugman mcp list` and `mcp get`: every scope's servers and what resolution made of each.

Status is `active` (it is the one agents get), `shadowed` (a higher scope has the name) or the
reason resolution dropped it: `policy`, `pending-approval`, `managed-exclusive`,
`endpoint-duplicate`, `missing-variable`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from plugman.config import document as config
from plugman.config import redact, trust
from plugman.config.merge import Dropped, Origin, Resolved, Server, rank
from plugman.core.errors import UsageError
from plugman.core.paths import Paths
from plugman.manifest.diagnostics import Diagnostic


class Listing(NamedTuple):
    rows: list[dict[str, Any]]
    diagnostics: list[Diagnostic]  # problems in the files the servers come from


def listing(paths: Paths, env: Mapping[str, str], show_secrets: bool = False) -> Listing:
    """One row per server entry in every scope, highest precedence first within a name, and
    what is wrong with the files they are read from (a broken one contributes no servers)."""
    found, result = trust.resolved_here(paths, dict(env))
    layers = found.layers
    dropped = {(d.name, d.origin): d for d in result.dropped if d.kind == "server"}
    every = [*(layers.managed or ()), *layers.servers]
    ordered = sorted(every, key=lambda s: (s.name, rank(s.origin), s.origin.file))
    rows = [_row(server, result, dropped, show_secrets) for server in ordered]
    return Listing(rows, found.diagnostics)


def get(
    paths: Paths, env: Mapping[str, str], name: str, show_secrets: bool = False
) -> list[dict[str, Any]]:
    """Every scope's entry called `name`, with its status."""
    rows = [row for row in listing(paths, env, show_secrets).rows if row["name"] == name]
    if not rows:
        raise UsageError(
            f"no MCP server named {name!r} in any scope", hint="see them all: plugman mcp list"
        )
    return rows


def _row(
    server: Server,
    result: Resolved,
    dropped: dict[tuple[str, Origin], Dropped],
    show_secrets: bool,
) -> dict[str, Any]:
    status, detail = _status(server, result, dropped)
    entry = server.entry if show_secrets else redact.entry(server.entry)
    return {
        "name": server.name,
        **config.origin(server.origin),
        "status": status,
        "detail": detail,
        "transport": str(entry.get("type", "stdio")),
        "target": _target(entry),
        "entry": entry,
    }


def _status(
    server: Server, result: Resolved, dropped: dict[tuple[str, Origin], Dropped]
) -> tuple[str, str]:
    gone = dropped.get((server.name, server.origin))
    if gone is not None:
        return gone.reason, gone.detail
    winner = result.servers.get(server.name)
    if winner is not None and winner.origin == server.origin:
        return "active", ""
    if winner is not None:
        return "shadowed", f"{winner.origin.scope} ({winner.origin.file}) has the same name"
    return "inactive", ""


def _target(entry: dict[str, Any]) -> str:
    if isinstance(entry.get("url"), str):
        return str(entry["url"])
    return " ".join([str(entry.get("command")), *[str(a) for a in entry.get("args", [])]])

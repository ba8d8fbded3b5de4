"""`plugman config resolve` and `config explain`: the resolved config as a document, with why."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugman.config import redact, trust
from plugman.config.merge import Dropped, Origin, Resolved, Server
from plugman.core.errors import UsageError
from plugman.core.paths import Paths

FORMAT = 1


def origin(value: Origin) -> dict[str, str]:
    found = {"scope": value.scope, "file": value.file}
    if value.plugin:
        found["plugin"] = value.plugin
    return found


def server(value: Server, show_secrets: bool) -> dict[str, Any]:
    entry = value.entry if show_secrets else redact.entry(value.entry)
    return {**entry, "origin": origin(value.origin)}


def document(
    paths: Paths,
    env: Mapping[str, str],
    show_secrets: bool = False,
    references: bool = False,
    only: str | None = None,
) -> dict[str, Any]:
    """The resolved config (schemas/resolved-config.schema.json); with `references`, server
    entries keep their `${VAR}` references unexpanded; with `only`, one scope's own entries
    (what an export at that scope writes)."""
    found, result = trust.resolved_here(paths, dict(env), references, only)
    hooks: dict[str, list[dict[str, Any]]] = {}
    for hook in result.hooks:
        handler = hook.handler if show_secrets else _hook(hook.handler)
        group: dict[str, Any] = {"hooks": [handler], "origin": origin(hook.origin)}
        if hook.matcher:
            group["matcher"] = hook.matcher
        hooks.setdefault(hook.event, []).append(group)
    notes = [_dropped(d) for d in result.dropped] + _shadowed(result)
    notes += [
        {
            "severity": d.severity,
            "code": d.code,
            "message": d.message,
            "file": d.file,
            "path": d.path,
        }
        for d in found.diagnostics
    ]
    return {
        "format": FORMAT,
        "mcpServers": {name: server(s, show_secrets) for name, s in result.servers.items()},
        "hooks": hooks,
        "skills": {
            n: {"path": s.path, "origin": origin(s.origin)} for n, s in result.skills.items()
        },
        "plugins": found.plugins,
        "diagnostics": notes,
    }


def _hook(handler: dict[str, Any]) -> dict[str, Any]:
    return redact.entry(handler) if "headers" in handler else handler


def _dropped(item: Dropped) -> dict[str, Any]:
    where = f"{item.origin.scope} ({item.origin.file})"
    return {
        "severity": "info",
        "code": item.reason,
        "file": item.origin.file,
        "message": f"{item.kind} {item.name!r} from {where} dropped: {item.detail}",
    }


def _shadowed(result: Resolved) -> list[dict[str, Any]]:
    notes = []
    for name, losers in result.shadowed.items():
        winner = result.servers[name].origin
        for loser in losers:
            notes.append(
                {
                    "severity": "info",
                    "code": "shadowed",
                    "file": loser.origin.file,
                    "message": f"server {name!r} from {loser.origin.scope} "
                    f"({loser.origin.file}) is shadowed by {winner.scope} ({winner.file})",
                }
            )
    return notes


def explain(
    paths: Paths, env: Mapping[str, str], name: str, show_secrets: bool = False
) -> dict[str, Any]:
    """Everything resolution did with entries called `name`."""
    _found, result = trust.resolved_here(paths, dict(env))
    winner = result.servers.get(name)
    if (
        winner is None
        and name not in result.shadowed
        and all(d.name != name for d in result.dropped)
    ):
        raise UsageError(
            f"no MCP server named {name!r} in any scope", hint="see them all: plugman mcp list"
        )
    return {
        "name": name,
        "winner": server(winner, show_secrets) if winner else None,
        "shadowed": [server(s, show_secrets) for s in result.shadowed.get(name, [])],
        "dropped": [
            {"reason": d.reason, "detail": d.detail, "origin": origin(d.origin), "kind": d.kind}
            for d in result.dropped
            if d.name == name
        ],
    }

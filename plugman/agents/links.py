"""Linked agents: which agents each scope feeds, declared in that scope's plugman.toml.

    [agents]
    gemini = {}
    codex = { via_gateway = true }
    claude-code = { notify_updates = true }   # a SessionStart update notice (runtime.notices)

A team commits `[agents]` in the project's plugman.toml; the user and local scopes have their
own. Every command that changes what is resolved deploys to the linked agents in the same
transaction (`plugman.agents.deploy`); `plugman agents add|remove` change the links.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from plugman.config import declarations
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.jsonvalue import JSONObject
from plugman.core.paths import Paths
from plugman.core.state import SCOPES, Scope

TABLE = "agents"
NOTIFY = "notify_updates"


class Link(NamedTuple):
    agent: str
    scope: Scope
    via_gateway: bool = False
    notify: bool = (
        False  # `notify_updates`: the update notice hook (plugman.runtime.launch.notices)
    )

    def declaration(self) -> JSONObject:
        found: JSONObject = {"via_gateway": True} if self.via_gateway else {}
        return found | ({NOTIFY: True} if self.notify else {})


def linked(paths: Paths, scope: Scope) -> list[Link]:
    """The agents `scope` feeds, as its plugman.toml declares them (a value that is not a table
    links the agent plainly: `gemini = true` is read as `gemini = {}`)."""
    found = declarations.declared(paths, scope, TABLE)
    return [
        Link(name, scope, _on(value, "via_gateway"), _on(value, NOTIFY))
        for name, value in sorted(found.items())
        if value is not False
    ]


def _on(value: Any, key: str) -> bool:
    return isinstance(value, dict) and value.get(key) is True


def every(paths: Paths) -> list[Link]:
    """Every scope's links, user first."""
    return [link for scope in SCOPES for link in linked(paths, scope)]


def readable(paths: Paths) -> list[Link]:
    """`every`, without the scopes whose plugman.toml cannot be read: for a report that goes on
    past a broken file (the file's own check says where it is broken)."""
    found = []
    for scope in SCOPES:
        try:
            found += linked(paths, scope)
        except PlugmanError:
            continue
    return found


def check(names: list[str], scope: Scope, known: Mapping[str, tuple[Scope, ...]]) -> None:
    """Every name is an agent plugman knows, with files in `scope`; a usage error otherwise."""
    if not names:
        raise UsageError("name at least one agent", hint="see them: plugman agents list")
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(
            f"unknown agent {', '.join(map(repr, unknown))}",
            hint="known agents: " + ", ".join(known),
        )
    scopeless = [n for n in names if scope not in known[n]]
    if scopeless:
        raise UsageError(
            f"{', '.join(scopeless)} has no {scope}-scope files",
            hint=f"{scopeless[0]} reads the {' and '.join(known[scopeless[0]])} scope(s): "
            "pass --scope",
        )


class Agent(NamedTuple):
    """An agent plugman can feed (`plugman agents list`)."""

    name: str
    present: bool  # found on this machine
    scopes: tuple[Scope, ...]  # the scopes it has files in
    links: tuple[Link, ...]  # where it is linked here


def listing(paths: Paths, home: Path, env: Mapping[str, str]) -> list[Agent]:
    """Every agent plugman knows (built-in or an extension's), whether its `presence` shows it
    is here, and where it is linked."""
    # lazy: agents.targets (+54 ms) and extensions are not loaded by `plugman list` (empty)
    from plugman import extensions
    from plugman.agents.targets import components

    linked_here = every(paths)
    return [
        Agent(
            name,
            bool(components.present(spec.presence, home, env)),
            spec.scopes_of(),
            tuple(link for link in linked_here if link.agent == name),
        )
        for name, spec in extensions.targets().items()
    ]


def unreached(paths: Paths, scope: Scope) -> str | None:
    """A warning when plugins installed in `scope` reach no agent: none is linked there, while
    some are linked in other scopes (each link gets only its own scope's plugins)."""
    everywhere = every(paths)
    if not everywhere or any(link.scope == scope for link in everywhere):
        return None
    from plugman import extensions  # lazy: not loaded by `plugman list`

    elsewhere = ", ".join(f"{link.agent} ({link.scope})" for link in everywhere)
    specs = extensions.targets(entry_points=False)
    able = [a for a in dict.fromkeys(link.agent for link in everywhere) if a in specs]
    able = [a for a in able if scope in specs[a].scopes_of()] or [
        name for name, spec in specs.items() if scope in spec.scopes_of()
    ]
    return (
        f"no agent is linked in the {scope} scope, so what is installed there reaches none "
        f"(linked: {elsewhere}; each gets its own scope's plugins); to deliver it: "
        f"plugman agents add {' '.join(able[:3]) or 'AGENT'} --scope {scope}"
    )

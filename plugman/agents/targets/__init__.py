"""Targets: each writes the resolved MCP servers (and, for Claude Code, hooks) in one agent's
native config format, and says which files that agent reads in each scope.

A target never drops anything silently: what it cannot express comes back in `unsupported`,
one line per item, naming the server and saying why. Servers arrive with their `${VAR}`
references unexpanded, so secrets stay in the environment; each target writes references in
its agent's own syntax, or says it cannot.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from plugman.config.expand import VARIABLE
from plugman.config.redact import is_secret_name
from plugman.core.state import Scope
from plugman.manifest.edit import Part

Servers = dict[str, dict[str, Any]]
Hooks = dict[str, list[dict[str, Any]]]  # event → matcher groups, as Claude Code settings hold
EXACT = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")
__all__ = ["Part"]


class Source(NamedTuple):
    servers: Servers
    hooks: Hooks
    env: Mapping[str, str]


class Rendered(NamedTuple):
    files: dict[str, list[Part]]  # file role ("mcp", "settings") → what goes in it
    unsupported: list[str]


class Place(NamedTuple):
    """Where the agent's files are: the scope, the home folder, the project, the environment."""

    scope: Scope
    home: Path
    project: Path
    env: Mapping[str, str]


class Location(NamedTuple):
    path: Path
    prefix: tuple[str, ...] = ()  # where the document sits inside the file (Claude local)


class Target(NamedTuple):
    name: str
    fmt: str  # json | toml | yaml
    render: Callable[[Source], Rendered]
    files: Callable[[Place], dict[str, Location]]  # role → location; {} for an unknown scope
    scopes: tuple[str, ...] = ("user", "project")
    hooks: bool = False  # does it write hooks?


def hook_id(event: str, group: dict[str, Any]) -> str:
    text = json.dumps([event, group], sort_keys=True)
    return f"{event}:{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def kind(entry: dict[str, Any]) -> str:
    """The transport: `type` when given, else stdio for a command and http for a url."""
    given = entry.get("type")
    if isinstance(given, str):
        return given
    return "stdio" if "command" in entry else "http"


def exact_reference(value: Any) -> str | None:
    """VAR when `value` is exactly `${VAR}`."""
    match = EXACT.match(value) if isinstance(value, str) else None
    return match.group(1) if match else None


Form = Callable[[str, str | None], str | None]  # (VAR, default) → text, None: cannot


def rewrite(value: Any, form: Form) -> Any:
    """`value` (string, list or dict of strings) with each `${VAR}` / `${VAR:-d}` replaced by
    form(VAR, d); raises `Unwritable` naming the variable when form returns None."""
    if isinstance(value, str):
        return VARIABLE.sub(lambda m: _form(form, m.group(1), m.group(2)), value)
    if isinstance(value, list):
        return [rewrite(v, form) for v in value]
    if isinstance(value, dict):
        return {k: rewrite(v, form) for k, v in value.items()}
    return value


class Unwritable(Exception):  # noqa: N818 (caught right where a field is written)
    def __init__(self, variable: str):
        super().__init__(variable)
        self.variable = variable


def _form(form: Form, var: str, default: str | None) -> str:
    text = form(var, default)
    if text is None:
        raise Unwritable(var)
    return text


def syntax(env: Mapping[str, str], reference: Callable[[str], str]) -> Form:
    """An agent that expands `reference(VAR)` but has no default syntax: a default is written
    as its value when VAR is unset here, else as a reference."""

    def form(var: str, default: str | None) -> str:
        return default if default is not None and var not in env else reference(var)

    return form


def literal(env: Mapping[str, str]) -> Form:
    """An agent that expands nothing: a non-secret variable is written as its value here; a
    secret (or unset) one cannot be written."""

    def form(var: str, default: str | None) -> str | None:
        if is_secret_name(var):
            return None
        return env.get(var, default)

    return form


ESSENTIAL = ("command", "url")


def fields(
    name: str, server: dict[str, Any], keep: Iterable[str], form: Form, agent: str, notes: list[str]
) -> dict[str, Any] | None:
    """The server's `keep` fields (except `type`) with references rewritten by `form`; a field
    that needs what the agent cannot express is left out and reported (None, with the server
    skipped, when that field is its command or url)."""
    found: dict[str, Any] = {}
    for key in keep:
        if key == "type" or key not in server:
            continue
        value = server[key]
        items = value.items() if isinstance(value, dict) else [(None, value)]
        kept: dict[str, Any] = {}
        for sub, item in items:
            try:
                kept[str(sub)] = rewrite(item, form)
            except Unwritable as exc:
                where = key if sub is None else f"{key} {sub}"
                notes.append(
                    f"{name}: {where} needs ${{{exc.variable}}}, which {agent} cannot "
                    "expand; left out"
                )
        if isinstance(value, dict):
            if kept or not value:  # a map whose every item was left out is left out
                found[key] = kept
        elif "None" in kept:
            found[key] = kept["None"]
        elif key in ESSENTIAL:
            notes.append(f"{name}: skipped, as {agent} cannot be given its {key}")
            return None
    return found


def extras(name: str, entry: dict[str, Any], allowed: Iterable[str], agent: str) -> list[str]:
    """One line per field of `entry` the agent has no place for."""
    keep = set(allowed)
    return [
        f"{name}: field {k!r} has no {agent} equivalent; left out" for k in entry if k not in keep
    ]


def transport_note(name: str, transport: str, agent: str) -> str:
    return f"{name}: transport {transport!r} is not supported by {agent}; skipped"


def accept(
    name: str,
    server: dict[str, Any],
    agent: str,
    transports: tuple[str, ...],
    fields_of: tuple[tuple[str, ...], tuple[str, ...]],
    notes: list[str],
) -> tuple[str, tuple[str, ...]] | None:
    """The server's transport and the fields the agent keeps for it (`fields_of` is the stdio
    and the remote set); None, with a note, when the agent has no such transport. Fields the
    agent has no place for are noted too."""
    transport = kind(server)
    if transport not in transports:
        notes.append(transport_note(name, transport, agent))
        return None
    keep = fields_of[0] if transport == "stdio" else fields_of[1]
    notes += extras(name, server, keep, agent)
    return transport, keep


Entry = Callable[[str, dict[str, Any], Mapping[str, str], list[str]], "dict[str, Any] | None"]


def render_map(key: str, entry: Entry, source: Source) -> Rendered:
    """`{key: {name: entry}}`: the shape most agents read; `entry` returns None (and says why
    in `unsupported`) for a server the agent cannot take."""
    unsupported: list[str] = []
    found = {name: entry(name, s, source.env, unsupported) for name, s in source.servers.items()}
    entries = {name: e for name, e in found.items() if e is not None}
    return Rendered({"mcp": [Part((key,), entries)]}, unsupported)


UserPath = Callable[[Place], Path]


def one_file(user: UserPath, project: str | None) -> Callable[[Place], dict[str, Location]]:
    """A target with one file: `user(place)` at user scope, `project` in the project folder."""

    def files(place: Place) -> dict[str, Location]:
        if place.scope == "user":
            return {"mcp": Location(user(place))}
        if place.scope == "project" and project is not None:
            return {"mcp": Location(place.project / project)}
        return {}

    return files


def in_home(*parts: str) -> UserPath:
    return lambda place: place.home.joinpath(*parts)


def in_env_dir(var: str, default: str, name: str) -> UserPath:
    """`name` in the folder the `var` variable names, else in `~/default`."""
    return lambda place: Path(place.env.get(var) or place.home / default) / name


def in_config_home(*parts: str) -> UserPath:
    """Under XDG_CONFIG_HOME (default `~/.config`)."""
    return lambda place: Path(place.env.get("XDG_CONFIG_HOME") or place.home / ".config").joinpath(
        *parts
    )

"""The one renderer: an `AgentSpec` and the resolved servers (and hooks) → the parts of the
agent's files, with one line in `unsupported` for everything it could not express."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping

from plugman.agents.targets import hooks, quirks
from plugman.agents.targets.model import Given, Rendered, Target, kind
from plugman.agents.targets.refs import Form, Unwritable, rewrite
from plugman.agents.targets.spec import AgentSpec, Entry
from plugman.config.redact import is_secret_name
from plugman.manifest.edit import Part
from plugman.runtime.gateway.health import FIRST_LIST_WAIT

ESSENTIAL = ("command", "url")
# How long an agent waits for its servers before its first turn, when one is the gateway: the
# gateway's own start, then its first list's wait for slow backends, with room to spare.
GATEWAY_STARTUP_MS = int((FIRST_LIST_WAIT + 5) * 1000)
MAPS = ("env", "headers")  # the fields whose items are named (a secret name, a secret value)
FormOf = Callable[[str, str | None], Form | None]  # (field, item name) → form; None: as given


def target(spec: AgentSpec) -> Target:
    """The renderer `export` runs for the agent `spec` describes."""
    return Target(
        spec.name,
        spec.fmt,
        functools.partial(render, spec),
        spec.locate,
        spec.scopes_of(),
        hooks=spec.hooks is not None,
        reads_too=spec.mcp_reads_too,
    )


def render(spec: AgentSpec, source: Given) -> Rendered:
    notes: list[str] = []
    declared: dict[str, Entry] = {}
    given = source.servers.items()
    shared = source.place is not None and source.place.scope == "project"  # committed
    found = {n: entry(spec, n, s, source.env, declared, notes, shared) for n, s in given}
    mcp = spec.mcp
    entries = {name: e for name, e in found.items() if e is not None}
    parts = [Part(mcp.key, entries, listed=mcp.listed)]
    if declared and mcp.secret_refs is not None:
        parts.append(Part(mcp.secret_refs.key, declared, listed=True))
    rendered = {"mcp": parts}
    if mcp.startup_wait is not None and any(quirks.runs_gateway(e) for e in entries.values()):
        role, variable = mcp.startup_wait
        rendered[role] = [Part(("env",), {variable: str(GATEWAY_STARTUP_MS)})]
    if spec.hooks is not None and source.hooks:
        written = hooks.parts(spec.hooks, spec.label, source.hooks, source.place, notes)
        for role, more in written.items():
            rendered.setdefault(role, []).extend(more)
    return Rendered(rendered, notes)


def entry(
    spec: AgentSpec,
    name: str,
    server: Entry,
    env: Mapping[str, str],
    declared: dict[str, Entry],
    notes: list[str],
    shared: bool = False,
) -> Entry | None:
    """The server as the agent spells it; None (with a note) when it cannot take it. In a
    `shared` (project) file the agent's references stay references (refs.Refs.form)."""
    mcp, agent = spec.mcp, spec.label
    if mcp.names is not None and not re.match(mcp.names, name):
        notes.append(f"{name}: {agent} server names must match {mcp.names}; skipped")
        return None
    transport = kind(server)
    if mcp.transports is not None and transport not in mcp.transports:
        notes.append(f"{name}: transport {transport!r} is not supported by {agent}; skipped")
        return None
    keep = mcp.keep(transport)
    if keep is None:
        given = {k: v for k, v in server.items() if k != "type"}
    else:
        notes += extras(name, server, ("type", *keep), agent)
        given = {k: server[k] for k in keep if k in server}
    by_name: Entry = {}
    if mcp.by_name is not None:
        given, by_name = mcp.by_name(given)
    found = written(name, given, forms(spec, env, declared, shared), agent, notes)
    if found is None:
        return None
    if mcp.argv and "command" in found:
        found["command"] = [found["command"], *found.pop("args", [])]
    result: Entry = {"name": name} if mcp.named else {}
    if (written_type := mcp.type_of(transport)) is not None:
        result["type"] = written_type
    for key in found if keep is None else keep:
        if key in found:
            value = found[key]
        elif key in mcp.always:
            value = [] if key == "args" else {}
        else:
            continue
        if not (mcp.drop_empty and value == {}):
            result[mcp.rename(transport, key)] = value
    return {**result, **mcp.constants, **by_name}


def forms(
    spec: AgentSpec, env: Mapping[str, str], declared: dict[str, Entry], shared: bool = False
) -> FormOf:
    """Which form writes the references of each field (or item of a map field)."""
    refs, secret_refs = spec.mcp.refs, spec.mcp.secret_refs
    plain = refs.form(env, shared=shared)
    secret = secret_refs.form(declared) if secret_refs is not None else None

    def form_of(key: str, item: str | None) -> Form | None:
        if key in refs.native_in:
            return None
        if secret is not None and key in MAPS and item is not None and is_secret_name(item):
            return secret
        return plain

    return form_of


def written(name: str, given: Entry, form_of: FormOf, agent: str, notes: list[str]) -> Entry | None:
    """The `given` fields with references rewritten; a field (or map item) that needs what the
    agent cannot express is left out and reported (None, with the server skipped, when that
    field is its command or url)."""
    found: Entry = {}
    for key, value in given.items():
        items = value.items() if isinstance(value, dict) else [(None, value)]
        kept: Entry = {}
        for sub, item in items:
            form = form_of(key, sub)
            try:
                kept[str(sub)] = item if form is None else rewrite(item, form)
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


def extras(name: str, entry: Entry, allowed: Iterable[str], agent: str) -> list[str]:
    """One line per field of `entry` the agent has no place for."""
    keep = set(allowed)
    return [
        f"{name}: field {k!r} has no {agent} equivalent; left out" for k in entry if k not in keep
    ]

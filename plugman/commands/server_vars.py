"""`plugman mcp vars set|unset`: keep or forget the value of a `${VAR}` reference of the MCP
servers people add by hand (what is kept and how resolution reads it:
plugman.config.server_vars), and bring the linked agents up to date: a server naming a kept
variable is written as the launcher (plugman.agents.export_entries)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from plugman.agents import deploy
from plugman.config.server_vars import FORMAT, check, index, key, names
from plugman.core import secrets
from plugman.core.errors import UsageError
from plugman.core.paths import Paths
from plugman.core.session import Session, session


def set_value(paths: Paths, env: Mapping[str, str], name: str, value: str) -> None:
    """Keep `value` for `${name}`: the name goes into the index and the linked agents are
    redeployed (journaled, one session), then the value into the secret store (a name without
    a value resolves as if unset)."""
    check(name)
    if not value:
        raise UsageError(f"no value given for {name}", hint="type or pipe a value")
    with session(paths) as work:
        keep(work, [name])
        deploy.refresh(work, env)
    store(paths, env, {name: value})


def keep(work: Session, kept: list[str]) -> None:
    """Name `kept` in the index, in `work` (the caller redeploys, then `store`s the values after
    the commit): a server naming one is then written for the agents as the launcher."""
    _write_index(work, sorted({*names(work.paths), *map(check, kept)}))


def store(paths: Paths, env: Mapping[str, str], values: Mapping[str, str]) -> None:
    """Put the values of variables the index names into the secret store."""
    if values:
        found = secrets.open_store(paths, env)
        for name, value in values.items():
            found.set(key(name), value)


def unset(paths: Paths, env: Mapping[str, str], name: str) -> bool:
    """Forget the value of `${name}`; whether there was one."""
    check(name)
    had = secrets.open_store(paths, env).delete(key(name))
    if name in names(paths):
        with session(paths) as work:
            _write_index(work, [n for n in names(paths) if n != name])
            deploy.refresh(work, env)
        return True
    return had


def _write_index(work: Session, listed: list[str]) -> None:
    data = json.dumps({"format": FORMAT, "names": listed}, indent=2).encode() + b"\n"
    work.tx.write(index(work.paths), data if listed else None)

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
from plugman.core.session import session


def set_value(
    paths: Paths, env: Mapping[str, str], name: str, value: str, *, redeploy: bool = True
) -> None:
    """Keep `value` for `${name}`: the name goes into the index (journaled, the linked agents
    redeployed in the same session unless not `redeploy`), then the value into the secret
    store (a name without a value resolves as if unset)."""
    check(name)
    if not value:
        raise UsageError(f"no value given for {name}", hint="type or pipe a value")
    _write_index(paths, env, sorted({*names(paths), name}), redeploy)
    secrets.open_store(paths, env).set(key(name), value)


def unset(paths: Paths, env: Mapping[str, str], name: str) -> bool:
    """Forget the value of `${name}`; whether there was one."""
    check(name)
    had = secrets.open_store(paths, env).delete(key(name))
    if name in names(paths):
        _write_index(paths, env, [n for n in names(paths) if n != name], True)
        return True
    return had


def _write_index(paths: Paths, env: Mapping[str, str], listed: list[str], redeploy: bool) -> None:
    data = json.dumps({"format": FORMAT, "names": listed}, indent=2).encode() + b"\n"
    with session(paths) as work:
        work.tx.write(index(paths), data if listed else None)
        if redeploy:
            deploy.refresh(work, env)

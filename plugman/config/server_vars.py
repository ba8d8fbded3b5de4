"""Values for the `${VAR}` references of the MCP servers people add by hand (`mcp add --from`
writes an MCP Registry server's secrets, headers and arguments as such references, never as
values): `plugman mcp vars set VAR` (or the prompt of `mcp add --from` on a terminal) keeps a
value in the secret store under `server-var:<VAR>`, and its name, never its value, in
`<state>/server-vars.json`.

Resolution puts a stored value in for a variable the environment does not set (the
environment wins: CI and one-off runs override what is stored), where plugman runs the server
itself (`config resolve`, probe, the gateway); every such value is redacted from output like
any secret. An agent's own file keeps the reference, which the agent expands from its
environment. Without a stored name the secret store is never opened.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from plugman.core import secrets
from plugman.core.errors import UsageError
from plugman.core.fs import read_bytes
from plugman.core.paths import Paths

if TYPE_CHECKING:
    from plugman.core.session import Finish

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
FORMAT = 1


def _key(name: str) -> str:
    return f"server-var:{name}"


def _index(paths: Paths) -> Path:
    return paths.state_dir / "server-vars.json"


def names(paths: Paths) -> list[str]:
    """The variables plugman holds a value for (an unreadable index holds none)."""
    data = read_bytes(_index(paths))
    try:
        found = json.loads(data or b"{}").get("names", [])
    except (ValueError, AttributeError):
        return []
    return sorted(n for n in found if isinstance(n, str) and NAME.fullmatch(n))


def check(name: str) -> str:
    if not NAME.fullmatch(name):
        raise UsageError(
            f"{name!r} is not a variable name",
            hint="letters, digits and '_', not starting with a digit (as in ${NAME})",
        )
    return name


def set_value(
    paths: Paths, env: Mapping[str, str], name: str, value: str, finish: Finish | None = None
) -> None:
    """Keep `value` for `${name}`: the name goes into the index (journaled), then the value
    into the secret store (a name without a value resolves as if unset). `finish` ends the
    index's session (the linked agents follow: a server naming a kept variable is written as
    the launcher, `plugman.agents.export_entries`)."""
    check(name)
    if not value:
        raise UsageError(f"no value given for {name}", hint="type or pipe a value")
    _write_index(paths, sorted({*names(paths), name}), finish)
    secrets.open_store(paths, env).set(_key(name), value)


def unset(paths: Paths, env: Mapping[str, str], name: str, finish: Finish | None = None) -> bool:
    """Forget the value of `${name}`; whether there was one."""
    check(name)
    had = secrets.open_store(paths, env).delete(_key(name))
    if name in names(paths):
        _write_index(paths, [n for n in names(paths) if n != name], finish)
        return True
    return had


def values(paths: Paths, env: Mapping[str, str]) -> dict[str, str]:
    """The stored values of the variables `env` does not set, each registered as sensitive."""
    from plugman.config import redact

    wanted = [name for name in names(paths) if name not in env]
    if not wanted:
        return {}
    store = secrets.open_store(paths, env)
    found = {name: value for name in wanted if (value := store.get(_key(name)))}
    for value in found.values():
        redact.sensitive(value)
    return found


def _write_index(paths: Paths, listed: list[str], finish: Finish | None = None) -> None:
    from plugman.core.session import session  # only to change the index

    data = json.dumps({"format": FORMAT, "names": listed}, indent=2).encode() + b"\n"
    with session(paths) as work:
        work.tx.write(_index(paths), data if listed else None)
        if finish is not None:
            finish(work)

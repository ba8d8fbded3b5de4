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

This module reads; `mcp vars set|unset` change the values (plugman.commands.server_vars).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from plugman.config import redact
from plugman.core import secrets
from plugman.core.errors import UsageError
from plugman.core.fs import read_bytes
from plugman.core.paths import Paths

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
FORMAT = 1


def key(name: str) -> str:
    """The secret store's key of the value kept for `${name}`."""
    return f"server-var:{name}"


def index(paths: Paths) -> Path:
    """The file naming the variables a value is kept for (names only, never values)."""
    return paths.state_dir / "server-vars.json"


def names(paths: Paths) -> list[str]:
    """The variables plugman holds a value for (an unreadable index holds none)."""
    data = read_bytes(index(paths))
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


def values(paths: Paths, env: Mapping[str, str]) -> dict[str, str]:
    """The stored values of the variables `env` does not set, each registered as sensitive."""
    wanted = [name for name in names(paths) if name not in env]
    if not wanted:
        return {}
    store = secrets.open_store(paths, env)
    found = {name: value for name in wanted if (value := store.get(key(name)))}
    for value in found.values():
        redact.sensitive(value)
    return found

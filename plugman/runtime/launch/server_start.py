"""A server's start from its launch plan, on the launcher's fast path (plugman.cli.fast_launch):
the entry as `plugman mcp run NAME` would exec it, from the plan that
plugman.runtime.launch.server_plans wrote.

A plan holds the server's entry as resolution has it before expansion (`${VAR}` references
kept: no value from the secret store is ever in it) and, to expand it as
plugman.config.resolution does, what that expansion reads: the secret-store keys the resolution
read (`reads`, each with whether it held a value), which variables a stored value stands for
(`stored`: an `mcp vars` value, the environment wins; `secrets`: a sensitive plugin option,
the store wins), and whether each variable any server entry or policy rule names was set
(`seen`). The store is read here, at start, only when it is the file store
(plugman.core.secrets: `<config>/secrets.json`, one small JSON read); a keychain, a store
changed in a way the plan did not see, a variable set or unset since, a reference with no
value: the full launcher runs, as if no plan were there.

Imports: `sys`, `json` (loaded by then) and `re` (loaded by json).
"""

from __future__ import annotations

import json
import sys

TYPE_CHECKING = False  # (not typing's: importing typing costs ~5 ms on the fast path)
if TYPE_CHECKING:
    from collections.abc import Mapping

# config.expand.VARIABLE: `${VAR}` and `${VAR:-default}`
VARIABLE = r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}"
STORE = "PLUGMAN_SECRETS"  # core.secrets.VARIABLE

Prepared = tuple[str, list[str], dict[str, str], str | None]  # command, args, env, cwd


def file_store(env: Mapping[str, str]) -> bool:
    """Whether core.secrets.open_store opens the file store here without trying a keychain:
    forced by PLUGMAN_SECRETS=file, or on Linux with no D-Bus session (no keychain can work)."""
    forced = env.get(STORE, "").strip().lower()
    if forced == "file":
        return True
    return forced == "" and sys.platform == "linux" and not env.get("DBUS_SESSION_BUS_ADDRESS")


def _stored(path: object) -> dict[str, str] | None:
    """The file store's values (core.secrets.FileStore), None when it cannot be read."""
    if not isinstance(path, str):
        return None
    try:
        with open(path, "rb") as stream:  # noqa: PTH123 (pathlib is not loaded here)
            data = json.loads(stream.read())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        return None
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else None


def values(plan: Mapping[str, object], env: Mapping[str, str]) -> dict[str, str] | None:
    """What the plan's entry is expanded with, gathered as config.resolution.resolve gathers it
    (stored `mcp vars` values, then the environment, then sensitive options); None on any
    doubt."""
    reads, seen = plan.get("reads"), plan.get("seen")
    stored, secrets = plan.get("stored"), plan.get("secrets")
    if not (
        isinstance(reads, dict)
        and isinstance(seen, dict)
        and isinstance(stored, dict)
        and isinstance(secrets, dict)
    ):
        return None
    if any((name in env) != bool(was) for name, was in seen.items()):
        return None
    store: dict[str, str] = {}
    if reads:
        found = _stored(plan.get("store")) if file_store(env) else None
        if found is None or any(bool(found.get(k)) != bool(had) for k, had in reads.items()):
            return None
        store = found
    gathered = {v: store[k] for v, k in stored.items() if v not in env and store.get(k)}
    gathered.update(env)
    for variable, key in secrets.items():
        if not store.get(key):
            return None
        gathered[variable] = store[key]
    return gathered


def expand(value: object, given: Mapping[str, str]) -> str | None:
    """config.expand.expand of one field (a value that is not a string as `str` has it); None
    when a variable with no default is unset (the full launcher says which)."""
    if not isinstance(value, str):
        return str(value)
    import re  # lazy: loaded by json already

    missing = []

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in given:
            return given[name]
        if default is not None:
            return default
        missing.append(name)
        return match.group(0)

    text = re.sub(VARIABLE, replace, value)
    return None if missing else text


def prepared(plan: Mapping[str, object], env: Mapping[str, str]) -> Prepared | None:
    """The command, arguments, environment and folder `mcp run` would exec the server with
    (runtime.launch.server.prepare); None on any doubt."""
    given = values(plan, env)
    command, args, added = plan.get("command"), plan.get("args"), plan.get("env")
    cwd = plan.get("cwd")
    if given is None or not isinstance(args, list) or not isinstance(added, dict):
        return None
    words = [expand(word, given) for word in [command, *args]]
    extra = {str(k): expand(v, given) for k, v in added.items()}
    if any(w is None for w in words) or any(v is None for v in extra.values()):
        return None
    head = words[0]
    if not isinstance(command, str) or not head:
        return None
    full = {**env, **{k: v for k, v in extra.items() if v is not None}}
    rest = [w for w in words[1:] if w is not None]
    return head, rest, full, cwd if isinstance(cwd, str) else None

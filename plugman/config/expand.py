"""`${VAR}` and `${VAR:-default}` expansion in MCP server entries: one pass, never a shell.

An unset variable without a default stays as written and is reported, as Claude Code does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from plugman.core.jsonvalue import ServerEntry

VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
FIELDS = ("command", "args", "env", "url", "headers")


def expand(text: str, env: Mapping[str, str], missing: list[str]) -> str:
    """`text` with its variables replaced (once: a value is never expanded again)."""
    if "${" not in text:  # nothing to replace (most values)
        return text

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        missing.append(name)
        return match.group(0)

    return VARIABLE.sub(replace, text)


def substitute(text: str, env: Mapping[str, str]) -> str:
    """`text` with only the variables `env` names put in; every other reference stays as
    written, its default included, for whoever expands it later (resolve, an agent, a shell)."""
    if "${" not in text:  # nothing to put in (most values)
        return text
    return VARIABLE.sub(lambda match: env.get(match.group(1), match.group(0)), text)


def expand_entry(entry: ServerEntry, env: Mapping[str, str]) -> tuple[ServerEntry, list[str]]:
    """A server entry with `command`, `args`, `env`, `url` and `headers` expanded; the names of
    unset variables that had no default."""
    missing: list[str] = []
    result = dict(entry)
    for field in FIELDS:
        value = entry.get(field)
        if isinstance(value, str):
            result[field] = expand(value, env, missing)
        elif isinstance(value, list):
            result[field] = [expand(v, env, missing) if isinstance(v, str) else v for v in value]
        elif isinstance(value, dict):
            result[field] = {
                k: expand(v, env, missing) if isinstance(v, str) else v for k, v in value.items()
            }
    return result, sorted(set(missing))

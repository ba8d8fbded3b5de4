"""Codex CLI `config.toml`: `[mcp_servers.<name>]`.

Codex expands no `${}`: secrets are passed by variable name (`env_vars`,
`bearer_token_env_var`, `env_http_headers`); other non-secret variables are written as their
values here. Only stdio and streamable HTTP exist.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from plugman.agents.targets import (
    Part,
    Rendered,
    Source,
    Target,
    exact_reference,
    extras,
    fields,
    in_env_dir,
    kind,
    literal,
    one_file,
    transport_note,
)

NAME = re.compile(r"^[a-zA-Z0-9_-]+$")
STDIO = ("type", "command", "args", "env", "cwd")
REMOTE = ("type", "url", "headers")
BEARER = re.compile(r"^Bearer \$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


def _env(env: dict[str, str], table: dict[str, Any]) -> dict[str, str]:
    """Moves same-name references into `env_vars`; the rest, still to be written."""
    by_name = [key for key, value in env.items() if exact_reference(value) == key]
    if by_name:
        table["env_vars"] = by_name
    return {k: v for k, v in env.items() if k not in by_name}


def _headers(headers: dict[str, str], table: dict[str, Any]) -> dict[str, str]:
    """Moves `Bearer ${VAR}` and exact references into Codex's by-name fields; the rest."""
    rest: dict[str, str] = {}
    by_name: dict[str, str] = {}
    for key, value in headers.items():
        bearer = BEARER.match(value) if key.lower() == "authorization" else None
        if bearer:
            table["bearer_token_env_var"] = bearer.group(1)
        elif (var := exact_reference(value)) is not None:
            by_name[key] = var
        else:
            rest[key] = value
    if by_name:
        table["env_http_headers"] = by_name
    return rest


def table(
    name: str, server: dict[str, Any], env: Mapping[str, str], notes: list[str]
) -> dict[str, Any] | None:
    transport = kind(server)
    if not NAME.match(name):
        notes.append(f"{name}: Codex server names must match {NAME.pattern}; skipped")
        return None
    if transport not in ("stdio", "http"):
        notes.append(transport_note(name, transport, "Codex"))
        return None
    keep = STDIO if transport == "stdio" else REMOTE
    notes += extras(name, server, keep, "Codex")
    by_name: dict[str, Any] = {}
    rest = dict(server)
    if "env" in server:
        rest["env"] = _env(server["env"], by_name)
    if "headers" in server:
        rest["headers"] = _headers(server["headers"], by_name)
    found = fields(name, rest, keep, literal(env), "Codex", notes)
    if found is None:
        return None
    if "headers" in found:
        found["http_headers"] = found.pop("headers")
    result = {k: v for k, v in found.items() if v != {}}
    if "env" in result and "env_vars" in by_name:  # env, then env_vars, as Codex's docs order
        result["env_vars"] = by_name.pop("env_vars")
    return {**result, **by_name}


def render(source: Source) -> Rendered:
    notes: list[str] = []
    found = {n: table(n, s, source.env, notes) for n, s in source.servers.items()}
    entries = {n: e for n, e in found.items() if e is not None}
    return Rendered({"mcp": [Part(("mcp_servers",), entries)]}, notes)


TARGET = Target(
    "codex",
    "toml",
    render,
    one_file(in_env_dir("CODEX_HOME", ".codex", "config.toml"), ".codex/config.toml"),
)

"""Codex CLI `.codex/config.toml`: `[mcp_servers.<name>]`.

Codex expands no `${}`: secrets are passed by variable name (`env_vars`,
`bearer_token_env_var`, `env_http_headers`). Only stdio and streamable HTTP exist.
"""

from __future__ import annotations

import re
from typing import Any

from plugman.targets import REFERENCE, Rendered, Servers, Target, exact_reference, extras, kind

NAME = re.compile(r"^[a-zA-Z0-9_-]+$")
STDIO = ("type", "command", "args", "env", "cwd")
REMOTE = ("type", "url", "headers")
BEARER = re.compile(r"^Bearer \$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


def _literal(name: str, field: str, value: Any, unsupported: list[str]) -> bool:
    """False (and a note) when `value` holds a `${VAR}` Codex would pass on unexpanded."""
    text = value if isinstance(value, str) else " ".join(map(str, value))
    if REFERENCE.search(text) or "${" in text:
        unsupported.append(f"{name}: {field} uses ${{…}} expansion, which Codex lacks; left out")
        return False
    return True


def _env(name: str, env: dict[str, str], table: dict[str, Any], unsupported: list[str]) -> None:
    plain: dict[str, str] = {}
    by_name: list[str] = []
    for key, value in env.items():
        if exact_reference(value) == key:
            by_name.append(key)
        elif _literal(name, f"env {key}", value, unsupported):
            plain[key] = value
    if plain:
        table["env"] = plain
    if by_name:
        table["env_vars"] = by_name


def _headers(name: str, headers: dict[str, str], table: dict[str, Any], notes: list[str]) -> None:
    plain: dict[str, str] = {}
    by_name: dict[str, str] = {}
    for key, value in headers.items():
        bearer = BEARER.match(value) if key.lower() == "authorization" else None
        if bearer:
            table["bearer_token_env_var"] = bearer.group(1)
        elif (var := exact_reference(value)) is not None:
            by_name[key] = var
        elif _literal(name, f"header {key}", value, notes):
            plain[key] = value
    if plain:
        table["http_headers"] = plain
    if by_name:
        table["env_http_headers"] = by_name


def table(name: str, server: dict[str, Any], unsupported: list[str]) -> dict[str, Any] | None:
    transport = kind(server)
    if not NAME.match(name):
        unsupported.append(f"{name}: Codex server names must match {NAME.pattern}; skipped")
        return None
    if transport not in ("stdio", "http"):
        unsupported.append(f"{name}: transport {transport!r} is not supported by Codex; skipped")
        return None
    unsupported += extras(name, server, STDIO if transport == "stdio" else REMOTE, "Codex")
    found: dict[str, Any] = {}
    for key in ("command", "args", "cwd", "url"):
        if key in server and _literal(name, key, server[key], unsupported):
            found[key] = server[key]
    if transport == "stdio":
        _env(name, server.get("env") or {}, found, unsupported)
    else:
        _headers(name, server.get("headers") or {}, found, unsupported)
    return found


def render(servers: Servers) -> Rendered:
    import tomlkit

    unsupported: list[str] = []
    document = tomlkit.document()
    section = tomlkit.table(is_super_table=True)
    for name, server in servers.items():
        found = table(name, server, unsupported)
        if found is not None:
            section.add(name, _inline(found))
    document.add("mcp_servers", section)
    return Rendered(tomlkit.dumps(document), unsupported)


def _inline(found: dict[str, Any]) -> Any:
    """A server table whose maps (`env`, headers) are inline, as Codex's docs write them."""
    import tomlkit

    result = tomlkit.table()
    for key, value in found.items():
        if isinstance(value, dict):
            inline = tomlkit.inline_table()
            inline.update(value)
            value = inline
        result.add(key, value)
    return result


TARGET = Target("codex", ".codex/config.toml", render)

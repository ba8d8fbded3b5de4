"""Targets: each writes the resolved MCP servers in one agent's native config format.

A target never drops anything silently: what it cannot express comes back in `unsupported`,
one line per item, naming the server and saying why.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

Servers = dict[str, dict[str, Any]]
REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
EXACT = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


class Rendered(NamedTuple):
    text: str
    unsupported: list[str]


class Target(NamedTuple):
    name: str
    file_hint: str  # where the agent reads it, e.g. `.mcp.json`
    render: Callable[[Servers], Rendered]


def servers_of(document: dict[str, Any]) -> Servers:
    """The resolved document's servers without their `origin`."""
    return {
        name: {k: v for k, v in entry.items() if k != "origin"}
        for name, entry in document["mcpServers"].items()
    }


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


def substitute(value: Any, replace: Callable[[str], str]) -> Any:
    """`value` (string, list or dict of strings) with every `${VAR}` replaced by replace(VAR)."""
    if isinstance(value, str):
        return REFERENCE.sub(lambda m: replace(m.group(1)), value)
    if isinstance(value, list):
        return [substitute(v, replace) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, replace) for k, v in value.items()}
    return value


def extras(name: str, entry: dict[str, Any], allowed: Iterable[str], agent: str) -> list[str]:
    """One line per field of `entry` the agent has no place for."""
    keep = set(allowed)
    return [
        f"{name}: field {k!r} has no {agent} equivalent; left out" for k in entry if k not in keep
    ]


Entry = Callable[[str, dict[str, Any], list[str]], "dict[str, Any] | None"]


def render_map(key: str, entry: Entry, servers: Servers) -> Rendered:
    """`{key: {name: entry}}` as JSON: the shape most agents read; `entry` returns None (and
    says why in `unsupported`) for a server the agent cannot take."""
    unsupported: list[str] = []
    found = {name: entry(name, server, unsupported) for name, server in servers.items()}
    document = {key: {name: e for name, e in found.items() if e is not None}}
    return Rendered(json_text(document), unsupported)


def json_text(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2) + "\n"

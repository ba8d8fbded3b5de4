"""What a renderer is given (`Given`: the resolved servers and hooks), what it returns
(`Rendered`: parts by file role) and the renderer itself (`Target`, built from an `AgentSpec` by
`render.target`, or by `claude_native` for Claude's settings edits), which `export` runs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from plugman.core.state import Scope
from plugman.manifest.edit import Part
from plugman.manifest.mcp import transport

Servers = dict[str, dict[str, Any]]
HookGroups = dict[str, list[dict[str, Any]]]  # event → matcher groups, as Claude Code settings hold


class Given(NamedTuple):
    servers: Servers
    hooks: HookGroups
    env: Mapping[str, str]
    place: Place | None = None  # where the files are (None: a preview with no files)


class Rendered(NamedTuple):
    files: dict[str, list[Part]]  # file role ("mcp", "settings") → what goes in it
    unsupported: list[str]


class Place(NamedTuple):
    """Where the agent's files are: the scope, the home folder, the project, the environment."""

    scope: Scope
    home: Path
    project: Path
    env: Mapping[str, str]


class Location(NamedTuple):
    path: Path
    prefix: tuple[str, ...] = ()  # where the document sits inside the file (Claude local)
    fmt: str | None = None  # its format, when not the target's (Codex's hooks.json)


class Target(NamedTuple):
    name: str
    fmt: str  # json | toml | yaml
    render: Callable[[Given], Rendered]
    files: Callable[[Place], dict[str, Location]]  # role → location; {} for an unknown scope
    scopes: tuple[Scope, ...] = ("user", "project")
    hooks: bool = False  # does it write hooks?
    reads_too: tuple[str, ...] = ()  # project MCP files it reads itself: their servers not again


def hook_id(event: str, group: dict[str, Any]) -> str:
    text = json.dumps([event, group], sort_keys=True)
    return f"{event}:{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def kind(entry: dict[str, Any]) -> str:
    """The transport (`manifest.mcp.transport`), or the `type` as given when no client knows it."""
    return transport(entry) or str(entry.get("type"))

"""Namespaced MCP tool names, as agents build them (spec §7.6).

| server | tool name |
|---|---|
| `<server>` | `mcp__<server>__<tool>` |
| `plugin:<plugin>:<server>` | `mcp__plugin_<plugin>_<server>__<tool>` |

Every character outside `[A-Za-z0-9_-]` in the plugin, server and tool parts becomes `_`
(a claude.ai connector named `claude.ai Gmail` gives `mcp__claude_ai_Gmail__<tool>`). A name over
64 characters (the limit agents enforce) keeps its first 55 characters, then `_` and the first
8 hex digits of the SHA-256 of the whole name: deterministic, and distinct names stay distinct
(short of a 32-bit hash collision, which the pool still reports as a collision).
"""

from __future__ import annotations

import hashlib
import re

MAX_LENGTH = 64
HASH_LENGTH = 8
UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
PLUGIN_PREFIX = "plugin:"


def normalize(text: str) -> str:
    """`text` with every character outside `[A-Za-z0-9_-]` replaced by `_`."""
    return UNSAFE.sub("_", text)


def split_server(server: str) -> tuple[str | None, str]:
    """(plugin, server) of `plugin:<plugin>:<server>`; (None, server) for any other name."""
    if server.startswith(PLUGIN_PREFIX):
        plugin, sep, inner = server[len(PLUGIN_PREFIX) :].partition(":")
        if sep and plugin and inner:
            return plugin, inner
    return None, server


def server_prefix(server: str, plugin: str | None = None) -> str:
    """`mcp__<server>__` or `mcp__plugin_<plugin>_<server>__`."""
    if plugin is None:
        plugin, server = split_server(server)
    middle = f"plugin_{normalize(plugin)}_{normalize(server)}" if plugin else normalize(server)
    return f"mcp__{middle}__"


def tool_name(server: str, tool: str, plugin: str | None = None) -> str:
    """The name an agent gives MCP tool `tool` of `server` (at most 64 characters)."""
    return shorten(server_prefix(server, plugin) + normalize(tool))


def shorten(name: str, limit: int = MAX_LENGTH) -> str:
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:HASH_LENGTH]
    return f"{name[: limit - HASH_LENGTH - 1]}_{digest}"

"""Namespaced MCP tool names, as agents build them, and as the gateway lists them
(docs/claude-format.md#tool-names).

| server | tool name |
|---|---|
| `<server>` | `mcp__<server>__<tool>` |
| `plugin:<plugin>:<server>` | `mcp__plugin_<plugin>_<server>__<tool>` |

Every character outside `[A-Za-z0-9_-]` in the plugin, server and tool parts becomes `_`
(a claude.ai connector named `claude.ai Gmail` gives `mcp__claude_ai_Gmail__<tool>`). A name over
64 characters (the limit agents enforce) keeps its first 55 characters, then `_` and the first
8 hex digits of the SHA-256 of the whole name: deterministic, and distinct names stay distinct
(short of a 32-bit hash collision, which the pool still reports as a collision).

The gateway (`gateway_name`) lists the same names without `mcp__`: the agent adds its own
`mcp__<server>__` (`mcp__plugman__` for the server `agents add --via-gateway` writes). Claude Code
2.1.328 sends that final name to the model unchanged, whatever its length, and the Messages API
refuses a request with a tool name over 64 characters; Codex 0.169 sends `<name>` inside a
`mcp__plugman` namespace, also unchanged. So a gateway name keeps to GATEWAY_LENGTH (50) = 64 -
len(`mcp__plugman__`), and one over it is shortened the same way. A `salt` (1, 2, ...) gives
another name for a tool whose name is taken (plugman.runtime.gateway.catalog): the hash of
`<name>#<salt>`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Container

MAX_LENGTH = 64
AGENT_PREFIX = "mcp__plugman__"  # an agent linked --via-gateway puts it before the gateway's
GATEWAY_LENGTH = MAX_LENGTH - len(AGENT_PREFIX)
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


def gateway_prefix(server: str) -> str:
    """`<server>__` or `plugin_<plugin>_<server>__`: the agent's prefix without `mcp__`."""
    return server_prefix(server).removeprefix("mcp__")


def gateway_name(server: str, tool: str, salt: int = 0) -> str:
    """The name the gateway lists for `tool` of `server` (at most GATEWAY_LENGTH characters)."""
    return shorten(gateway_prefix(server) + normalize(tool), GATEWAY_LENGTH, salt)


def free_name(server: str, tool: str, taken: Container[str], tries: int = 1000) -> tuple[str, int]:
    """The gateway name to list `tool` of `server` under when the names in `taken` are taken:
    `gateway_name(server, tool)`, else the first free salted one; with the salt used (0: none)."""
    for salt in range(tries):
        name = gateway_name(server, tool, salt)
        if name not in taken:
            return name, salt
    raise RuntimeError(f"no free name for {tool} of {server}")  # pragma: no cover


def shorten(name: str, limit: int = MAX_LENGTH, salt: int = 0) -> str:
    if len(name) <= limit and not salt:
        return name
    hashed = f"{name}#{salt}" if salt else name
    digest = hashlib.sha256(hashed.encode()).hexdigest()[:HASH_LENGTH]
    return f"{name[: limit - HASH_LENGTH - 1]}_{digest}"

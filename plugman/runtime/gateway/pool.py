"""The tool pool an agent would assemble from the probed MCP servers
(docs/claude-format.md#tool-names).

- Every tool of every connected server gets its namespaced name (plugman.runtime.gateway.naming).
- Built-in tool names (`--builtin`) always win: an MCP tool with such a name is dropped and
  reported. Between servers, the first server in name order keeps a contested name; every
  other one is dropped and reported, so the pool never holds two tools of one name.
- Descriptions longer than 2,048 characters are cut to 2,048, ending in a marker.
- The annotations agents act on travel along: title, readOnlyHint, destructiveHint,
  idempotentHint, openWorldHint.
- Token cost is an estimate, not a tokenizer: the length of the compact JSON of the tool's
  name, description and input schema (what an agent puts in its tool list), divided by 4 (the
  usual characters-per-token rule of thumb for English and JSON), rounded up, summed per server
  over the tools kept in the pool.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from plugman.core.jsonvalue import JSONObject
from plugman.runtime.gateway.naming import tool_name

if TYPE_CHECKING:
    from plugman.runtime.gateway.probe import ProbeResult

MAX_DESCRIPTION = 2048
MARKER = "… [description truncated]"
CARRIED = ("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class PoolEntry:
    name: str
    server: str
    tool: str  # the server's own name for it
    description: str
    annotations: JSONObject
    input_schema: JSONObject


@dataclass(frozen=True)
class Collision:
    name: str
    server: str  # the server whose tool was dropped
    tool: str
    winner: str | None  # the server that keeps the name; None when a built-in does
    reason: str  # builtin | duplicate


@dataclass
class Pool:
    entries: list[PoolEntry] = field(default_factory=list)
    collisions: list[Collision] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=dict)  # server -> estimated tokens
    builtins: list[str] = field(default_factory=list)

    @property
    def total_tokens(self) -> int:
        return sum(self.tokens.values())

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total_tokens": self.total_tokens}


def cut(description: str, limit: int = MAX_DESCRIPTION) -> str:
    """`description`, or its start and MARKER when longer than `limit` (never over `limit`)."""
    if len(description) <= limit:
        return description
    return description[: limit - len(MARKER)] + MARKER


def token_estimate(entry: PoolEntry) -> int:
    shown = {
        "name": entry.name,
        "description": entry.description,
        "input_schema": entry.input_schema,
    }
    return math.ceil(len(json.dumps(shown, separators=(",", ":"))) / CHARS_PER_TOKEN)


def assemble(results: Iterable[ProbeResult], builtins: Iterable[str] = ()) -> Pool:
    """The pool of every connected server's tools, with collisions resolved and reported."""
    pool = Pool(builtins=sorted(set(builtins)))
    owners: dict[str, str | None] = dict.fromkeys(pool.builtins)
    for result in sorted(results, key=lambda r: r.name):
        if result.state != "connected":
            continue
        pool.tokens[result.name] = 0
        for tool in result.tools:
            entry = PoolEntry(
                tool_name(result.name, tool.name),
                result.name,
                tool.name,
                cut(tool.description),
                _carried(tool.annotations, tool.title),
                tool.input_schema,
            )
            if entry.name in owners:
                winner = owners[entry.name]
                reason = "builtin" if winner is None else "duplicate"
                pool.collisions.append(
                    Collision(entry.name, result.name, tool.name, winner, reason)
                )
                continue
            owners[entry.name] = result.name
            pool.entries.append(entry)
            pool.tokens[result.name] += token_estimate(entry)
    pool.entries.sort(key=lambda e: e.name)
    return pool


def _carried(annotations: JSONObject, title: str | None) -> JSONObject:
    kept = {key: annotations[key] for key in CARRIED if key in annotations}
    if title and "title" not in kept:
        kept["title"] = title
    return kept

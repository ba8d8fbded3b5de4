"""The fast path of plugman.manifest.jsonloc: the C `json.loads`, for text that is strict JSON
with nothing the tolerant parser would report (a duplicate key, NaN or Infinity, nesting
beyond its depth limit)."""

from __future__ import annotations

import json
from typing import Any


class _NotStrict(Exception):  # noqa: N818 (internal control flow, never escapes)
    """The text holds what the tolerant parser reports: let it read the text."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _NotStrict  # a duplicate key: the tolerant parser reports it
    return found


def _constant(name: str) -> Any:
    raise _NotStrict  # NaN, Infinity: not JSON


def strict(text: str, max_depth: int) -> tuple[Any] | None:
    """(the value) when `text` is strict JSON that plugman.manifest.jsonloc's tolerant parser
    would read the same way, else None."""
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except (_NotStrict, ValueError, RecursionError):
        return None
    if text.count("{") + text.count("[") > max_depth and _depth(value) > max_depth:
        return None  # deeper than the tolerant parser allows: let it say so
    return (value,)


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            stack += [
                (child, depth + 1) for child in (item.values() if isinstance(item, dict) else item)
            ]
    return deepest

"""The project's `.mcp.json` (`{"mcpServers": {...}}`), edited by `plugman mcp add|remove`.

Entries, their order and other top-level keys are kept; the file is written back with its own
indentation (2 spaces for a new file). The file's bytes before plugman's first change are kept
in the project record (`owned[<path>]`), so removing what plugman added restores them exactly,
and deletes the file when plugman created it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from plugman.core.errors import PlugmanError
from plugman.core.fs import read_bytes

WRAPPER = "mcpServers"
_INDENT = re.compile(r"\n([ \t]+)\S")


def read(path: Path) -> tuple[str | None, dict[str, Any]]:
    """The file's text (None when absent) and its parsed object."""
    data = read_bytes(path)
    if data is None:
        return None, {}
    try:
        text = data.decode("utf-8")
        doc = json.loads(text) if text.strip() else {}
    except (UnicodeDecodeError, ValueError) as exc:
        raise _broken(path, str(exc)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get(WRAPPER, {}), dict):
        raise _broken(path, f'expected {{"{WRAPPER}": {{...}}}}')
    return text, doc


def servers(path: Path) -> dict[str, Any]:
    """The server map of the file (empty when the file is absent)."""
    found: dict[str, Any] = read(path)[1].get(WRAPPER, {})
    return found


def add(path: Path, name: str, entry: dict[str, Any], owned: dict[str, Any]) -> bytes:
    """The file's bytes with server `name` added last; notes the pre-image in `owned`."""
    text, doc = read(path)
    mine = owned.setdefault(str(path), {"before": text, "added": []})
    doc.setdefault(WRAPPER, {})[name] = entry
    if name not in mine["added"]:
        mine["added"].append(name)
    return _dump(doc, text)


def remove(path: Path, name: str, owned: dict[str, Any]) -> bytes | None:
    """The file's bytes without server `name`: the exact bytes from before plugman's change when
    that is what is left, None (delete) when plugman created the file and nothing else is in it."""
    text, doc = read(path)
    doc.get(WRAPPER, {}).pop(name, None)
    mine = owned.get(str(path))
    if mine is None:
        return _dump(doc, text)
    if name in mine["added"]:
        mine["added"].remove(name)
    before = mine["before"]
    if _same(doc, json.loads(before) if before and before.strip() else {}):
        owned.pop(str(path))
        return None if before is None else before.encode("utf-8")
    if not mine["added"]:
        owned.pop(str(path))  # nothing of plugman's is left; the rest is the user's
    return _dump(doc, text)


def _same(doc: dict[str, Any], before: Any) -> bool:
    """Equal, in order, ignoring an empty `mcpServers` plugman may have introduced."""

    def normal(value: Any) -> str:
        if isinstance(value, dict) and value.get(WRAPPER) == {}:
            value = {k: v for k, v in value.items() if k != WRAPPER}
        return json.dumps(value)

    return normal(doc) == normal(before)


def _dump(doc: dict[str, Any], text: str | None) -> bytes:
    found = _INDENT.search(text or "")
    indent = found.group(1) if found else "  "
    return (json.dumps(doc, indent=indent, ensure_ascii=False) + "\n").encode("utf-8")


def _broken(path: Path, problem: str) -> PlugmanError:
    return PlugmanError(
        f"{path} is not a valid MCP config: {problem}",
        hint="fix the file; plugman leaves it as it is",
    )

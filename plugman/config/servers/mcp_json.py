"""The project's `.mcp.json` (`{"mcpServers": {...}}`), edited by `plugman mcp add|remove`.

`add` splices one block of text into the file (`plugman.manifest.edit`), so every byte of the
user's (and of what `plugman export` wrote there for Claude Code) stays as it was. The block is
kept in the project record (`McpOwned.blocks[<name>]` of plugman.core.owned, and whether
plugman created the file), so `remove` takes out exactly that block, and deletes the file when
plugman created it and nothing else is left. A server plugman did not add is taken out
structurally (the file is written back with its own indentation). A record from before blocks
(`McpBefore`: `before`/`added`) is still read the way it was written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from plugman.core.errors import PlugmanError
from plugman.core.fs import read_bytes
from plugman.core.jsonvalue import ServerEntry
from plugman.core.owned import McpBefore, McpOwned, Owned
from plugman.manifest import edit
from plugman.manifest.edit import Block, Part

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


def add(path: Path, name: str, entry: ServerEntry, owned: Owned) -> bytes:
    """The file's bytes with server `name` added last; the block inserted noted in `owned`."""
    text, _doc = read(path)
    edited = edit.add("json", text or edit.module("json").BASE, [_part(name, entry)], str(path))
    mine = owned.mcp(str(path), text is None)
    if isinstance(mine, McpOwned):
        mine.blocks[name] = [(b.before, b.after, b.created) for b in edited.blocks]
    elif name not in mine.added:  # a record from before blocks
        mine.added.append(name)
    return edited.text.encode("utf-8")


def remove(path: Path, name: str, owned: Owned) -> bytes | None:
    """The file's bytes without server `name`: plugman's block taken out exactly (None, delete,
    when plugman created the file and nothing else is in it)."""
    text, doc = read(path)
    mine = owned.mcp(str(path), False) if owned.get(str(path)) else None
    if isinstance(mine, McpOwned) and name in mine.blocks:
        blocks = [Block(b, a, c or None) for b, a, c in mine.blocks.pop(name)]
        entry = doc.get(WRAPPER, {}).get(name)
        left = edit.take_out("json", text or "", blocks, [_part(name, entry)], str(path))
        if not mine.blocks:
            owned.drop(str(path))
        if mine.created and json.loads(left) in ({}, {WRAPPER: {}}):
            return None
        return left.encode("utf-8")
    doc.get(WRAPPER, {}).pop(name, None)
    if not isinstance(mine, McpBefore):
        return _dump(doc, text)
    return _remove_before_blocks(doc, text, name, mine, owned, path)


def _part(name: str, entry: Any) -> Part:
    return Part((WRAPPER,), {name: entry})


def _remove_before_blocks(
    doc: dict[str, Any],
    text: str | None,
    name: str,
    mine: McpBefore,
    owned: Owned,
    path: Path,
) -> bytes | None:
    """Removal under a record from before blocks: the file's old bytes when that is what is
    left, else the file written back with its own indentation."""
    if name in mine.added:
        mine.added.remove(name)
    before = mine.before
    if _same(doc, json.loads(before) if before and before.strip() else {}):
        owned.drop(str(path))
        return None if before is None else before.encode("utf-8")
    if not mine.added:
        owned.drop(str(path))  # nothing of plugman's is left; the rest is the user's
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

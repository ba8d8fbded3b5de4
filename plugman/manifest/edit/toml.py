"""TOML files (Codex `config.toml`): each entry is a `[container.id]` table appended at the end
of the file, so comments and every other table stay as written."""

from __future__ import annotations

import tomllib
from typing import Any

from plugman.manifest.edit.model import Block, EditError, Part

BASE = ""


def load(text: str, where: str) -> Any:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise EditError(
            str(exc), where=where, hint="fix the file; plugman left it as it is"
        ) from None


def insert(text: str, part: Part) -> tuple[str, Block]:
    if part.listed:
        raise EditError("TOML targets take tables, not lists")
    tables = _dump(part)
    newlines = len(text) - len(text.rstrip("\n"))
    lead = "\n" * max(0, 2 - newlines) if text else ""
    block = lead + tables
    return text + block, Block("", block, _missing(text, part))


def _missing(text: str, part: Part) -> tuple[str, ...] | None:
    """The shallowest part of the container the file lacks (the block creates it), if any."""
    data: Any = tomllib.loads(text)
    for depth, key in enumerate(part.container, start=1):
        if not isinstance(data, dict) or key not in data:
            return part.container[:depth]
        data = data[key]
    return None


def _dump(part: Part) -> str:
    """`[a.b.id]` tables, their maps written inline (as Codex's docs write `env = {...}`)."""
    import tomlkit  # lazy: ~20 ms; only writing needs it (reading takes tomllib)

    document = tomlkit.document()
    node: Any = document
    for key in part.container:
        table = tomlkit.table(is_super_table=True)
        node.add(key, table)
        node = table
    for key, value in part.entries.items():
        table = tomlkit.table()
        for field, item in value.items():
            if isinstance(item, dict):
                inline = tomlkit.inline_table()
                inline.update(item)
                item = inline
            table.add(field, item)
        node.add(key, table)
    return tomlkit.dumps(document)


def remove(text: str, part: Part, where: str) -> str:
    """`text` without the part's tables, through tomlkit (which keeps comments elsewhere)."""
    import tomlkit  # lazy: ~20 ms; only writing needs it (reading takes tomllib)

    document = tomlkit.parse(text)
    node: Any = document
    for key in part.container:
        node = node[key]
    for key in part.entries:
        del node[key]
    return tomlkit.dumps(document)

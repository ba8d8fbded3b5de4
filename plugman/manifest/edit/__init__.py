"""Editing an agent's own config file, owning only what plugman adds.

plugman adds one block of text per container (a map or list it fills) and later takes out
exactly that block, so every byte it does not own stays as it was: comments, order, spacing.
When the user has edited around or inside the block, a structural removal takes out the
entries that are still as plugman wrote them; an entry the user changed is theirs and stays.
Where the file's layout does not let one entry go cleanly, that entry stays (with a warning),
never the whole file refused.
Every edit is checked by reading the result back: the data must be the old data plus (or
minus) plugman's entries, or nothing is written.
"""

from __future__ import annotations

import copy
from types import ModuleType
from typing import Any

from plugman.core import progress
from plugman.manifest.edit.model import Block, Edited, EditError, Part, Path_

__all__ = [
    "Block",
    "EditError",
    "Edited",
    "Part",
    "Path_",
    "add",
    "at",
    "jsonc",
    "module",
    "render",
    "take_out",
]


def module(fmt: str) -> ModuleType:
    # lazy: `plugman list` reads no agent file: the format modules (and yaml, ~19 ms) wait
    from plugman.manifest.edit import jsonc, toml, yaml

    return {"json": jsonc, "toml": toml, "yaml": yaml}[fmt]


def at(data: Any, path: Path_) -> Any:
    """The value at `path`, or None when some step is missing."""
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def render(fmt: str, parts: list[Part]) -> str:
    """A new document holding `parts` (what `config resolve --target` prints)."""
    mod = module(fmt)
    return add(fmt, mod.BASE, parts, "<rendered>").text


def add(fmt: str, text: str, parts: list[Part], where: str) -> Edited:
    """`text` with each part's entries added last in its container."""
    mod = module(fmt)
    data = mod.load(text, where)
    blocks: list[Block] = []
    present: list[str] = []
    differ: list[str] = []
    for part in parts:
        existing = at(data, part.container)
        new = {
            key: value
            for key, value in part.entries.items()
            if not _holds(existing, key, value, part.listed)
        }
        present += [key for key in part.entries if key not in new]
        differ += [
            key
            for key, value in part.entries.items()
            if key not in new and not _holds(existing, key, value, part.listed, exact=True)
        ]
        if not new:
            continue
        _container_ok(existing, part, where)
        text, block = mod.insert(text, part._replace(entries=new))
        expected = _with(data, part._replace(entries=new))
        data = mod.load(text, where)
        if data != expected:
            raise EditError(
                f"adding to {'.'.join(part.container)} would change other settings",
                where=where,
                hint="the file's layout is unusual; add the entries by hand (see --dry-run)",
            )
        blocks.append(block)
    return Edited(text, blocks, present, differ)


def take_out(fmt: str, text: str, blocks: list[Block], parts: list[Part], where: str) -> str:
    """`text` without plugman's `blocks`; `parts` are the entries they held (as written).
    An entry the user has changed since stays; everything else of theirs stays byte-for-byte."""
    mod = module(fmt)
    data = mod.load(text, where)
    created = _created(blocks, parts)
    expected = _without(data, parts, created)
    exact = text
    for block in reversed(blocks):
        if exact.count(block.after) != 1:
            break
        exact = exact.replace(block.after, block.before)
    else:
        if any(b.after and not b.before and text.startswith(b.after) for b in blocks):
            exact = exact.lstrip("\n")  # plugman's block opened the file: so does what followed
        if _same(mod.load(exact, where), expected, parts):
            return exact
    return _structural(mod, text, parts, created, expected, where)


def _same(data: Any, expected: Any, parts: list[Part]) -> bool:
    """Equal, counting an empty container, a YAML key with nothing under it and no container
    as the same."""

    def normal(value: Any) -> Any:
        value = copy.deepcopy(value)
        for part in (p for p in parts if p.container):
            parent = at(value, part.container[:-1])
            if isinstance(parent, dict) and parent.get(part.container[-1]) in ({}, []):
                parent[part.container[-1]] = None
            if isinstance(parent, dict) and parent.get(part.container[-1], 0) is None:
                del parent[part.container[-1]]  # and an empty one as none at all
        return value

    return bool(normal(data) == normal(expected))


def _created(blocks: list[Block], parts: list[Part]) -> list[Path_]:
    """Every container path plugman's blocks created, deepest first."""
    found = set()
    for top in {b.created for b in blocks if b.created}:
        found.add(top)
        for part in parts:
            if part.container[: len(top)] == top:
                found |= {
                    part.container[:depth] for depth in range(len(top), len(part.container) + 1)
                }
    return sorted(found, key=len, reverse=True)


def _structural(
    mod: ModuleType, text: str, parts: list[Part], created: list[Path_], expected: Any, where: str
) -> str:
    original = text
    data = mod.load(text, where)
    for part in parts:
        mine = {
            key: value
            for key, value in part.entries.items()
            if _holds(at(data, part.container), key, value, part.listed, exact=True)
        }
        if mine:
            text = mod.remove(text, part._replace(entries=mine), where)
    for path in created:
        if at(mod.load(text, where), path) in ({}, []):
            text = mod.remove(text, Part(path[:-1], {path[-1]: None}), where)
    if _same(mod.load(text, where), expected, parts):
        return text
    return _one_by_one(mod, original, parts, created, where)


def _one_by_one(
    mod: ModuleType, text: str, parts: list[Part], created: list[Path_], where: str
) -> str:
    """Each entry taken out on its own, kept only where the result is the data before less
    that entry: an entry the file's layout does not let plugman take out cleanly stays (said
    once each), never the whole file refused."""
    for part in parts:
        for key, value in part.entries.items():
            data = mod.load(text, where)
            if not _holds(at(data, part.container), key, value, part.listed, exact=True):
                continue
            one = part._replace(entries={key: value})
            try:
                tried = mod.remove(text, one, where)
                ok = _same(mod.load(tried, where), _without(data, [one], []), [one])
            except (EditError, ValueError, KeyError):
                ok = False
            if ok:
                text = tried
            else:
                progress.warn(
                    f"{where}: {'.'.join((*part.container, key))} could not be taken out "
                    "without touching other settings; left as it is (delete it by hand)"
                )
    for path in created:
        data = mod.load(text, where)
        if at(data, path) in ({}, []):
            empty = Part(path[:-1], {path[-1]: at(data, path)})
            tried = mod.remove(text, Part(path[:-1], {path[-1]: None}), where)
            if mod.load(tried, where) == _without(data, [empty], []):
                text = tried
    return text


def _holds(container: Any, key: str, value: Any, listed: bool, exact: bool = False) -> bool:
    if listed:
        return isinstance(container, list) and value in container
    if not isinstance(container, dict) or key not in container:
        return False
    return not exact or container[key] == value


def _container_ok(existing: Any, part: Part, where: str) -> None:
    kind = list if part.listed else dict
    if existing is not None and not isinstance(existing, kind):
        name = "a list" if part.listed else "an object"
        raise EditError(
            f"{'.'.join(part.container)} is not {name}",
            where=where,
            hint="fix that key by hand, then run the command again",
        )


def _with(data: Any, part: Part) -> Any:
    result = copy.deepcopy(data)
    if not part.container:  # top-level keys
        result.update(part.entries)
        return result
    node = result
    for key in part.container[:-1]:
        node = node.setdefault(key, {})
    last = part.container[-1]
    if node.get(last) is None:  # absent, or a YAML key with nothing under it yet
        node[last] = [] if part.listed else {}
    if part.listed:
        node[last].extend(part.entries.values())
    else:
        node[last].update(part.entries)
    return result


def _without(data: Any, parts: list[Part], created: list[Path_]) -> Any:
    result = copy.deepcopy(data)
    for part in parts:
        container = at(result, part.container)
        for key, value in part.entries.items():
            if _holds(container, key, value, part.listed, exact=True):
                if part.listed:
                    container.remove(value)
                else:
                    del container[key]
    for path in created:
        parent = at(result, path[:-1])
        if isinstance(parent, dict) and parent.get(path[-1]) in ({}, []):
            del parent[path[-1]]
    return result

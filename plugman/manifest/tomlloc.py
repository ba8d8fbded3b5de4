"""Where a key path is written in a TOML file, and where a text file holds an unresolved merge.

`locator(text)` finds the line (and column) of a key path such as `plugins[2].source.type`
in plugman.lock or `plugins["fmt@acme"].version` in plugman.toml, from the file's lines: a
`[table]` or `[[array]]` header, a `key = value` line (dotted and quoted keys), and the keys of
an inline table on that line. It is asked only when a diagnostic needs a place, so reading a
good file costs nothing. `conflict_line(text)` is the first line of a merge conflict git left
(`<<<<<<<`, `=======`, `>>>>>>>`, `|||||||`), which no parser should be asked to read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from plugman.core.errors import InputError
from plugman.manifest.diagnostics import KeyPath, Locator, Sink

CONFLICT = re.compile(r"^(?:<{7}|={7}|>{7}|\|{7})(?:\s|$)")
_KEY = r'"(?:[^"\\]|\\.)*"|\'[^\']*\'|[A-Za-z0-9_-]+'
_KEYS = re.compile(rf"\s*(?:{_KEY})(?:\s*\.\s*(?:{_KEY}))*")
_PART = re.compile(_KEY)
_HEADER = re.compile(rf"^\s*(\[\[?)\s*((?:{_KEY})(?:\s*\.\s*(?:{_KEY}))*)\s*\]\]?")
_INLINE_KEY = re.compile(rf"[{{,]\s*({_KEY})\s*=")


def conflict_line(text: str) -> int | None:
    """The first line (1-based) that is a merge conflict marker, else None."""
    for number, line in enumerate(text.splitlines(), 1):
        if CONFLICT.match(line):
            return number
    return None


def _keys(text: str) -> tuple[str, ...]:
    """`a."b.c".d` as its parts."""
    out = []
    for part in _PART.findall(text):
        if part.startswith('"'):
            try:
                part = json.loads(part)
            except ValueError:
                part = part[1:-1]
        elif part.startswith("'"):
            part = part[1:-1]
        out.append(part)
    return tuple(out)


def positions(text: str) -> dict[KeyPath, tuple[int, int]]:
    """Every key path written in `text`, with its first line and column."""
    found: dict[KeyPath, tuple[int, int]] = {}
    counts: dict[tuple[str, ...], int] = {}
    table: KeyPath = ()
    for number, line in enumerate(text.splitlines(), 1):
        header = _HEADER.match(line)
        if header:
            keys = _keys(header.group(2))
            if header.group(1) == "[[":
                counts[keys] = counts.get(keys, -1) + 1
                table = (*keys, counts[keys])
            else:
                table = keys
            found.setdefault(table, (number, line.index("[") + 1))
            continue
        match = _KEYS.match(line)
        if not match or not line[match.end() :].lstrip().startswith("="):
            continue
        path = (*table, *_keys(match.group(0)))
        found.setdefault(path, (number, len(line) - len(line.lstrip()) + 1))
        rest = line[match.end() :]
        for inner in _INLINE_KEY.finditer(rest):
            column = match.end() + inner.start(1) + 1
            found.setdefault((*path, *_keys(inner.group(1))), (number, column))
    return found


def locator(text: str) -> Locator:
    """A locator for `text`: a key path's place, else its nearest written parent's."""
    cache: list[dict[KeyPath, tuple[int, int]]] = []

    def locate(path: KeyPath) -> tuple[int, int] | None:
        if not cache:
            cache.append(positions(text))
        for end in range(len(path), 0, -1):
            if path[:end] in cache[0]:
                return cache[0][path[:end]]
        return None

    return locate


def refused(
    file: str, locate: Locator | None, found: Sequence[tuple[KeyPath, str]], hint: str
) -> InputError:
    """The error for a file whose every finding (`(key path, message)`) is located: the first
    said in the message (`FILE:LINE: key.path: message`), all of them as diagnostics."""
    sink = Sink(file, locate)
    for path, message in found:
        sink.error("invalid-input", message, path)
    first = sink.items[0]
    where = f"{file}:{first.line}" if first.line else file
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    at = f"{first.path}: " if first.path else ""
    return InputError(f"{at}{first.message}{more}", where=where, hint=hint, diagnostics=sink.items)


def merge_conflict(file: str, line: int) -> InputError:
    """The error for a file git left mid-merge."""
    return InputError(
        "an unresolved merge conflict marker: the file is half of two versions",
        where=f"{file}:{line}",
        hint="resolve the merge (keep one side of each conflict, remove the <<<<<<< ======= "
        ">>>>>>> lines), then run the command again; for plugman.lock, take either side and "
        "run: plugman lock",
    )

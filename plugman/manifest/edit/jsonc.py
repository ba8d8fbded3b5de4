"""JSON and JSONC files: blocks are spliced in at the end of a container, in the file's own
indentation; comments and trailing commas elsewhere are kept as they are."""

from __future__ import annotations

import json
import re
from typing import Any

from plugman.manifest import jsonloc
from plugman.manifest.diagnostics import KeyPath, format_path
from plugman.manifest.edit.model import Block, EditError, Part, Path_

BASE = "{}\n"
_UNIT = re.compile(r"\n([ \t]+)\S")
_FATAL = {"json-trailing-content"}


def load(text: str, where: str) -> Any:
    return _parse(text, where).value


def _parse(text: str, where: str) -> jsonloc.JsonDocument:
    try:
        doc = jsonloc.parse(text)
    except jsonloc.JsonSyntaxError as exc:
        raise _broken(f"{where}:{exc.line}:{exc.column}", exc.message) from None
    for problem in doc.problems:
        if problem.code in _FATAL:
            line, column = doc.position(problem.offset)
            raise _broken(f"{where}:{line}:{column}", problem.message)
    if not isinstance(doc.value, dict):
        raise _broken(where, "the file does not hold a JSON object")
    return doc


def _broken(where: str, problem: str) -> EditError:
    return EditError(problem, where=where, hint="fix the file; plugman left it as it is")


def insert(text: str, part: Part) -> tuple[str, Block]:
    doc = _parse(text, "")
    found = _existing(doc.value, part.container)
    if not isinstance(jsonloc_value(doc, found), dict | list):
        raise EditError(f"{'.'.join(found)} is not an object", hint="fix that key by hand")
    if found == part.container:
        items = [_item(key, value, part.listed) for key, value in part.entries.items()]
        created = None
    else:
        nested: Any = list(part.entries.values()) if part.listed else dict(part.entries)
        for key in reversed(part.container[len(found) + 1 :]):
            nested = {key: nested}
        key = part.container[len(found)]
        items = [(key, nested)]
        created = (*found, key)
    open_at = _value_start(doc, text, found)
    return _splice(text, doc, found, open_at, items, created)


def _existing(data: Any, path: Path_) -> Path_:
    """The longest prefix of `path` that names a value in `data`."""
    for depth, key in enumerate(path):
        if not isinstance(data, dict) or key not in data:
            return path[:depth]
        data = data[key]
    return path


def _item(key: str, value: Any, listed: bool) -> tuple[str | None, Any]:
    return (None if listed else key), value


def _value_start(doc: jsonloc.JsonDocument, text: str, path: KeyPath) -> int:
    offset = doc.offsets[path]  # a member's key, or a list element's value
    return (
        offset if not path or isinstance(path[-1], int) else jsonloc.member_value(text, offset)[0]
    )


def set_member(text: str, container: KeyPath, key: str, value: Any, where: str) -> str:
    """`text` with the object at `container` holding `key: value`: a value that is there is
    replaced where it stands; a new member goes last, in the file's own indentation."""
    doc = _parse(text, where)
    found = jsonloc_value(doc, container)
    if not isinstance(found, dict):
        raise EditError(f"{format_path(container)} is not an object", where=where)
    if key in found:
        start, end = jsonloc.member_value(text, doc.offsets[(*container, key)])
        return text[:start] + json.dumps(value, ensure_ascii=False) + text[end:]
    open_at = _value_start(doc, text, container)
    return _splice(text, doc, container, open_at, [(key, value)], None)[0]


def _children(doc: jsonloc.JsonDocument, text: str, path: KeyPath) -> list[tuple[int, int, int]]:
    """(start, value start, value end) of each member or element of the container at `path`."""
    value = jsonloc_value(doc, path)
    found = []
    if isinstance(value, dict):
        for key in value:
            start = doc.offsets[(*path, key)]
            found.append((start, *jsonloc.member_value(text, start)))
    else:
        for index in range(len(value)):
            start = doc.offsets[(*path, index)]
            found.append((start, start, jsonloc.value_end(text, start)))
    return sorted(found)


def jsonloc_value(doc: jsonloc.JsonDocument, path: KeyPath) -> Any:
    value = doc.value
    for key in path:
        value = value[key]
    return value


def _splice(
    text: str,
    doc: jsonloc.JsonDocument,
    path: KeyPath,
    open_at: int,
    items: list[tuple[str | None, Any]],
    created: Path_ | None,
) -> tuple[str, Block]:
    children = _children(doc, text, path)
    unit = _unit(text)
    if children:
        start, _, end = children[-1]
        line_start = text.rfind("\n", 0, start) + 1
        lead = text[line_start:start]
        indent = lead if not lead.strip() and line_start > 0 else None
        sep = "\n" + indent if indent is not None else " "
        body = "".join("," + sep + _dump(k, v, indent, unit) for k, v in items)
        return text[:end] + body + text[end:], Block("", body, created)
    close_at = jsonloc.value_end(text, open_at)
    outer = _indent_of(text, open_at)
    inner = outer + unit
    members = ",\n".join(inner + _dump(k, v, inner, unit) for k, v in items)
    before = text[open_at:close_at]
    after = before[0] + "\n" + members + "\n" + outer + before[-1]
    return text[:open_at] + after + text[close_at:], Block(before, after, created)


def _unit(text: str) -> str:
    found = _UNIT.search(text)
    return found.group(1) if found else "  "


def _indent_of(text: str, offset: int) -> str:
    line_start = text.rfind("\n", 0, offset) + 1
    line = text[line_start:offset]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _dump(key: str | None, value: Any, indent: str | None, unit: str) -> str:
    if indent is None:
        body = json.dumps(value, ensure_ascii=False)
    else:
        body = json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + indent)
    return body if key is None else json.dumps(key, ensure_ascii=False) + ": " + body


def remove(text: str, part: Part, where: str) -> str:
    """`text` without the part's entries (by key, or by value for a list), each cut with the
    comma that joins it to its neighbour."""
    for key, value in part.entries.items():
        doc = _parse(text, where)
        container = jsonloc_value(doc, part.container)
        index = container.index(value) if part.listed else list(container).index(key)
        children = _children(doc, text, part.container)
        start, _, end = children[index]
        if index > 0:
            text = text[: children[index - 1][2]] + text[end:]
        elif len(children) > 1:
            text = text[:start] + text[children[1][0] :]
        else:
            open_at = _value_start(doc, text, part.container)
            close_at = jsonloc.value_end(text, open_at)
            text = text[: open_at + 1] + text[close_at - 1 :]
    return text

"""YAML files (Goose, Continue): entries are lines appended under a top-level block key, in
the file's own child indentation; the key is added at the end when the file lacks it. A key
written inline (`extensions: {}`) is refused rather than rewritten."""

from __future__ import annotations

import re
from typing import Any

import yaml as pyyaml

from plugman.manifest.edit.model import Block, EditError, Part

BASE = ""
_SKIP = re.compile(r"[ \t]*(#.*)?$")


def load(text: str, where: str) -> Any:
    try:
        data = pyyaml.safe_load(text) if text.strip() else {}
    except pyyaml.YAMLError as exc:
        raise EditError(
            str(exc).replace("\n", " "), where=where, hint="fix the file; plugman left it as it is"
        ) from None
    if not isinstance(data, dict):
        raise EditError("the file does not hold a YAML mapping", where=where)
    return data


def insert(text: str, part: Part) -> tuple[str, Block]:
    if len(part.container) != 1:
        raise EditError("YAML targets take a top-level key only")
    key = part.container[0]
    lines = text.splitlines(keepends=True)
    head = _key_line(lines, key)
    if head is None:
        lead = "" if not text or text.endswith("\n") else "\n"
        block = lead + f"{key}:\n" + _dump(part, "  ")
        return text + block, Block("", block, part.container)
    last, indent = _children(lines, head, part.listed)
    at = sum(len(line) for line in lines[: last + 1])
    lead = "" if text[:at].endswith("\n") else "\n"
    block = lead + _dump(part, indent)
    return text[:at] + block + text[at:], Block("", block, None)


def _key_line(lines: list[str], key: str) -> int | None:
    pattern = re.compile(rf"{re.escape(key)}[ \t]*:(.*)$")
    for index, line in enumerate(lines):
        match = pattern.match(line.rstrip("\r\n"))
        if match:
            if not _SKIP.fullmatch(match.group(1)):
                raise EditError(
                    f"{key} is written inline on line {index + 1}",
                    hint=f"write {key} as an indented block (or delete the line), then run again",
                )
            return index
    return None


def _children(lines: list[str], head: int, listed: bool) -> tuple[int, str]:
    """The index of the last line under the key at `head`, and the child indentation."""
    last, indent = head, None
    for index in range(head + 1, len(lines)):
        line = lines[index].rstrip("\r\n")
        if _SKIP.fullmatch(line):
            continue
        if line[:1] in (" ", "\t") or (listed and line.startswith("-")):
            last = index
            if indent is None:
                indent = line[: len(line) - len(line.lstrip(" \t"))]
            continue
        break
    return last, indent if indent is not None else "  "


def _dump(part: Part, indent: str) -> str:
    if part.listed:
        body = pyyaml.safe_dump(
            list(part.entries.values()), sort_keys=False, allow_unicode=True, width=1000
        )
    else:
        body = pyyaml.safe_dump(part.entries, sort_keys=False, allow_unicode=True, width=1000)
    return "".join(indent + line for line in body.splitlines(keepends=True))


def remove(text: str, part: Part, where: str) -> str:
    raise EditError(
        "plugman's entries were edited since it wrote them",
        where=where,
        hint="remove them by hand; plugman left the file as it was",
    )

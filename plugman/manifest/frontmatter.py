"""YAML front matter of Markdown files (SKILL.md, commands, agents), with key locations."""

from __future__ import annotations

import re
from typing import Any

from plugman.diagnostics import ERROR, KeyPath, Locator, Sink

_FENCE = re.compile(r"^---[ \t]*\r?$", re.MULTILINE)
_KEY = re.compile(r"^([^\s:#][^:]*?)[ \t]*:", re.MULTILINE)


def file_start(path: KeyPath) -> tuple[int, int]:
    """The locator of a Markdown file without front matter: its first line."""
    return 1, 1


def split(text: str) -> tuple[str, int] | None:
    """The front matter block and the line it starts on, or None when there is none."""
    text = text.removeprefix("\ufeff")
    if not _FENCE.match(text):
        return None
    start = text.index("\n") + 1 if "\n" in text else len(text)
    end = _FENCE.search(text, start)
    if end is None:
        return None
    return text[start : end.start()], 2


def locator(block: str, first_line: int) -> Locator:
    """A key-path locator for the top-level keys of a front matter block."""
    lines = {m.group(1).strip("'\""): block.count("\n", 0, m.start()) for m in _KEY.finditer(block)}

    def locate(path: KeyPath) -> tuple[int, int] | None:
        if path and isinstance(path[0], str) and path[0] in lines:
            return first_line + lines[path[0]], 1
        return first_line, 1

    return locate


def parse(text: str, sink: Sink, severity: str = ERROR) -> dict[str, Any] | None:
    """The front matter as a mapping; None when absent. YAML errors are reported, located."""
    sink.locate = file_start
    found = split(text)
    if found is None:
        return None
    block, first_line = found
    import yaml  # lazy: ~25 ms, only paid when a Markdown file is checked

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(block, Loader=loader)  # a safe loader: plain data only
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = first_line + mark.line if mark else first_line
        column = mark.column + 1 if mark else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        sink.add(
            ERROR,
            "yaml-syntax",
            f"invalid YAML front matter: {problem}",
            (),
            "quote values that contain ': ' or start with a special character",
            line=line,
            column=column,
        )
        return {}
    sink.locate = locator(block, first_line)
    if data is None:
        return {}
    if not isinstance(data, dict):
        sink.error("frontmatter-shape", "front matter must be a mapping of keys to values")
        return {}
    return {str(key): _plain(value) for key, value in data.items()}


def _plain(value: Any) -> Any:
    """YAML data as JSON data: dates and other scalars become strings."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)

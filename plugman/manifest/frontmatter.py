"""YAML front matter of Markdown files (SKILL.md, commands, agents), with key locations."""

from __future__ import annotations

import re
from typing import Any

from plugman.diagnostics import ERROR, KeyPath, Locator, Sink

_FENCE = re.compile(r"^---[ \t]*\r?$", re.MULTILINE)
_KEY = re.compile(r"^([^\s:#][^:]*?)[ \t]*:", re.MULTILINE)
# `key: text` lines (plain, or quoted without escapes) and `key: [a, "b"]` lists: the shape of
# most front matter. Anything else (blocks, nesting, what YAML reads as a number, bool, null or
# date) goes to PyYAML. tests/unit/test_frontmatter.py holds this to PyYAML's results.
_SIMPLE_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):[ ]+(.*?)[ ]*")
_QUOTED = re.compile(r'"([^"\\]*)"|\'([^\']*)\'')
_PLAIN_START = re.compile(r"[^-?:,\[\]{}#&*!|>'\"%@`~=<\s]")
_NOT_PLAIN = re.compile(r": |:$| #|\t")
_FLOW_INDICATOR = re.compile(r"[\[\]{},:#?]")
# PyYAML's implicit int, float and timestamp resolvers (yaml/resolver.py), for values that start
# with a digit, '+' or '.'.
_NUMBER = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN)
    |[-+]?0b[0-1_]+
    |[-+]?0[0-7_]+
    |[-+]?(?:0|[1-9][0-9_]*)
    |[-+]?0x[0-9a-fA-F_]+
    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+
    |[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
    |[0-9][0-9][0-9][0-9]\ -[0-9][0-9]?\ -[0-9][0-9]?
     (?:[Tt]|[\ \t]+)[0-9][0-9]?
     :[0-9][0-9]\ :[0-9][0-9]\ (?:\.[0-9]*)?
     (?:[\ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""",
    re.VERBOSE,
)
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null"})


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


class Unreadable(Exception):  # noqa: N818 (a state, not a crash: it is already reported)
    """The front matter is there but cannot be read; the problem is already in the sink."""


def parse(text: str, sink: Sink, severity: str = ERROR) -> dict[str, Any] | None:
    """The front matter as a mapping; None when absent. Broken YAML is reported, located, and
    raises `Unreadable`."""
    sink.locate = file_start
    found = split(text)
    if found is None:
        return None
    block, first_line = found
    simple = simple_mapping(block)
    if simple is not None:
        sink.locate = locator(block, first_line)
        return simple
    import yaml  # lazy: ~15-25 ms, only paid for front matter beyond `key: text` lines

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(block, Loader=loader)  # a safe loader: plain data only
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = first_line + mark.line if mark else first_line
        column = mark.column + 1 if mark else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        sink.add(
            severity,
            "yaml-syntax",
            f"invalid YAML front matter: {problem}",
            (),
            "quote values that contain ': ' or start with a special character",
            line=line,
            column=column,
        )
        raise Unreadable from None
    sink.locate = locator(block, first_line)
    if data is None:
        return {}
    if not isinstance(data, dict):
        sink.error("frontmatter-shape", "front matter must be a mapping of keys to values")
        raise Unreadable
    return {str(key): _plain(value) for key, value in data.items()}


def simple_mapping(block: str) -> dict[str, str | list[str]] | None:
    """The mapping when every line is `key: text` or `key: [items]` (what PyYAML gives), else
    None."""
    found: dict[str, str | list[str]] = {}
    for line in block.split("\n"):
        line = line.removesuffix("\r")
        if not line.strip(" "):
            continue
        match = _SIMPLE_LINE.fullmatch(line)
        if match is None or match.group(1) in found or match.group(1).lower() in _YAML_WORDS:
            return None
        raw = match.group(2)
        value = _list(raw[1:-1]) if raw[:1] == "[" and raw[-1:] == "]" else _text(raw)
        if value is None:
            return None
        found[match.group(1)] = value
    return found or None


def _list(inner: str) -> list[str] | None:
    """A one-line flow sequence of simple strings."""
    if not inner.strip(" "):
        return []
    items = [item.strip(" ") for item in inner.split(",")]
    if any(not item for item in items):
        return None
    texts = [_text(item, flow=True) for item in items]
    return None if None in texts else [text for text in texts if text is not None]


def _text(value: str, *, flow: bool = False) -> str | None:
    """A scalar that YAML reads as this exact string, or None when unsure."""
    if not value.isprintable():  # stricter than YAML's printable set (and cheaper than a regex)
        return None
    quoted = _QUOTED.fullmatch(value)
    if quoted:
        return quoted.group(1) if quoted.group(1) is not None else quoted.group(2)
    if not _PLAIN_START.match(value) or _NOT_PLAIN.search(value):
        return None
    if (flow and _FLOW_INDICATOR.search(value)) or value.lower() in _YAML_WORDS:
        return None
    if value[0] in "0123456789+." and _NUMBER.match(value):
        return None
    return value


def _plain(value: Any) -> Any:
    """YAML data as JSON data: dates and other scalars become strings."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)

"""YAML front matter of Markdown files (SKILL.md, commands, agents), with key locations."""

from __future__ import annotations

import re
from typing import Any, NoReturn

from plugman.manifest.diagnostics import ERROR, KeyPath, Locator, Sink

_FENCE = re.compile(r"^---[ \t]*\r?$", re.MULTILINE)
_KEY = re.compile(r"^([^\s:#][^:]*?)[ \t]*:", re.MULTILINE)
# `key: text` lines (plain, or quoted without escapes) and `key: [a, "b"]` lists: the shape of
# most front matter. Anything else (blocks, nesting, what YAML reads as a number, bool, null or
# date) goes to PyYAML. tests/unit/test_frontmatter.py holds this to PyYAML's results.
_SIMPLE_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):[ ]+(.*?)[ ]*")
_QUOTED = re.compile(r'"([^"\\]*)"|\'([^\']*)\'')
_PLAIN_START = re.compile(r"[^-?:,\[\]{}#&*!|>'\"%@`~=<\s]")
_NOT_PLAIN = re.compile(r": |:$| #|\t")
_FLOW_INDICATOR = r"[\[\]{},:#?]"  # compiled when a flow value is first seen
# PyYAML's implicit int, float and timestamp resolvers (yaml/resolver.py), for values that start
# with a digit, '+' or '.' (compiled when one is first seen: ~0.5 ms, a tenth of a validation).
_NUMBER = r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
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
    |[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?
     (?:[Tt]|[\ \t]+)[0-9][0-9]?
     :[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?
     (?:[\ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$"""
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null"})
MAX_SIMPLE_KEY = 1000  # YAML refuses an implicit key longer than 1024 characters
MAX_DEPTH = 256  # as for JSON (jsonloc.MAX_DEPTH)
MAX_VALUES = 100_000  # once aliases are expanded: `&a [x, x]` reused 20 times is 2**20 values
MAX_INT_BITS = 14_000  # about 4200 digits: Python will not print more (a hex int can be longer)


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
        deep = _too_deep(block, loader)
        data = None if deep else yaml.load(block, Loader=loader)  # safe: plain data only
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line, column = _position(block, mark.index, first_line) if mark else (first_line, 1)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        _unreadable(sink, severity, problem, line, column)
    except Exception as exc:  # PyYAML's constructors on a bad scalar: 2020-13-45 (ValueError),
        # 5000 digits (ValueError), !!bool 'maybe' (KeyError), !!timestamp 'x' (AttributeError),
        # !!int '' (IndexError); RecursionError from the pure-Python loader (without libyaml)
        problem = "nested too deeply" if isinstance(exc, RecursionError) else _why(exc)
        _unreadable(sink, severity, f"a value cannot be read: {problem}", first_line, 1)
    if deep:  # plugman's own limits are errors even where broken YAML is a warning
        _unreadable(sink, ERROR, f"nested deeper than {MAX_DEPTH} levels", first_line, 1)
    sink.locate = locator(block, first_line)
    if data is None:
        return {}
    if not isinstance(data, dict):
        sink.error("frontmatter-shape", "front matter must be a mapping of keys to values")
        raise Unreadable
    try:
        return _plain(data, [MAX_VALUES], 0)  # type: ignore[no-any-return]
    except _TooLarge as exc:
        _unreadable(sink, ERROR, str(exc), first_line, 1)


def _position(block: str, offset: int, first_line: int) -> tuple[int, int]:
    """Line and column of a character of the block, lines ending in "\n" only (as for JSON
    files; YAML also breaks lines at a lone "\r", U+0085, U+2028 and U+2029). The end of the
    block (which ends in "\n") is the closing fence."""
    if offset >= len(block):
        return first_line + block.count("\n"), 1
    start = block.rfind("\n", 0, offset) + 1
    return first_line + block.count("\n", 0, offset), offset - start + 1


def _too_deep(block: str, loader: Any) -> bool:
    """Whether collections nest deeper than MAX_DEPTH. libyaml's parser is iterative, but its
    composer recurses in C: a deep enough block overflows the stack and kills the process, so
    look at the events first."""
    import yaml  # lazy: yaml is not loaded by `plugman config resolve` (+12 ms)

    depth = 0
    for event in yaml.parse(block, Loader=loader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return False


def _why(exc: Exception) -> str:
    if isinstance(exc, ValueError) and "int_max_str_digits" in str(exc):
        return "a number with too many digits"
    if isinstance(exc, ValueError):
        return str(exc)
    return "a tagged value (!!bool, !!int, !!timestamp, …) of the wrong form"


def _unreadable(sink: Sink, severity: str, problem: str, line: int, column: int) -> NoReturn:
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
        if len(match.group(1)) > MAX_SIMPLE_KEY:
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
    if (flow and re.search(_FLOW_INDICATOR, value)) or value.lower() in _YAML_WORDS:
        return None
    if value[0] in "0123456789+." and re.match(_NUMBER, value, re.VERBOSE):
        return None
    return value


class _TooLarge(Exception):  # noqa: N818 (reported as a YAML problem)
    pass


def _plain(value: Any, budget: list[int], depth: int) -> Any:
    """YAML data as JSON data: dates and other scalars become strings. Aliases are expanded,
    within `budget` values (a recursive alias would never end)."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooLarge(f"more than {MAX_VALUES} values once aliases are expanded")
    if depth > MAX_DEPTH:
        raise _TooLarge(f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        return {str(key): _plain(item, budget, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item, budget, depth + 1) for item in value]
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise _TooLarge("a number with too many digits")
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)

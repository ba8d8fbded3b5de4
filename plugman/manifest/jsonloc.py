"""A tolerant JSON reader that remembers where every value is.

`parse` returns the value as `json.loads` would, plus the line and column of every key path
(`plugin.json:12:5`). It tolerates (and reports) comments, trailing commas, content after the
value and duplicate keys; anything else is a `JsonSyntaxError` with a location."""

from __future__ import annotations

import json.decoder
import re
from bisect import bisect_right
from collections.abc import Callable
from json import JSONDecodeError
from typing import Any, NamedTuple

from plugman.manifest.diagnostics import ERROR, WARNING, KeyPath
from plugman.manifest.jsonstrict import strict

MAX_DEPTH = 256

# The C-accelerated string scanner behind json.loads (not in typeshed).
_scanstring: Callable[[str, int, bool], tuple[str, int]] = getattr(json.decoder, "scanstring")  # noqa: B009

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}
Offsets = dict[KeyPath, int]


class Problem(NamedTuple):
    """Something tolerated while reading: the value still loads. An error is what a strict JSON
    parser (json.loads, JSON.parse) rejects; a warning is what it accepts (a duplicate key: the
    readers of plugman's formats make that an error, plugman.manifest.reader)."""

    severity: str
    code: str
    message: str
    offset: int
    hint: str
    path: KeyPath = ()


class JsonSyntaxError(ValueError):
    def __init__(self, message: str, line: int, column: int):
        super().__init__(f"{message} (line {line}, column {column})")
        self.message = message
        self.line = line
        self.column = column


class JsonDocument:
    """A parsed document: its value, tolerated problems and a key-path locator. The offsets of
    a file `json.loads` read cleanly are found when first asked for (most files never are)."""

    def __init__(self, text: str, value: Any, offsets: Offsets | None, problems: list[Problem]):
        self.text = text
        self.value = value
        self._offsets = offsets
        self.problems = problems
        self._line_starts: list[int] | None = None

    @property
    def offsets(self) -> Offsets:
        if self._offsets is None:
            parser = _Parser(self.text)
            parser.document()
            self._offsets = parser.offsets
        return self._offsets

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset."""
        if self._line_starts is None:
            self._line_starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        line = bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def locate(self, path: KeyPath) -> tuple[int, int] | None:
        """Where `path` is written, or its nearest existing ancestor."""
        for end in range(len(path), -1, -1):
            offset = self.offsets.get(path[:end])
            if offset is not None:
                return self.position(offset)
        return None


def parse(text: str) -> JsonDocument:
    """Parse JSON text; raise `JsonSyntaxError` (located) when it cannot be read at all. Strict
    JSON is read by the C `json.loads` (plugman.manifest.jsonstrict); the rest by the tolerant
    parser below, which finds and reports the problem."""
    clean = strict(text, MAX_DEPTH)
    if clean is not None:
        return JsonDocument(text, clean[0], None, [])
    parser = _Parser(text)
    try:
        value = parser.document()
    except _Fail as fail:
        line, column = JsonDocument(text, None, {}, []).position(fail.offset)
        raise JsonSyntaxError(fail.message, line, column) from None
    return JsonDocument(text, value, parser.offsets, parser.problems)


def member_value(text: str, key_offset: int) -> tuple[int, int]:
    """Where the value of the object member whose key starts at `key_offset` starts and ends."""
    parser = _Parser(text)
    parser.pos = key_offset
    parser.string()
    parser.skip()
    parser.expect(":")
    parser.skip()
    start = parser.pos
    return start, value_end(text, start)


def value_end(text: str, start: int) -> int:
    """Where the JSON value that starts at `start` ends (exclusive)."""
    parser = _Parser(text)
    parser.pos = start
    parser.value((), 0)
    return parser.pos


class _Fail(Exception):  # noqa: N818 (internal control flow, never escapes)
    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.message = message
        self.offset = offset


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.offsets: dict[KeyPath, int] = {}
        self.problems: list[Problem] = []
        self._commented = False

    def document(self) -> Any:
        if self.text.startswith("\ufeff"):
            self.pos = 1
        self.skip()
        if self.pos >= len(self.text):
            raise _Fail("the file is empty; expected a JSON value", self.pos)
        value = self.value((), 0)
        self.skip()
        if self.pos < len(self.text):
            self.problems.append(
                Problem(
                    ERROR,
                    "json-trailing-content",
                    "unexpected content after the JSON value",
                    self.pos,
                    "remove everything after the closing bracket",
                )
            )
        return value

    def skip(self) -> None:
        text = self.text
        while True:
            self.pos = _WS.match(text, self.pos).end()  # type: ignore[union-attr]
            if not text.startswith("/", self.pos):
                return
            self.comment()

    def comment(self) -> None:
        start = self.pos
        if self.text.startswith("//", start):
            end = self.text.find("\n", start)
            self.pos = len(self.text) if end < 0 else end
        elif self.text.startswith("/*", start):
            end = self.text.find("*/", start + 2)
            if end < 0:
                raise _Fail("unterminated /* comment", start)
            self.pos = end + 2
        else:
            raise _Fail("unexpected '/'", start)
        if not self._commented:
            self._commented = True
            self.problems.append(
                Problem(
                    ERROR,
                    "json-comment",
                    "JSON does not allow comments",
                    start,
                    "remove the comment; agents that read this file reject JSONC",
                )
            )

    def value(self, path: KeyPath, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise _Fail(f"nesting deeper than {MAX_DEPTH} levels", self.pos)
        self.offsets.setdefault(path, self.pos)
        char = self.text[self.pos] if self.pos < len(self.text) else ""
        if char == "{":
            return self.object(path, depth)
        if char == "[":
            return self.array(path, depth)
        if char == '"':
            return self.string()
        return self.scalar()

    def string(self) -> str:
        try:
            value, self.pos = _scanstring(self.text, self.pos + 1, True)
        except JSONDecodeError as exc:
            raise _Fail(exc.msg.lower().removesuffix(" at"), exc.pos) from None
        return value

    def scalar(self) -> Any:
        for word, value in _LITERALS.items():
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return value
        match = _NUMBER.match(self.text, self.pos)
        if not match:
            found = self.text[self.pos : self.pos + 1] or "end of file"
            raise _Fail(f"expected a JSON value, found {found!r}", self.pos)
        start, self.pos = self.pos, match.end()
        if match.group(1) or match.group(2):
            return float(match.group())
        try:
            return int(match.group())
        except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits())
            raise _Fail("number has too many digits", start) from None

    def object(self, path: KeyPath, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        self.pos += 1
        self.skip()
        if self.text.startswith("}", self.pos):
            self.pos += 1
            return result
        while True:
            if not self.text.startswith('"', self.pos):
                raise _Fail("expected a double-quoted key", self.pos)
            key_offset = self.pos
            key = self.string()
            if key in result:
                self.duplicate((*path, key), key_offset)
            self.offsets[(*path, key)] = key_offset
            self.skip()
            self.expect(":")
            self.skip()
            result[key] = self.value((*path, key), depth + 1)
            if self.close("}"):
                return result

    def duplicate(self, path: KeyPath, offset: int) -> None:
        """A key set twice in one object: json.loads (and Claude Code) keep the last value."""
        first = self.text.count("\n", 0, self.offsets[path]) + 1
        again = self.text.count("\n", 0, offset) + 1
        self.problems.append(
            Problem(
                WARNING,
                "json-duplicate-key",
                f"duplicate key {path[-1]!r} (line {first} and line {again}): a reviewer reading "
                "the file sees the first value, while Claude Code and plugman use the last",
                offset,
                "keep one entry per key",
                path,
            )
        )

    def array(self, path: KeyPath, depth: int) -> list[Any]:
        result: list[Any] = []
        self.pos += 1
        self.skip()
        if self.text.startswith("]", self.pos):
            self.pos += 1
            return result
        while True:
            result.append(self.value((*path, len(result)), depth + 1))
            if self.close("]"):
                return result

    def close(self, bracket: str) -> bool:
        """After a member: consume ',' (False: more follow) or the closing bracket (True)."""
        self.skip()
        if self.text.startswith(bracket, self.pos):
            self.pos += 1
            return True
        self.expect(",")
        comma = self.pos - 1
        self.skip()
        if self.text.startswith(bracket, self.pos):
            self.problems.append(
                Problem(
                    ERROR,
                    "json-trailing-comma",
                    "trailing comma before the closing bracket",
                    comma,
                    "remove the comma",
                )
            )
            self.pos += 1
            return True
        return False

    def expect(self, char: str) -> None:
        if not self.text.startswith(char, self.pos):
            found = self.text[self.pos : self.pos + 1] or "end of file"
            raise _Fail(f"expected {char!r}, found {found!r}", self.pos)
        self.pos += 1

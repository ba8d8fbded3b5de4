"""Located findings (errors and warnings) collected while loading or validating files."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

ERROR = "error"
WARNING = "warning"

KeyPath = tuple[str | int, ...]
Locator = Callable[[KeyPath], tuple[int, int] | None]

_PLAIN_KEY = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-$")


def format_path(path: KeyPath) -> str:
    """Render a key path as `hooks.PreToolUse[0].hooks[1].command` (quoting odd keys)."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif part and _PLAIN_KEY.issuperset(part):
            out.append(f".{part}" if out else part)
        else:
            out.append('["' + "".join(_escape(char) for char in part) + '"]')
    return "".join(out)


def _escape(char: str) -> str:
    """A character of a quoted key: printable (no terminal escapes, no lone surrogates)."""
    if char in '\\"':
        return "\\" + char
    if char.isprintable():
        return char
    return f"\\u{ord(char):04x}" if ord(char) < 0x10000 else f"\\U{ord(char):08x}"


def printable(text: str) -> str:
    """`text` with control, invisible and unpaired surrogate characters escaped: messages quote
    what files contain, and a terminal must not act on it (nor UTF-8 output choke on it)."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else _escape(char) for char in text)


class Diagnostic(NamedTuple):
    severity: str
    code: str
    message: str
    file: str
    path: str = ""
    line: int | None = None
    column: int | None = None
    hint: str | None = None

    def escalated(self) -> Diagnostic:
        """The same finding as an error (for --strict)."""
        return self._replace(severity=ERROR)


class Sink:
    """Collects diagnostics for one file, locating key paths through the file's locator."""

    def __init__(self, file: str, locate: Locator | None = None, prefix: KeyPath = ()):
        self.file = file
        self.locate = locate
        self.prefix = prefix
        self.items: list[Diagnostic] = []

    def child(self, prefix: KeyPath) -> Sink:
        """A sink for a nested part of the same document; findings land in this sink."""
        sub = Sink(self.file, self.locate, self.prefix + prefix)
        sub.items = self.items
        return sub

    def add(
        self,
        severity: str,
        code: str,
        message: str,
        path: KeyPath = (),
        hint: str | None = None,
        *,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        full = self.prefix + path
        if line is None and self.locate is not None:
            found = self.locate(full)
            if found:
                line, column = found
        message, hint = printable(message), None if hint is None else printable(hint)
        self.items.append(
            Diagnostic(severity, code, message, self.file, format_path(full), line, column, hint)
        )

    def error(self, code: str, message: str, path: KeyPath = (), hint: str | None = None) -> None:
        self.add(ERROR, code, message, path, hint)

    def warning(self, code: str, message: str, path: KeyPath = (), hint: str | None = None) -> None:
        self.add(WARNING, code, message, path, hint)

    def extend(self, items: Iterable[Diagnostic]) -> None:
        self.items.extend(items)

    @property
    def has_errors(self) -> bool:
        return any(d.severity == ERROR for d in self.items)

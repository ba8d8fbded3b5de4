"""Hidden text: invisible characters that can carry instructions a reviewer never sees.

Skills, commands, agents, hook commands, MCP server entries and plugin.json's description are
prompts or run as commands; `scan` finds the characters a reviewer cannot see in them. Pure:
text in, findings out. `check_files` scans the files one plugin load read (plugin.json, every
SKILL.md, commands/*.md, agents/*.md, hooks files, .mcp.json: what the agent is given; files
a skill only links to are not scanned) and reports them into the load's Report.

Blocking (`hidden-text`, an error: install refuses the plugin unless --allow-hidden-text):
- Unicode tag characters U+E0000-U+E007F (they spell ASCII invisibly: U+E0041 is `A`; the
  decoded text is shown);
- bidirectional overrides and isolates U+202A-U+202E, U+2066-U+2069 (they reorder what is shown);
- variation selectors 17-256, U+E0100-U+E01EF (no text uses them; one per byte smuggles data).

Warning (`invisible-text`):
- zero-width U+200B-U+200D, U+2060, U+180E, U+FEFF (not at the start of the file: a byte-order
  mark there is harmless);
- other invisible format characters: soft hyphen U+00AD, Arabic letter mark U+061C,
  left-to-right / right-to-left marks U+200E-U+200F, invisible operators U+2061-U+2064,
  deprecated format characters U+206A-U+206F, interlinear annotation U+FFF9-U+FFFB;
- variation selectors 1-16, U+FE00-U+FE0F, two or more in a row (data smuggled a byte each).

Not reported: one variation selector 1-16, or a zero-width joiner, right after a character at
or above U+2000: that is how emoji are written (`❤️`, `👩‍💻`), and they are common in real
skills. In a JSON file the same characters written as escapes (`\\u200b`, `\\udb40\\udc41`)
are found too, located at the escape.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from plugman.manifest.diagnostics import ERROR, WARNING
from plugman.manifest.reader import Report

BLOCKING = ((0xE0000, 0xE007F), (0x202A, 0x202E), (0x2066, 0x2069), (0xE0100, 0xE01EF))
WARNING_RANGES = (
    (0x200B, 0x200D),
    (0x2060, 0x2060),
    (0x180E, 0x180E),
    (0xFEFF, 0xFEFF),
    (0x00AD, 0x00AD),
    (0x061C, 0x061C),
    (0x200E, 0x200F),
    (0x2061, 0x2064),
    (0x206A, 0x206F),
    (0xFFF9, 0xFFFB),
    (0xFE00, 0xFE0F),
)
TAGS = (0xE0000, 0xE007F)
EMOJI_MARKS = frozenset({*range(0xFE00, 0xFE10), 0x200D})
SHOWN = 8  # code points listed per finding
HINT = "remove the invisible characters; if you trust them, install with --allow-hidden-text"


def _class(ranges: Iterable[tuple[int, int]]) -> str:
    return "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in ranges)


RUN = re.compile(f"[{_class(BLOCKING)}{_class(WARNING_RANGES)}]+")
ESCAPES = re.compile(r"(?<!\\)(?:\\\\)*((?:\\u[0-9a-fA-F]{4})+)")


class Finding(NamedTuple):
    """One run of invisible characters: where (1-based line and column, in characters)."""

    blocking: bool
    line: int
    column: int
    codepoints: tuple[int, ...]
    decoded: str | None  # what a run of tag characters spells, in ASCII

    @property
    def message(self) -> str:
        """The finding in words, never with the invisible characters themselves."""
        points = " ".join(f"U+{c:04X}" for c in self.codepoints[:SHOWN])
        more = len(self.codepoints) - SHOWN
        points += f" … ({len(self.codepoints)} characters)" if more > 0 else ""
        kind = "hidden" if self.blocking else "invisible"
        text = f"{kind} characters {points}"
        return text + (f" spelling {self.decoded!r}" if self.decoded else "")


def _blocking(code: int) -> bool:
    return any(lo <= code <= hi for lo, hi in BLOCKING)


def _emoji(text: str, start: int, run: str) -> bool:
    """A lone variation selector or joiners after a symbol: how emoji are written."""
    if start == 0 or ord(text[start - 1]) < 0x2000 or any(ord(c) not in EMOJI_MARKS for c in run):
        return False
    return sum(0xFE00 <= ord(c) <= 0xFE0F for c in run) <= 1


def decode_tags(codepoints: Iterable[int]) -> str:
    """The ASCII a run of tag characters spells (U+E0041 → `A`); other characters are skipped."""
    return "".join(chr(c - TAGS[0]) for c in codepoints if 0xE0020 <= c <= 0xE007E)


def _unescaped(text: str) -> list[tuple[int, str]]:
    """The runs of `\\u` escapes (a backslash, `u` and four hex digits) in a JSON text, decoded
    (surrogate pairs joined), with their offsets."""
    runs = []
    for match in ESCAPES.finditer(text):
        units = [int(match[1][i + 2 : i + 6], 16) for i in range(0, len(match[1]), 6)]
        raw = "".join(map(chr, units)).encode("utf-16-le", "surrogatepass")
        runs.append((match.start(1), raw.decode("utf-16-le", "replace")))
    return runs


def scan(text: str, json: bool = False) -> list[Finding]:
    """Every run of hidden or invisible characters in `text`, in order; with `json`, also those
    written as `\\u` escapes (one finding per run of escapes)."""
    runs = [(m.start(), m.group()) for m in RUN.finditer(text)]
    if json and "\\u" in text:
        escaped = [(at, "".join(RUN.findall(run))) for at, run in _unescaped(text)]
        runs = sorted(runs + [(at, run) for at, run in escaped if run])
    found: list[Finding] = []
    for start, run in runs:
        if start == 0 and run[0] == "\ufeff":  # a byte-order mark
            start, run = 1, run[1:]
            if not run:
                continue
        codes = tuple(ord(c) for c in run)
        if len(codes) == 1 and 0xFE00 <= codes[0] <= 0xFE0F:
            continue  # one selector 1-16 (text or emoji presentation)
        if _emoji(text, start, run):
            continue
        line = text.count("\n", 0, start) + 1
        column = start - (text.rfind("\n", 0, start) + 1) + 1
        decoded = decode_tags(codes)
        found.append(Finding(any(map(_blocking, codes)), line, column, codes, decoded or None))
    return found


SCANNED = (".md", ".json")


def check_files(report: Report, files: Iterable[str]) -> None:
    """Scan each of `files` (a plugin's files, as its load read them) into `report`: `hidden-text`
    errors, `invisible-text` warnings. Files that cannot be read were reported by the load."""
    for name in files:
        path = Path(name)
        if not name.endswith(SCANNED):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        is_json = name.endswith(".json")
        if text.isascii() and not (is_json and "\\u" in text):
            continue
        sink = report.sink(path)
        for finding in scan(text, is_json):
            severity, code = (
                (ERROR, "hidden-text") if finding.blocking else (WARNING, "invisible-text")
            )
            sink.add(
                severity, code, finding.message, (), HINT, line=finding.line, column=finding.column
            )

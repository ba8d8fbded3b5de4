"""Hidden text: invisible characters that can carry instructions a reviewer never sees.

Skills, commands, agents, output styles, hook commands and scripts, MCP server entries and
plugin.json's description are prompts or run as commands; `scan` finds the characters a
reviewer cannot see in a text. Pure: text in, findings out. What a plugin gives agents, and so
what is scanned, is `plugman.manifest.exposure`'s; `check_files` scans files into a Report.

The classes cover every code point of Unicode's General Category Cf and of the
Default_Ignorable_Code_Point property (DerivedCoreProperties, Unicode 15.1; the tables are
written out here because Python's `unicodedata` lags behind and is slow to sweep), plus the
controls a terminal acts on.

Blocking (`hidden-text`, an error: install refuses the plugin unless --allow-hidden-text):
- tag characters U+E0000-U+E007F (they spell ASCII invisibly: U+E0041 is `A`; the decoded
  text is shown), except in a subdivision flag (below);
- bidirectional embeddings, overrides and isolates U+202A-U+202E, U+2066-U+2069 (they reorder
  what is shown);
- variation selectors 17-256, U+E0100-U+E01EF (no text here uses them; one per byte smuggles
  data);
- unassigned default-ignorable code points, U+2065, U+FFF0-U+FFF8, U+E0080-U+E00FF,
  U+E01F0-U+E0FFF: Unicode promises they render as nothing once assigned, so no text needs them;
- controls a terminal obeys to hide text when a reviewer shows the file: escape U+001B and
  CSI U+009B (`ESC[8m` conceals, `ESC[2K` erases), backspace U+0008, and a carriage return
  not ending a line (what follows it is printed over the line's start);
- a run of RUN_LIMIT or more invisible characters of any class below: enough to spell text,
  a bit or a byte a character (zero-width binary, variation-selector smuggling).

Warning (`invisible-text`): every other Cf and default-ignorable character: soft hyphen U+00AD,
combining grapheme joiner U+034F, Arabic letter mark U+061C, Hangul fillers U+115F, U+1160,
U+3164, U+FFA0 (letters that draw nothing), Khmer U+17B4-U+17B5, Mongolian selectors
U+180B-U+180F, zero-width and direction marks U+200B-U+200F, U+2060-U+2064, deprecated format
characters U+206A-U+206F, variation selectors 1-16 U+FE00-U+FE0F (two or more in a row), the
byte-order mark U+FEFF (not at the start of a file), interlinear annotation U+FFF9-U+FFFB,
Egyptian hieroglyph format controls U+13430-U+1343F, shorthand format controls
U+1BCA0-U+1BCA3, musical format controls U+1D173-U+1D17A; and the blank Braille pattern U+2800,
line and paragraph separators U+2028-U+2029, and the other C0 and C1 controls (not tab, line
feed, or a carriage return ending a line).

Not reported:
- emoji as real text writes them: one variation selector 1-16 anywhere (text or emoji
  presentation, keycaps `1️⃣`); a zero-width joiner (after at most one selector) between two
  symbols (`👩‍💻`, `❤️‍🔥`, `🧑🏽‍💻`); a subdivision flag, U+1F3F4 then two to six tag letters or
  digits and the cancel tag U+E007F (England's 🏴󠁧󠁢󠁥󠁮󠁧󠁿): it shows as a flag and its tags can
  spell no more than a region code;
- Arabic, Syriac and Kaithi prepended concatenation marks (U+0600-U+0605, U+06DD, U+070F,
  U+0890-U+0891, U+08E2, U+110BD, U+110CD): Cf, but drawn as visible signs;
- private-use characters (icon fonts such as Nerd Fonts use them; without the font they show
  as boxes) and other unassigned code points (they show as boxes: a newer emoji is one to an
  older Python).

A JSON text may write any of these as escapes (`\\u200b`, `\\udb40\\udc41`, `\\b`, `\\r`): they
are found too, located at the escape.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from plugman.manifest.diagnostics import ERROR, WARNING, Sink
from plugman.manifest.reader import MAX_FILE_BYTES

Ranges = tuple[tuple[int, int], ...]
TAGS = (0xE0000, 0xE007F)
BIDI: Ranges = ((0x202A, 0x202E), (0x2066, 0x2069))
SELECTORS_17_256: Ranges = ((0xE0100, 0xE01EF),)
RESERVED: Ranges = ((0x2065, 0x2065), (0xFFF0, 0xFFF8), (0xE0080, 0xE00FF), (0xE01F0, 0xE0FFF))
TERMINAL: Ranges = ((0x0008, 0x0008), (0x001B, 0x001B), (0x009B, 0x009B))
BLOCKING: Ranges = (TAGS, *BIDI, *SELECTORS_17_256, *RESERVED, *TERMINAL)
WARNING_RANGES: Ranges = (
    (0x0000, 0x0007),
    (0x000B, 0x000C),
    (0x000E, 0x001A),
    (0x001C, 0x001F),
    (0x007F, 0x009A),
    (0x009C, 0x009F),
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x2028, 0x2029),
    (0x2060, 0x2064),
    (0x206A, 0x206F),
    (0x2800, 0x2800),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF9, 0xFFFB),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
)
VISIBLE_FORMAT: Ranges = (  # Cf, but drawn: prepended concatenation marks
    (0x0600, 0x0605),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
)
ZWJ, VS15, VS16 = 0x200D, 0xFE0E, 0xFE0F
RUN_LIMIT = 8  # invisible characters in a row that count as hidden text whatever their class
SHOWN = 8  # code points listed per finding
SNIFF_BYTES = 8192  # a file with a NUL byte among its first SNIFF_BYTES is binary (`read`)
HINT = "remove the invisible characters; if you trust them, install with --allow-hidden-text"


def _class(ranges: Iterable[tuple[int, int]]) -> str:
    return "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in ranges)


# The patterns compile when a text first needs them (re's cache): plain ASCII text, most of
# what a plugin holds, never does, and RUN alone takes ~1 ms, a fiftieth of `plugman validate`.
RUN = f"[{_class(BLOCKING)}{_class(WARNING_RANGES)}]+"
CARRIAGE = r"\r+(?=[^\r\n])"  # carriage returns inside a line
PLAIN_BYTES = bytes(range(0x20, 0x7F)) + b"\t\n"  # what never needs the sweep
FLAG = (  # a subdivision flag
    "\U0001f3f4[\U000e0061-\U000e007a]{2}[\U000e0030-\U000e0039\U000e0061-\U000e007a]{0,4}\U000e007f"
)
ESCAPES = r"(?<!\\)(?:\\\\)*((?:\\u[0-9a-fA-F]{4}|\\[bfnr])+)"
SIMPLE_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r"}


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


def _within(code: int, ranges: Ranges) -> bool:
    return any(lo <= code <= hi for lo, hi in ranges)


def reported(code: int) -> bool:
    """Whether `code` is a character this scan reports (in some context)."""
    return code == 0x0D or _within(code, BLOCKING) or _within(code, WARNING_RANGES)


def _symbol(char: str) -> bool:
    """A character an emoji sequence joins: a symbol at or above U+2000 (a pictograph, a
    skin-tone modifier; a subdivision flag is one by then, see _flags_hidden)."""
    return ord(char) >= 0x2000 and not reported(ord(char))


def _emoji(text: str, start: int, run: str) -> bool:
    """A joiner between two symbols, after at most one selector: how emoji are written."""
    end = start + len(run)
    codes = [ord(c) for c in run]
    if codes not in ([ZWJ], [VS16, ZWJ], [VS15, ZWJ]):
        return False
    return start > 0 and _symbol(text[start - 1]) and end < len(text) and _symbol(text[end])


def decode_tags(codepoints: Iterable[int]) -> str:
    """The ASCII a run of tag characters spells (U+E0041 → `A`); other characters are skipped."""
    return "".join(chr(c - TAGS[0]) for c in codepoints if 0xE0020 <= c <= 0xE007E)


def _unescaped(text: str) -> list[tuple[int, str]]:
    """The runs of escapes (`\\u` and four hex digits, `\\b`, `\\f`, `\\n`, `\\r`) in a JSON
    text, decoded (surrogate pairs joined), with their offsets; the character after the run is
    kept, when plain (a carriage return is hidden text only before one)."""
    runs = []
    for match in re.finditer(ESCAPES, text):
        escaped, units, at = match[1], [], 0
        while at < len(escaped):
            if escaped[at + 1] == "u":
                units.append(int(escaped[at + 2 : at + 6], 16))
                at += 6
            else:
                units.append(ord(SIMPLE_ESCAPES[escaped[at + 1]]))
                at += 2
        raw = "".join(map(chr, units)).encode("utf-16-le", "surrogatepass")
        after = text[match.end(1) : match.end(1) + 1]
        after = "" if after in ('"', "") or reported(ord(after)) else after
        runs.append((match.start(1), raw.decode("utf-16-le", "replace") + after))
    return runs


def _flags_hidden(text: str) -> str:
    """`text` with the tags of each subdivision flag replaced by a visible character (offsets
    kept): the flag is what a reader sees."""
    return re.sub(FLAG, lambda m: "\U0001f3f4" * len(m[0]), text)


def _escaped(text: str) -> bool:
    """Whether a JSON text may escape a reported character: a run of `\\n` escapes alone never
    does (most escapes in JSON files are line breaks in a long string)."""
    return "\\" in text and any(e in text for e in ("\\u", "\\r", "\\b", "\\f"))


def _unusual(text: str) -> str:
    """The characters of `text` other than printable ASCII, tab and line feed, in order: the
    UTF-8 bytes of those deleted in one C loop (ASCII bytes are never part of a longer
    sequence, so the rest decodes). Most text leaves nothing; prose with a few dashes and emoji
    a few characters for the regexes."""
    rest = text.encode("utf-8", "surrogatepass").translate(None, PLAIN_BYTES)
    return rest.decode("utf-8", "surrogatepass") if rest else ""


def suspect(text: str, json: bool = False) -> bool:
    """Whether `text` may hold anything `scan` reports: a reported character, a carriage return
    inside a line, or (`json`) an escape. Cheap: most text is plain."""
    if json and _escaped(text):
        return True
    rest = _unusual(text)
    if not rest:
        return False
    return bool(re.search(RUN, rest)) or ("\r" in rest and bool(re.search(CARRIAGE, text)))


def _runs(text: str) -> list[tuple[int, str]]:
    """Each run of reported characters, and of carriage returns inside a line, its offset."""
    rest = _unusual(text)
    reported_here = set("".join(re.findall(RUN, rest))) if rest else set()
    found: list[tuple[int, str]] = []
    if reported_here:  # where they are: str.find (C) per distinct character, then runs
        at = sorted(i for char in reported_here for i in _offsets(text, char))
        start = 0
        for k in range(1, len(at) + 1):
            if k == len(at) or at[k] != at[k - 1] + 1:
                found.append((at[start], text[at[start] : at[k - 1] + 1]))
                start = k
    if "\r" in text:
        found = sorted(found + [(m.start(), m.group()) for m in re.finditer(CARRIAGE, text)])
    return found


def _offsets(text: str, char: str) -> list[int]:
    """Every offset of `char` in `text`."""
    found, at = [], text.find(char)
    while at != -1:
        found.append(at)
        at = text.find(char, at + 1)
    return found


def _finding(context: str, local: int, run: str, at: tuple[int, int]) -> Finding | None:
    """The finding for `run` at `local` in `context` (the text, or a decoded escape run), placed
    at `at` (line, column); None for what emoji are made of."""
    codes = tuple(ord(c) for c in run)
    if len(codes) == 1 and 0xFE00 <= codes[0] <= 0xFE0F:
        return None  # one selector 1-16 (text or emoji presentation)
    if _emoji(context, local, run):
        return None
    blocking = len(codes) >= RUN_LIMIT or "\r" in run or any(_within(c, BLOCKING) for c in codes)
    return Finding(blocking, *at, codes, decode_tags(codes) or None)


def scan(text: str, json: bool = False) -> list[Finding]:
    """Every run of hidden or invisible characters in `text`, in order; with `json`, also those
    written as escapes (one finding per run of escapes)."""
    if "\U0001f3f4" in text:
        text = _flags_hidden(text)
    runs = [(at, text, at, run) for at, run in _runs(text)]
    if json and _escaped(text):
        for at, decoded in _unescaped(text):
            decoded = _flags_hidden(decoded) if "\U0001f3f4" in decoded else decoded
            runs += [(at, decoded, local, run) for local, run in _runs(decoded)]
        runs.sort(key=lambda r: r[0])
    found: list[Finding] = []
    for start, context, local, run in runs:
        if start == 0 and context is text and run[0] == "\ufeff":  # a byte-order mark
            start, local, run = 1, 1, run[1:]
            if not run:
                continue
        line = text.count("\n", 0, start) + 1
        column = start - (text.rfind("\n", 0, start) + 1) + 1
        finding = _finding(context, local, run, (line, column))
        if finding is not None:
            found.append(finding)
    return found


def shown(text: str) -> str:
    """`text` with each character this scan reports written as its code point (`<U+202E>`)."""
    return "".join(f"<U+{ord(c):04X}>" if reported(ord(c)) else c for c in text)


def report(
    sink: Sink, findings: Iterable[Finding], where: str = "", path: tuple[str | int, ...] = ()
) -> None:
    """Add `findings` to `sink` as `hidden-text` errors and `invisible-text` warnings; `where`
    says in what (a value, a name) when the line is not the place."""
    for finding in findings:
        severity, code = (ERROR, "hidden-text") if finding.blocking else (WARNING, "invisible-text")
        message = finding.message + (f" {where}" if where else "")
        if path or where:
            sink.add(severity, code, message, path, HINT)
        else:
            sink.add(severity, code, message, (), HINT, line=finding.line, column=finding.column)


def read(path: Path) -> str | None:
    """A file's text when it is UTF-8 text of a readable size (a script, a linked document);
    None for binary, unreadable or oversized files."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_FILE_BYTES or b"\x00" in data[:SNIFF_BYTES]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None

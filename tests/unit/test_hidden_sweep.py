"""The hidden-text scan's fast paths find what the plain sweep finds (plugman.manifest.hidden).

`_runs` locates reported characters with str.find in the text's non-ASCII rest and `suspect`
skips texts through a bytes.translate pass: both are held here, over generated text rich in the
characters and edges that matter, to the straightforward sweep (a regex over every character).
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from plugman.manifest import hidden
from tests.conftest import examples

EDGES = [0x00, 0x08, 0x09, 0x0A, 0x0D, 0x1B, 0x7F, 0x85, 0x9B, 0xAD, 0x200B, 0x200D, 0x2014]
EDGES += [0x202E, 0x2800, 0x3164, 0xFE0E, 0xFE0F, 0xFEFF, 0xFFFB, 0x1F3F4, 0x1F600]
EDGES += [0xE0041, 0xE0067, 0xE007F, 0xE0100, 0xE0FFF, 0xE1000, 0xD800, 0xDFFF, ord("a")]
CHARS = st.one_of(
    st.sampled_from([chr(c) for c in EDGES]),
    st.characters(min_codepoint=0, max_codepoint=0x10FFFF),
    st.sampled_from(["\r\n", "\\u200b", "\\n", "\\r", "\\\\u202e", "é"]),
)
TEXTS = st.lists(CHARS, max_size=40).map("".join)


def plain_runs(text: str) -> list[tuple[int, str]]:
    """Every run of reported characters and of carriage returns inside a line: one regex over
    the whole text."""
    found = [(m.start(), m.group()) for m in re.finditer(hidden.RUN, text)]
    found += [(m.start(), m.group()) for m in re.finditer(hidden.CARRIAGE, text)]
    return sorted(found)


@settings(max_examples=examples(600))
@given(TEXTS)
def test_runs_are_those_of_the_plain_sweep(text: str) -> None:
    assert hidden._runs(text) == plain_runs(text)


@settings(max_examples=examples(600))
@given(TEXTS, st.booleans())
def test_suspect_whenever_scan_finds_something(text: str, json: bool) -> None:
    """`suspect` may say yes to a clean text, never no to one `scan` reports in."""
    if hidden.scan(text, json):
        assert hidden.suspect(text, json)


def test_plain_text_is_not_suspect() -> None:
    text = "# Skill\n\nUse it — when asked → 🙂 (café, 名前).\n\ttab\r\n"
    assert not hidden.suspect(text)
    assert not hidden.suspect('{"a": "line\\nbreak"}', json=True)
    assert hidden.suspect('{"a": "\\u200b"}', json=True)
    assert hidden.suspect("one\rtwo") and not hidden.suspect("one\r\ntwo\r\n")

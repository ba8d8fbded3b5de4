from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from plugman.manifest import frontmatter
from plugman.manifest.diagnostics import Sink
from tests.conftest import CORPUS, examples

KEYS = st.sampled_from(["name", "description", "license", "on", "Yes", "allowed-tools", "_x"])
VALUES = st.text(
    alphabet=st.sampled_from(
        [*"ab Z09:#-'\"\\.,[]{}!&*|>%@`~?+=<\t", "é", "\u200b", "😀", "\u2028", "\x85", "\ufeff"]
    ),
    max_size=12,
) | st.sampled_from(["true", "No", "null", "1.5", "2024-01-01", "0x1F", ".inf", "~", "1_000"])


NUMBERISH = st.lists(
    st.sampled_from([*"0123456789.:-+_eExXbBoaTZ ", "inf", "nan", "NaN"]), min_size=1, max_size=10
).map("".join)
LISTS = st.lists(VALUES | NUMBERISH, max_size=3).map(lambda items: "[" + ", ".join(items) + "]")


@settings(max_examples=examples(3000))
@given(st.lists(st.tuples(KEYS, VALUES | NUMBERISH | LISTS), min_size=1, max_size=4))
def test_fast_path_agrees_with_pyyaml(pairs: list[tuple[str, str]]) -> None:
    block = "\n".join(f"{key}: {value}" for key, value in pairs)
    fast = frontmatter.simple_mapping(block)
    if fast is not None:
        assert fast == yaml.safe_load(block)


def test_fast_path_agrees_on_the_corpus() -> None:
    checked = 0
    for folder, _dirs, files in os.walk(CORPUS):
        for file in files:
            if file.endswith(".md"):
                text = (Path(folder) / file).read_text(encoding="utf-8", errors="replace")
                found = frontmatter.split(text)
                fast = frontmatter.simple_mapping(found[0]) if found else None
                if fast is not None:
                    assert fast == yaml.safe_load(found[0] if found else ""), file
                    checked += 1
    assert checked > 300


def test_parse_locates_keys_and_reports_yaml_errors() -> None:
    sink = Sink("SKILL.md")
    text = "---\nname: demo\ndescription: [unclosed\n---\nbody\n"
    with pytest.raises(frontmatter.Unreadable):
        frontmatter.parse(text, sink)
    [finding] = sink.items
    assert (finding.code, finding.severity, finding.line) == ("yaml-syntax", "error", 4)
    sink = Sink("SKILL.md")
    meta = frontmatter.parse("---\nname: demo\ndescription: 'Quoted: fine'\n---\n", sink)
    assert meta == {"name": "demo", "description": "Quoted: fine"}
    assert sink.locate is not None
    assert sink.locate(("description",)) == (3, 1)


def test_no_front_matter() -> None:
    assert frontmatter.parse("# Title\n", Sink("x.md")) is None


def test_values_pyyaml_refuses_are_not_taken_by_the_fast_path() -> None:
    for value in ("=", "<< x", "a\u2028b", "a\x85b", "[\t]", "[a, \t]"):
        assert frontmatter.simple_mapping(f"description: {value}") is None, value

"""jsonloc's fast path (plugman.manifest.jsonstrict): the C parser reads strict JSON, and
whatever the tolerant parser would report still goes to it."""

from __future__ import annotations

import json

import pytest

from plugman.manifest import jsonloc


def test_strict_json_is_read_fast_and_still_located() -> None:
    text = json.dumps({"mcpServers": {f"s{i}": {"command": "x"} for i in range(400)}}, indent=2)
    doc = jsonloc.parse(text)
    assert doc.value == json.loads(text) and doc.problems == []
    assert doc._offsets is None  # nothing asked where anything is yet
    assert doc.locate(("mcpServers", "s1", "command")) == (7, 7)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('{"a": 1, "a": 2}', "json-duplicate-key"),
        ('{"a": 1,}', "json-trailing-comma"),
        ('{"a": 1} // note', "json-comment"),
    ],
)
def test_what_the_tolerant_parser_reports_is_still_reported(text: str, code: str) -> None:
    assert code in {problem.code for problem in jsonloc.parse(text).problems}


@pytest.mark.parametrize("text", ['{"a": NaN}', "[Infinity]", "[" * 300 + "]" * 300])
def test_what_it_refuses_is_still_refused(text: str) -> None:
    with pytest.raises(jsonloc.JsonSyntaxError):
        jsonloc.parse(text)

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plugman.manifest import jsonloc

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON, st.sampled_from([None, 2]))
def test_value_equals_json_loads(value: object, indent: int | None) -> None:
    text = json.dumps(value, indent=indent)
    doc = jsonloc.parse(text)
    assert doc.value == json.loads(text)
    assert doc.problems == []


def test_locates_keys_and_items() -> None:
    text = '{\n  "hooks": {\n    "PreToolUse": [\n      {"matcher": "Bash"}\n    ]\n  }\n}'
    doc = jsonloc.parse(text)
    assert doc.locate(("hooks",)) == (2, 3)
    assert doc.locate(("hooks", "PreToolUse", 0)) == (4, 7)
    assert doc.locate(("hooks", "PreToolUse", 0, "matcher")) == (4, 8)
    # a missing key is located at its nearest existing parent
    assert doc.locate(("hooks", "PreToolUse", 0, "hooks")) == (4, 8 - 1)


def test_tolerates_comments_trailing_commas_and_garbage() -> None:
    doc = jsonloc.parse('// c\n{"a": [1, 2,], /* x */ "b": 1,}\ntrailing')
    assert doc.value == {"a": [1, 2], "b": 1}
    codes = [(p.code, doc.position(p.offset)) for p in doc.problems]
    assert codes == [
        ("json-comment", (1, 1)),
        ("json-trailing-comma", (2, 12)),
        ("json-trailing-comma", (2, 30)),
        ("json-trailing-content", (3, 1)),
    ]


def test_duplicate_key_is_a_warning_and_last_wins() -> None:
    doc = jsonloc.parse('{"a": 1, "a": 2}')
    assert doc.value == {"a": 2}
    assert [(p.severity, p.code) for p in doc.problems] == [("warning", "json-duplicate-key")]


def test_duplicate_key_names_its_path_and_both_lines() -> None:
    """A warning to jsonloc (json.loads accepts it); plugman's readers make it an error."""
    doc = jsonloc.parse('{"s": {\n  "command": "safe",\n  "command": "evil"\n}}')
    [problem] = doc.problems
    assert problem.path == ("s", "command")
    assert doc.position(problem.offset) == (3, 3)
    assert "duplicate key 'command' (line 2 and line 3)" in problem.message
    assert doc.value == {"s": {"command": "evil"}}


@pytest.mark.parametrize(
    ("text", "message", "line", "column"),
    [
        ("", "the file is empty", 1, 1),
        ('{"a": }', "expected a JSON value", 1, 7),
        ('{"a" 1}', "expected ':'", 1, 6),
        ('{\n"a": "x\n"}', "invalid control character", 2, 8),
        ("{'a': 1}", "expected a double-quoted key", 1, 2),
        ("[1, 2", "expected ','", 1, 6),
        ("/* open", "unterminated /* comment", 1, 1),
    ],
)
def test_syntax_errors_are_located(text: str, message: str, line: int, column: int) -> None:
    with pytest.raises(jsonloc.JsonSyntaxError) as info:
        jsonloc.parse(text)
    assert message in info.value.message
    assert (info.value.line, info.value.column) == (line, column)


def test_deep_nesting_is_refused_not_a_crash() -> None:
    with pytest.raises(jsonloc.JsonSyntaxError, match="nesting deeper"):
        jsonloc.parse("[" * 10_000 + "]" * 10_000)


def test_bom_is_skipped() -> None:
    assert jsonloc.parse('\ufeff{"a": 1}').value == {"a": 1}

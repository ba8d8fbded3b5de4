"""plugman.output.jsontext writes what `json.dumps(value, indent=2)` writes, byte for byte."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from plugman.output import jsontext

LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
    | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)  # lone surrogates
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(), inner)
        | st.dictionaries(st.integers() | st.booleans() | st.none(), inner)
    ),
    max_leaves=40,
)


@given(VALUES)
def test_the_text_is_json_dumps_indent_2(value: Any) -> None:
    assert jsontext.dumps(value) == json.dumps(value, indent=2)


def test_the_shapes_it_writes_itself() -> None:
    value = {"a": [], "b": {}, "c": [1, "x\u00e9\n", None, True, False, {"d": [[]]}], "": -3}
    assert jsontext.dumps(value) == json.dumps(value, indent=2)


def test_a_cycle_is_refused_as_json_refuses_it() -> None:
    loop: list[Any] = []
    loop.append(loop)
    try:
        json.dumps(loop, indent=2)
    except ValueError as expected:
        wanted = str(expected)
    try:
        jsontext.dumps(loop)
    except ValueError as found:
        assert str(found) == wanted
    else:
        raise AssertionError("a cycle must be refused")

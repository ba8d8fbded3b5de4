"""Fuzzing the two readers every loader stands on, in memory: the located JSON parser
(`plugman.manifest.jsonloc`, held to `json.loads`) and the YAML front matter reader (its fast
path held to PyYAML)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import yaml
from hypothesis import given, note
from hypothesis import strategies as st

from plugman.manifest import frontmatter, jsonloc
from plugman.manifest.diagnostics import ERROR, WARNING, Sink
from tests.fuzz import harness, mutators
from tests.fuzz.mutators import Mutation
from tests.fuzz.seeds import seeds

JSON_CASES = 1500
FRONT_MATTER_CASES = 1200
VALUE_START = set('{["-0123456789tfn')


def decode(data: bytes, how: int) -> str:
    """The bytes as text, with replacement characters or lone surrogates where they are not
    UTF-8 (the loaders refuse such files before parsing; the parsers must not care)."""
    return data.decode("utf-8", "replace" if how == 0 else "surrogateescape")


def strict_json(text: str) -> Any:
    """json.loads' verdict: [the value], or None when it rejects the text (NaN and Infinity,
    which it accepts, are not JSON)."""
    try:
        return [json.loads(text.removeprefix("\ufeff"), parse_constant=_not_json)]
    except (ValueError, RecursionError):
        return None


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def check_document(text: str) -> None:
    """Parse `text` and hold the result to json.loads and to its own offsets."""
    try:
        doc = jsonloc.parse(text)
    except jsonloc.JsonSyntaxError as exc:
        lines = text.split("\n")
        assert 1 <= exc.line <= len(lines), exc
        assert 1 <= exc.column <= len(lines[exc.line - 1]) + 1, exc
        assert exc.message and exc.message.isprintable(), exc
        expected = strict_json(text)
        if expected is not None:  # json.loads read it: only depth may stop jsonloc
            assert "nesting deeper" in exc.message, exc
        return
    expected = strict_json(text)
    errors = [p for p in doc.problems if p.severity == ERROR]
    if not errors:
        assert expected is not None, "jsonloc accepted what json.loads rejects"
        assert expected[0] == doc.value
    if expected is not None:
        assert doc.value == expected[0]
        assert not errors, errors
    for problem in doc.problems:
        assert problem.severity in (ERROR, WARNING)
        assert 0 <= problem.offset <= len(text)
        assert problem.message.isprintable()
    members = 0
    for path, offset in doc.offsets.items():
        assert 0 <= offset < len(text), (path, offset)
        if path and isinstance(path[-1], str):
            assert text[offset] == '"', (path, offset)  # an object member: its key
            value = _at(doc.value, path)
            if value is not _GONE and members < MEMBERS_CHECKED:
                members += 1
                start, end = jsonloc.member_value(text, offset)
                assert jsonloc.parse(text[start:end]).value == value
        else:
            assert text[offset] in VALUE_START, (path, offset)
        line, column = doc.position(offset)
        assert doc.locate(path) == (line, column)


_GONE = object()
MEMBERS_CHECKED = 40  # members per document whose value is cut out and parsed again


def _at(value: Any, path: tuple[str | int, ...]) -> Any:
    """The value at `path`, or _GONE: an earlier duplicate key's members are located but no
    longer in the value (the last duplicate wins, as with json.loads)."""
    for part in path:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return _GONE
    return value


def test_json_parser(record_property: Callable[[str, object], None]) -> None:
    corpus = seeds("json")
    cases = harness.Cases("jsonloc.parse", JSON_CASES)

    @cases.fuzz
    @given(case=mutators.mutations(len(corpus)), how=st.integers(0, 1))
    def run(case: Mutation, how: int) -> None:
        cases()
        text = decode(mutators.mutate(corpus[case.seed], case), how)
        note(repr(text[:4000]))
        check_document(text)

    run()
    cases.report(record_property)


def check_front_matter(text: str) -> None:
    sink = Sink("SKILL.md")
    try:
        meta = frontmatter.parse(text, sink)
    except frontmatter.Unreadable:
        assert sink.items, "unreadable front matter without a finding"
        for d in sink.items:
            assert d.line is not None and d.line >= 1, d
            assert d.message.isprintable(), d
        return
    assert not sink.items, sink.items
    if meta is None:
        return
    json.dumps(meta)  # plain JSON data: no dates, no cycles
    assert all(isinstance(key, str) for key in meta)
    assert sink.locate is not None
    for key in meta:
        found = sink.locate((key,))
        assert found is not None and found[0] >= 2, (key, found)
    split = frontmatter.split(text)
    assert split is not None
    fast = frontmatter.simple_mapping(split[0])
    if fast is not None:  # the fast path must read what PyYAML reads
        assert fast == yaml.safe_load(split[0])


def test_front_matter(record_property: Callable[[str, object], None]) -> None:
    corpus = (*seeds("skill"), *seeds("markdown"))
    cases = harness.Cases("frontmatter.parse", FRONT_MATTER_CASES)
    texts = st.one_of(
        st.builds(
            lambda case, how: decode(mutators.mutate(corpus[case.seed], case, markdown=True), how),
            mutators.mutations(len(corpus)),
            st.integers(0, 1),
        ),
        mutators.generated_front_matter().map(lambda data: data.decode("utf-8", "replace")),
    )

    @cases.fuzz
    @given(text=texts)
    def run(text: str) -> None:
        cases()
        note(repr(text[:4000]))
        check_front_matter(text)

    run()
    cases.report(record_property)

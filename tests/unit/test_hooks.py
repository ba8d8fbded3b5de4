from __future__ import annotations

import pytest

from plugman.manifest.hooks import js_regex_problem


@pytest.mark.parametrize("pattern", ["(?<tool>Edit|Write)", "mcp__.*", "(?<=a)b", "Edit.*|Bash"])
def test_valid_javascript_matchers(pattern: str) -> None:
    assert js_regex_problem(pattern) is None


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("(?i)edit", "'(?i)' is Python syntax"),
        ("(?P<t>Edit)", "'(?P<' is Python syntax"),
        ("Edit(", "missing )"),
        ("*", "nothing to repeat"),
    ],
)
def test_invalid_javascript_matchers(pattern: str, problem: str) -> None:
    found = js_regex_problem(pattern)
    assert found is not None
    assert problem in found

from __future__ import annotations

import pytest

from plugman.core import versions
from plugman.core.errors import PlugmanError
from plugman.core.versions import satisfies, to_pep440


@pytest.mark.parametrize(
    ("text", "pep440"),
    [
        ("", ""),
        ("*", ""),
        ("^1.2.3", ">=1.2.3,<2"),
        ("^0.2.3", ">=0.2.3,<0.3"),
        ("^0.0.3", ">=0.0.3,<0.0.4"),
        ("~1.2.3", ">=1.2.3,<1.3"),
        ("~1", ">=1,<2"),
        ("1.x", "==1.*"),
        ("1.2.x", "==1.2.*"),
        ("1.2.3", "==1.2.3"),
        (">=1.2 <2", ">=1.2,<2"),
        (">=1.2,<2", ">=1.2,<2"),
        ("~=1.4", "~=1.4"),
        ("==1.0.0", "==1.0.0"),
    ],
)
def test_ranges_become_pep440(text: str, pep440: str) -> None:
    assert to_pep440(text) == pep440


@pytest.mark.parametrize(
    ("version", "spec", "verdict"),
    [
        ("1.5.0", "^1.2", True),
        ("2.0.0", "^1.2", False),
        ("1.2.9", "~1.2.3", True),
        ("1.3.0", "~1.2.3", False),
        ("1.0.0", ">=1.0,<2", True),
        ("not-a-version", ">=1", False),
        ("anything", "*", True),
        ("2.0.0-beta.1", ">=2.0.0-alpha", True),
    ],
)
def test_satisfies(version: str, spec: str, verdict: bool) -> None:
    assert satisfies(version, spec) is verdict


@pytest.mark.parametrize("bad", ["^1 || ^2", "banana", ">=>1"])
def test_unreadable_ranges_are_clear_errors(bad: str) -> None:
    with pytest.raises(PlugmanError) as info:
        satisfies("1.0.0", bad)
    assert info.value.hint


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        ("1.0.0", "1.2.0", -1),
        ("1.2.0", "1.2.0", 0),
        ("1.10.0", "1.9.0", 1),  # numerically, not as text
        ("1.0.0-rc.1", "1.0.0", -1),  # a pre-release is below its release (semver)
        ("1.0.0-alpha.beta", "1.0.0-alpha.1", 1),  # semver: text parts above numbers
        ("1.0.0-alpha", "1.0.0-alpha.1", -1),
        ("1.0.0+build.2", "1.0.0+build.1", 0),  # build metadata has no precedence
        ("v2.0.0", "1.9.9", 1),
        ("1.0", "1.0.0", 0),  # PEP 440
        ("1.0.post1", "1.0", 1),
        ("abc123def456", "1.0.0", None),  # a version made from a commit: not comparable
    ],
)
def test_order_compares_semver_else_pep440(new: str, old: str, expected: int | None) -> None:
    assert versions.order(new, old) == expected

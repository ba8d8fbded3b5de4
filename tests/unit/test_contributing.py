"""What a contributor meets first (issue 24): `pip install -e '.[dev]'` brings the test and lint
tools, and the README says that `make test` needs root or sudo and what to run without it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def extra(extras: dict[str, list[str]], name: str, project: str) -> set[str]:
    """The distribution names an extra brings, its references to the project's own extras
    (`plugman[test]`) followed."""
    found: set[str] = set()
    for text in extras[name]:
        requirement = Requirement(text)
        if requirement.name == project:
            for inner in requirement.extras:
                found |= extra(extras, inner, project)
        else:
            found.add(requirement.name.lower())
    return found


def test_the_dev_extra_brings_the_test_and_lint_tools() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert "dev" in extras, "pip install -e '.[dev]' must install the contributor's tools"
    dev = extra(extras, "dev", project["name"])
    assert extra(extras, "test", project["name"]) <= dev
    assert {"pytest", "pytest-xdist", "ruff", "mypy"} <= dev


def test_the_readme_says_make_test_needs_root_and_what_to_do_without() -> None:
    said = " ".join((ROOT / "README.md").read_text().split())
    assert "pip install -e '.[dev]'" in said
    assert re.search(r"`make test` needs root or sudo", said)
    assert "apt may install or upgrade" in said
    assert "make test-quick ARGS=--ignore=tests/integration/oci" in said

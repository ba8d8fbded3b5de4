"""Attacks on the commands that edit a committed plugman.toml (issue 33: the committed files
are hostile input): a clone's plugman.toml whose table is not a table, or that git left
mid-merge, must give a located error with exit 2 from install and uninstall, never a
traceback, and leave every file as it was; the same file made right works.

Invariant attacked: `config.declarations` reads and edits a declaration only as TOML tables
(`_text`: a merge conflict at its line; `add`: a key that must be a table and is not).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plugman.cli import invoke
from tests.conftest import SAMPLES
from tests.integration.helpers import git, run, snapshot

HOSTILE = {
    "plugins-not-a-table": ("plugins = 3\n", "'plugins' is integer, not a table"),
    "marketplaces-not-a-table": ('marketplaces = "x"\n', "'marketplaces' is str"),
    "merge-conflict": (
        '<<<<<<< HEAD\n[plugins]\na = "1"\n=======\n[plugins]\na = "2"\n>>>>>>> theirs\n',
        "plugman.toml:1: an unresolved merge conflict",
    ),
}


@pytest.fixture
def project(tmp_path: Path, isolated_home: Path) -> Path:
    folder = tmp_path / "clone"
    folder.mkdir()
    git(folder, "init", "-q")
    run("marketplace", "add", str(SAMPLES))
    return folder


@pytest.mark.parametrize("case", sorted(HOSTILE))
@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_a_hostile_plugman_toml_is_refused_with_exit_2_and_left_as_it_was(
    case: str, command: str, project: Path, isolated_home: Path
) -> None:
    """Attack: the clone's plugman.toml holds a value where a table belongs, or conflict
    markers; the user installs or uninstalls a plugin at project scope."""
    text, said = HOSTILE[case]
    if command == "uninstall":  # installed first, then the pull brings the hostile file
        run("install", "guardrails", "--scope", "project", project=project)
    (project / "plugman.toml").write_text(text)
    before = snapshot(project, isolated_home)
    argv = ["--project", str(project), command, "guardrails", "--scope", "project"]
    result = invoke(argv)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    if command == "uninstall" and case != "merge-conflict":
        # nothing of plugman's is in a table that is not one: the plugin goes, the file stays
        assert result.exit_code == 0, result.output
        assert (project / "plugman.toml").read_text() == text
        return
    assert result.exit_code == 2, result.output
    assert said in result.stderr, result.stderr
    assert snapshot(project, isolated_home) == before


def test_the_same_plugman_toml_made_right_installs(project: Path) -> None:
    """The legitimate twin: a plugman.toml with real tables takes the install."""
    (project / "plugman.toml").write_text('[plugins]\n"writing-skills@plugman-samples" = "*"\n')
    run("install", "guardrails", "--scope", "project", project=project)
    assert "guardrails@plugman-samples" in (project / "plugman.toml").read_text()

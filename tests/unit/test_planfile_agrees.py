"""The launchers' fast path finds the project and plugman's state folder with its own few lines
(plugman.runtime.launch.planfile: no pathlib, no platformdirs); they must agree with what every
other plugman command finds (plugman.core.paths), or a plan is written where the fast path never
looks (every call slow) or, worse, read for another project."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plugman.core.paths import PROJECT_MARKERS, Paths, find_project
from plugman.runtime.launch import planfile

LAYOUTS = [
    {},
    {"a": "plugman.toml"},
    {"a": ".git", "a/b": "plugman.toml"},
    {"a": ".mcp.json"},
    {"a/b/c": ".git"},
    {"": "plugman.toml", "a/b": ".mcp.json"},
]


def test_the_markers_are_plugmans() -> None:
    assert planfile.MARKERS == PROJECT_MARKERS


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_project_found_from_every_folder_is_plugmans(
    tmp_path: Path, layout: dict[str, str]
) -> None:
    deepest = tmp_path / "a" / "b" / "c" / "d"
    deepest.mkdir(parents=True)
    for folder, marker in layout.items():
        made = tmp_path / folder / marker
        if marker == ".git":
            made.mkdir(parents=True, exist_ok=True)
        else:
            made.write_text("")
    for start in [deepest, *deepest.parents][:5]:
        assert planfile.find_project(str(start)) == str(find_project(start)), start


@pytest.mark.parametrize(
    "given",
    [
        {"PLUGMAN_HOME": "{tmp}/home"},
        {"PLUGMAN_HOME": "{tmp}/home/../other"},
        {"XDG_STATE_HOME": "{tmp}/xdg"},
        {"XDG_STATE_HOME": "  "},
        {},
    ],
)
def test_the_state_folder_is_plugmans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: dict[str, str]
) -> None:
    for name in ("PLUGMAN_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    for name, value in given.items():
        monkeypatch.setenv(name, value.format(tmp=tmp_path))
    found = planfile.state_dir(os.environ)
    assert found is not None
    assert os.path.normpath(found) == os.path.normpath(Paths.from_env(os.environ).state_dir)

"""The deployments record (`<state>/deployments.json`, plugman.agents.artifacts) read as typed
entries (`Deployed`) and written back as it was; a hostile value is an error naming the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plugman.agents import artifacts
from plugman.core.errors import PlugmanError
from plugman.core.paths import Paths


def paths_in(root: Path) -> Paths:
    return Paths.from_env({"PLUGMAN_HOME": str(root / "home")}, project=root / "project")


def test_the_record_is_read_typed_and_written_back_byte_for_byte(tmp_path: Path) -> None:
    paths = paths_in(tmp_path)
    body = {
        "format": 1,
        "artifacts": {
            "/a/skills/x": {
                "files": {"SKILL.md": "sha256:00"},
                "owner": "x@m",
                "kind": "skills",
                "links": ["claude-code user"],
            },
            "/b/old": {"files": {"": "link:/s"}, "links": []},  # an older entry: no owner, kind
        },
    }
    text = json.dumps(body, indent=2) + "\n"
    artifacts.record_path(paths).parent.mkdir(parents=True)
    artifacts.record_path(paths).write_text(text)
    found = artifacts.load(paths)
    assert found["/a/skills/x"] == artifacts.Deployed(
        {"SKILL.md": "sha256:00"}, "x@m", "skills", ("claude-code user",)
    )
    items = sorted(found.items())
    again = {"format": 1, "artifacts": {key: entry.to_json() for key, entry in items}}
    assert json.dumps(again, indent=2) + "\n" == text


@pytest.mark.parametrize(
    "table",
    [
        [],
        {"/a": "no"},
        {"/a": {"files": {"": 3}, "links": []}},
        {"/a": {"files": {}, "links": "claude-code user"}},
        {"/a": {"files": {}, "owner": 1, "links": []}},
    ],
)
def test_a_malformed_entry_is_an_error_naming_the_file(tmp_path: Path, table: Any) -> None:
    """Invariant (artifacts.load): a state file is hostile input, never a traceback."""
    paths = paths_in(tmp_path)
    artifacts.record_path(paths).parent.mkdir(parents=True)
    artifacts.record_path(paths).write_text(json.dumps({"format": 1, "artifacts": table}))
    with pytest.raises(PlugmanError) as caught:
        artifacts.load(paths)
    assert caught.value.where == str(artifacts.record_path(paths))

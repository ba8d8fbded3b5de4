"""Readback of the hook launchers an agent's file names (plugman.agents.dangling.launched, what
`plugman doctor` reports when the plugin is gone): the launcher (`plugman hooks exec`, `python -m
plugman hooks exec`) and its direct form (`plugman-hook`, on PATH or by its path)."""

from __future__ import annotations

import pytest

from plugman.agents.dangling import launched


@pytest.mark.parametrize(
    "command",
    [
        "plugman hooks exec codex PostToolUse 'guard@guards#2'",
        "/usr/bin/python3 -m plugman hooks exec codex PostToolUse 'guard@guards#2'",
        "plugman-hook codex PostToolUse 'guard@guards#2'",
        "'/home/u/.venv/bin/plugman-hook' copilot PostToolUse guard@guards#2",
    ],
)
def test_each_form_of_the_hook_launcher_names_its_plugin(command: str) -> None:
    doc = {"hooks": {"PostToolUse": [{"hooks": [{"command": command}]}]}}
    found = list(launched(doc, ""))
    assert [(f.target, f.plugin) for f in found] == [("the hook guard@guards#2", "guard@guards")]
    assert found[0].key == "hooks.PostToolUse[0].hooks[0].command"


def test_a_command_naming_no_launcher_is_not_read_as_one() -> None:
    doc = {"hooks": {"Stop": [{"hooks": [{"command": "my-plugman-hook x y a@b#1"}]}]}}
    assert list(launched(doc, "")) == []

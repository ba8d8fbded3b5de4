"""Rough edges a new user hit around the linked agents (issue 24, section 2), each kept fixed
with the real CLI on real files: doctor and Claude's native plugins, the warnings a mutating
command prints, Ctrl-C, the link wording, the scope Claude shows for a project plugin."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from plugman.cli.app import app
from tests.conftest import SAMPLES
from tests.integration.helpers import run


def cli(*args: str, project: Path) -> Result:
    return CliRunner().invoke(app, ["--project", str(project), *args])


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    folder = tmp_path / "project"
    shutil.copytree(SAMPLES, folder / "marketplace", ignore=shutil.ignore_patterns("invalid"))
    run("marketplace", "add", "./marketplace", project=folder)
    return folder


# 1. doctor read the record of Claude's native plugins as an export target


def test_doctor_checks_claudes_native_plugin_entries_in_a_project(
    project: Path, home: Path
) -> None:
    run("agents", "add", "claude-code", "--scope", "project", project=project)
    run("install", "writing-skills", "--scope", "project", project=project)
    result = cli("doctor", "--no-check", "--json", project=project)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["problems"] == []
    local = project / ".claude" / "settings.local.json"
    settings = json.loads(local.read_text())
    (claude_id,) = settings["enabledPlugins"]
    settings["enabledPlugins"][claude_id] = False  # the user turned it off by hand
    local.write_text(json.dumps(settings))
    result = cli("doctor", "--no-check", "--json", project=project)
    (problem,) = json.loads(result.stdout)["problems"]
    assert claude_id in problem["message"] and "edited by hand" in problem["message"]
    assert problem["hint"].endswith("plugman agents add claude-code --scope project")

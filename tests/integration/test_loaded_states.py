"""What `list` and `doctor` say of whether each agent loads what it received, read from the
agents' own files without running them (issue 34): shadowed by a plugin Claude Code installed
itself, turned off in Claude's settings, waiting for Codex's folder trust; Codex's hook-trust
keys in the user's `config.toml` never read as servers or as an out-of-date file; an install
into a scope no agent is linked in says so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from plugman.cli import invoke
from tests.conftest import SAMPLES
from tests.integration.helpers import run


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    folder = tmp_path / "project"
    shutil.copytree(SAMPLES, folder / "marketplace", ignore=shutil.ignore_patterns("invalid"))
    run("marketplace", "add", "./marketplace", project=folder)
    return folder


def loading(project: Path) -> dict[tuple[str, str], dict[str, dict[str, str]]]:
    rows = run("list", project=project)["plugins"]
    return {(r["id"].split("@")[0], r["scope"]): r["loading"] for r in rows}


def test_claudes_own_install_of_a_name_shadows_plugmans_and_a_turned_off_one_is_said(
    project: Path, home: Path
) -> None:
    run("agents", "add", "claude-code", project=project)
    record = home / ".claude" / "plugins" / "installed_plugins.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    installed = {"scope": "user", "installPath": str(home / "x"), "version": "0.3.0"}
    record.write_text(json.dumps({"version": 2, "plugins": {"toolbox@official": [installed]}}))
    run("install", "toolbox", project=project)
    said = loading(project)[("toolbox", "user")]["claude-code"]  # left to Claude's own copy
    assert said["state"] == "shadowed"
    assert said["detail"] == "shadowed by toolbox@official (installed by Claude Code, user scope)"
    assert said["step"].endswith("claude plugin uninstall toolbox@official --scope user")
    text = invoke(["--project", str(project), "list"]).stdout
    assert "claude-code shadowed by toolbox@official" in text
    record.unlink()

    run("install", "writing-skills", project=project)
    assert loading(project)[("writing-skills", "user")] == {
        "claude-code": {"state": "loaded", "detail": "", "step": ""}
    }
    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text()) if settings.exists() else {}
    settings.write_text(json.dumps(data | {"enabledPlugins": {"writing-skills@skills-dir": False}}))
    said = loading(project)[("writing-skills", "user")]["claude-code"]
    assert said["state"] == "disabled"
    assert said["step"] == "turn it on: claude plugin enable writing-skills@skills-dir"
    done = invoke(["--project", str(project), "install", "code-review"])
    assert "writing-skills@plugman-samples: Claude Code does not load it: turned off" in done.stderr


def test_codex_hooks_at_two_scopes_give_no_false_report(project: Path, home: Path) -> None:
    """Codex linked at user and project scope, a hook plugin in each: its trust keys are hooks,
    never servers; `doctor` calls the user's config.toml out of date for no reordering; the
    project's hooks and servers wait for Codex's folder trust until the user grants it."""
    run("agents", "add", "codex", project=project)
    run("agents", "add", "codex", "--scope", "project", project=project)
    run("install", "guardrails", project=project)
    run("install", "guardrails", "notes-server", "--scope", "project", project=project)
    reached = {
        (r["id"].split("@")[0], r["scope"]): r["agents"]
        for r in run("list", project=project)["plugins"]
    }
    assert reached[("guardrails", "user")] == {"codex": ["hooks"]}
    assert reached[("guardrails", "project")] == {"codex": ["hooks"]}
    states = loading(project)
    assert states[("guardrails", "user")]["codex"]["state"] == "loaded"
    assert states[("guardrails", "project")]["codex"]["state"] == "waits"
    assert states[("notes-server", "project")]["codex"]["state"] == "waits"

    config = home / ".codex" / "config.toml"
    config.write_text(
        config.read_text() + f'\n[projects."{project.resolve()}"]\ntrust_level = "trusted"\n'
    )
    assert {s["codex"]["state"] for s in loading(project).values()} == {"loaded"}
    problems = run("doctor", "--no-check", project=project)["problems"]
    assert problems == []  # nothing out of date, nothing waiting


def test_an_install_into_a_scope_no_agent_is_linked_in_says_so(project: Path, home: Path) -> None:
    run("agents", "add", "codex", "--scope", "project", project=project)
    done = invoke(["--project", str(project), "install", "code-review", "--scope", "local"])
    assert done.exit_code == 0, done.output
    assert "no agent is linked in the local scope" in done.stderr
    assert "linked: codex (project)" in done.stderr
    assert "plugman agents add claude-code --scope local" in done.stderr
    done = invoke(["--project", str(project), "install", "toolbox", "--scope", "project"])
    assert "no agent is linked" not in done.stderr

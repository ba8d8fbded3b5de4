"""Rough edges a new user hit around the linked agents (issue 24, section 2), each kept fixed
with the real CLI on real files: doctor and Claude's native plugins, the warnings a mutating
command prints, Ctrl-C, the link wording, the scope Claude shows for a project plugin."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from subprocess import PIPE

import pytest

from plugman.cli import invoke
from plugman.cli.runner import Result
from tests.conftest import SAMPLES
from tests.integration.agents import claude_bin
from tests.integration.helpers import git, run, snapshot
from tests.integration.test_readback import World


def cli(*args: str, project: Path) -> Result:
    return invoke(["--project", str(project), *args])


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
    (waits,) = json.loads(result.stdout)["problems"]  # only: Claude has not trusted the folder
    assert waits["message"].startswith("claude-code (project scope) waits for Claude Code's")
    assert waits["hint"] == f"run claude in {project} and accept its trust dialog"
    local = project / ".claude" / "settings.local.json"
    settings = json.loads(local.read_text())
    (claude_id,) = settings["enabledPlugins"]
    settings["enabledPlugins"][claude_id] = False  # the user turned it off by hand
    local.write_text(json.dumps(settings))
    result = cli("doctor", "--no-check", "--json", project=project)
    problems = json.loads(result.stdout)["problems"]
    (off,) = [p for p in problems if "turned off in Claude Code" in p["message"]]
    assert off["hint"] == f"turn it on: claude plugin enable {claude_id}"
    (problem,) = [p for p in problems if p not in (waits, off)]
    assert claude_id in problem["message"] and "edited by hand" in problem["message"]
    assert problem["hint"].endswith("plugman agents add claude-code --scope project")


# 3. Ctrl-C printed a Python traceback


def _interrupted(
    project: Path, tmp_path: Path, fault: str, *args: str
) -> subprocess.CompletedProcess[str]:
    """`plugman ARGS` as a real process, stopped at the transaction step `fault` names and sent
    SIGINT there, as Ctrl-C in a terminal does."""
    flag = tmp_path / "paused"
    env = {**os.environ, "PLUGMAN_FAULT": fault, "PLUGMAN_FAULT_FLAG": str(flag)}
    argv = [sys.executable, "-m", "plugman", "--project", str(project), *args]
    with subprocess.Popen(argv, env=env, stdout=PIPE, stderr=PIPE, text=True) as proc:
        deadline = time.monotonic() + 60
        while not flag.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert flag.exists(), proc.communicate()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


@pytest.mark.parametrize(
    "args",
    [("install", "writing-skills"), ("agents", "add", "gemini")],
    ids=["install", "agents-add"],  # a hot command, another
)
def test_ctrl_c_is_one_line_exit_130_and_nothing_changed(
    project: Path, home: Path, isolated_home: Path, tmp_path: Path, args: tuple[str, ...]
) -> None:
    run("agents", "add", "codex", project=project)
    before = snapshot(isolated_home, home, project)
    done = _interrupted(project, tmp_path, "pause-write:2", *args)  # one file already written
    assert done.returncode == 130, done
    assert done.stderr == "error: interrupted; nothing was changed\n"
    assert snapshot(isolated_home, home, project) == before


def test_ctrl_c_after_the_commit_says_what_stays(project: Path, home: Path, tmp_path: Path) -> None:
    done = _interrupted(project, tmp_path, "pause-commit", "install", "writing-skills")
    assert done.returncode == 130, done
    assert done.stderr.count("\n") == 1 and "part of its work was saved" in done.stderr
    assert [p["id"] for p in run("list", project=project)["plugins"]] == [
        "writing-skills@plugman-samples"
    ]


# 4. linking said "plugman owns 0 entries there"


def test_linking_says_what_of_plugmans_is_there_in_a_users_words(project: Path, home: Path) -> None:
    first = cli("agents", "add", "codex", project=project)
    assert first.exit_code == 0, first.output
    assert first.stdout.splitlines()[0] == "linked codex (user): nothing of plugman's there yet"
    run("install", "notes-server", project=project)
    second = cli("agents", "add", "gemini", project=project)
    assert second.stdout.splitlines()[0] == "linked gemini (user): plugman has 1 config entry there"
    gone = cli("agents", "remove", "gemini", project=project)
    assert gone.stdout.splitlines()[0] == "unlinked gemini (user)"
    assert "owns" not in first.stdout + second.stdout + gone.stdout


# 2. every mutating command reprinted every linked agent's warnings, for every scope


def test_a_command_tells_only_the_warnings_it_brought_and_agents_list_the_standing_ones(
    project: Path, home: Path
) -> None:
    cli("agents", "add", "codex", "cursor", "--scope", "project", project=project)
    cli("agents", "add", "codex", project=project)
    taken = home / ".agents" / "skills"
    for name in ("commit-message", "writing-skills-commit-message"):  # the user's own skills
        (taken / name).mkdir(parents=True)
        (taken / name / "SKILL.md").write_text("---\nname: mine\ndescription: mine\n---\n")
    first = cli("install", "toolbox", "code-review", "--scope", "project", project=project)
    told = [line for line in first.stderr.splitlines() if line.startswith("warning:")]
    assert told, first.stderr  # what Codex and Cursor cannot take of toolbox's commands
    assert all(line.count("codex (project)") <= 1 for line in told), told
    assert len(told) == len(set(told))
    user = cli("install", "writing-skills", project=project)  # the user scope only
    said = [line for line in user.stderr.splitlines() if line.startswith("warning:")]
    assert said == [
        "warning: codex (user): skill commit-message of writing-skills: "
        "~/.agents/skills/commit-message is taken; not deployed"
    ]
    again = cli("install", "notes-server", project=project)
    assert "warning:" not in again.stderr  # nothing new: the standing ones are not said again
    listed = cli("agents", "list", project=project).stdout
    for line in told + said:
        assert f"  {line.removeprefix('warning: ')}" in listed.splitlines()
    assert str(home) not in listed
    standing = json.loads(cli("agents", "list", "--json", project=project).stdout)["warnings"]
    assert {(w["agent"], w["scope"]) for w in standing} >= {
        ("codex", "user"),
        ("cursor", "project"),
    }
    fewer = cli("uninstall", "code-review", "--scope", "project", project=project)
    assert fewer.exit_code == 0 and "warning:" not in fewer.stderr  # fewer of the same: no news
    assert "left out" in cli("agents", "list", project=project).stdout  # toolbox's still stand


def test_a_warning_names_a_store_tree_by_its_plugin_and_each_agent_once(tmp_path: Path) -> None:
    from plugman.agents.warnings import Notice, Warned
    from plugman.output.warned import deploy_warnings

    home, project, tree = tmp_path / "home", tmp_path / "project", tmp_path / "store" / "ab12"
    hook = f"Stop hook 'python3 {tree}/hooks/log.py': the agent has no Stop event; left out"
    taken = f"{home}/.cursor/rules/x.mdc exists and is not plugman's; left as it is"
    mine = f"{project}/.codex/config.toml was changed since plugman wrote it; left as it is"
    fresh = [
        Notice("codex", "project", hook),
        Notice("codex", "project", hook),  # two plugins' hooks, one note
        Notice("cursor", "project", hook),
        Notice("", "", taken),
        Notice("codex", "project", mine),
    ]
    said = deploy_warnings(Warned(fresh, home, project, {str(tree): "guardrails@samples"}))
    assert said.splitlines() == [
        "warning: codex (project), cursor (project): Stop hook 'python3 "
        "<guardrails@samples>/hooks/log.py': the agent has no Stop event; left out",
        "warning: ~/.cursor/rules/x.mdc exists and is not plugman's; left as it is",
        "warning: codex (project): .codex/config.toml was changed since plugman wrote it; "
        "left as it is",
    ]


# 5. Claude's `plugin list` shows plugman's project plugins as "Scope: local"


@pytest.mark.slow
def test_list_check_says_why_claude_calls_a_project_plugin_local(
    tmp_path: Path, isolated_home: Path
) -> None:
    world = World(tmp_path, isolated_home, [claude_bin().parent])
    git(world.project, "init", "-q")
    world.json("marketplace", "add", str(SAMPLES))
    world.json("agents", "add", "claude-code", "--scope", "project")
    world.json("install", "writing-skills", "--scope", "project")
    offline = {"ANTHROPIC_API_KEY": "sk-ant-fake", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    for _ in range(2):  # Claude records the marketplace in its first session, the plugin next
        session = subprocess.run(  # a whole session, whose model call fails at once
            [str(claude_bin()), "-p", "hi", "--output-format", "stream-json", "--verbose"],
            cwd=world.project, env=world.env | offline | {"CLAUDE_CODE_MAX_RETRIES": "0"},
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        init = json.loads(session.stdout.splitlines()[0])
        assert "writing-skills:commit-message" in init["skills"]  # loaded from the first
    claude = subprocess.run(
        [str(claude_bin()), "plugin", "list", "--json"],
        cwd=world.project, env=world.env, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    # Claude Code 2.1.332 also lists its own three `@builtin` plugins
    (listed,) = [p for p in json.loads(claude.stdout) if not p["id"].endswith("@builtin")]
    assert listed["scope"] == "local"  # Claude's own words: settings.local.json turns it on
    (said,) = world.json("list", "--check")["plugins"][0]["checked"]["claude-code"]
    assert said["state"] == "ok", said
    assert 'Claude calls its scope "local"' in said["detail"]
    assert ".claude/settings.local.json" in said["detail"]
    git(world.project, "check-ignore", "-q", ".claude/settings.local.json")  # this machine's
    assert not (world.project / ".claude" / "settings.json").exists()  # nothing committed

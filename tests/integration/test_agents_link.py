"""Issue 13, step 1: linked agents. `plugman agents add|remove|list` record which agents a scope
feeds in its plugman.toml, and every command that changes what is resolved deploys to them in
its own transaction; taking everything out leaves every agent file as it was.

Real files in a temporary home and project, the real CLI; no mocks.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

import pytest

from plugman import extensions
from plugman.cli import invoke
from plugman.core.paths import Paths
from tests.conftest import SAMPLES
from tests.integration.helpers import run, snapshot

LINKED = ["claude-code", "gemini", "codex", "cursor"]
REAL_PATH = os.environ.get("PATH", "")  # before a fixture hides the agents


@pytest.fixture
def home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PATH", str(home / "bin"))  # no agent on PATH unless a test puts one
    return home


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / ".mcp.json").write_text('{"mcpServers": {"mine": {"command": "x"}}}')
    (folder / ".gemini").mkdir()
    (folder / ".gemini" / "settings.json").write_text('{\n  // mine\n  "theme": "dark"\n}\n')
    run("marketplace", "add", str(SAMPLES), project=folder)
    return folder


def cli(project: Path, *args: str) -> tuple[int, str, str]:
    result = invoke(["--project", str(project), *args])
    return result.exit_code, result.stdout, result.stderr


def servers(file: Path) -> set[str]:
    if not file.exists():
        return set()
    if file.suffix == ".toml":
        return set(tomllib.loads(file.read_text()).get("mcp_servers", {}))
    return set(jsonc(file).get("mcpServers", {}))


def jsonc(file: Path) -> dict[str, Any]:
    """The test's JSON-with-comments files: a comment is a line of its own."""
    text = "\n".join(line for line in file.read_text().splitlines() if line.strip()[:2] != "//")
    found: dict[str, Any] = json.loads(text)
    return found


def natively_enabled(project: Path) -> set[str]:
    local = project / ".claude" / "settings.local.json"
    enabled = json.loads(local.read_text())["enabledPlugins"] if local.exists() else {}
    return {key.partition("@")[0] for key, on in enabled.items() if on}


def test_linked_agents_follow_every_change_and_leave_no_trace(project: Path, home: Path) -> None:
    before = snapshot(project, home)
    added = run("agents", "add", *LINKED, "--scope", "project", project=project)
    assert sorted(a["agent"] for a in added["agents"]) == sorted(LINKED)
    declared = tomllib.loads((project / "plugman.toml").read_text())
    assert sorted(declared["agents"]) == sorted(LINKED)

    run("install", "notes-server", "guardrails", "--scope", "project", project=project)
    plugin = "plugin_notes-server_notes"
    files = {
        "gemini": project / ".gemini" / "settings.json",
        "codex": project / ".codex" / "config.toml",
        "cursor": project / ".cursor" / "mcp.json",
    }
    for agent, file in files.items():
        assert plugin in servers(file), agent
    assert "// mine" in files["gemini"].read_text()  # the user's own bytes stay
    # Claude Code loads both plugins natively (enabled in the project's local settings), so
    # their servers and hooks are not also written into its .mcp.json and settings.json
    assert natively_enabled(project) == {"notes-server", "guardrails"}
    assert servers(project / ".mcp.json") == {"mine"}
    assert not (project / ".claude" / "settings.json").exists()
    reached = {p["id"].split("@")[0]: p["agents"] for p in run("list", project=project)["plugins"]}
    assert reached["notes-server"] == {
        agent: ["plugin"] if agent == "claude-code" else ["mcp"] for agent in sorted(LINKED)
    }
    assert reached["guardrails"]["gemini"] == ["hooks"]
    assert reached["guardrails"]["codex"] == ["hooks"]

    run("disable", "notes-server", "--scope", "project", project=project)
    assert all(plugin not in servers(file) for file in files.values())
    assert natively_enabled(project) == {"guardrails"}
    run("enable", "notes-server", "--scope", "project", project=project)
    assert all(plugin in servers(file) for file in files.values())

    assert cli(project, "mcp", "add", "t1", "-s", "project", "--", "echo", "hi")[0] == 0
    assert "t1" not in servers(files["gemini"])  # a project server waits for approval
    run("trust", "approve", "t1", project=project)
    assert "t1" in servers(files["gemini"]) and "t1" in servers(files["codex"])
    assert servers(project / ".mcp.json") == {"mine", "t1"}  # Claude's own file, once

    run("uninstall", "notes-server", "guardrails", "--scope", "project", project=project)
    run("mcp", "remove", "t1", project=project)
    run("agents", "remove", *LINKED, "--scope", "project", project=project)
    assert snapshot(project, home) == before


def test_each_scope_feeds_its_own_files(project: Path, home: Path) -> None:
    run("agents", "add", "gemini", project=project)  # user scope
    run("agents", "add", "gemini", "--scope", "project", project=project)
    run("install", "notes-server", project=project)  # user scope
    run("install", "remote-docs", "--scope", "project", project=project)
    user = servers(home / ".gemini" / "settings.json")
    here = servers(project / ".gemini" / "settings.json")
    assert "plugin_notes-server_notes" in user and "plugin_notes-server_notes" not in here
    assert "plugin_remote-docs_docs" in here and "plugin_remote-docs_docs" not in user
    assert "agents" in tomllib.loads(Paths.from_env().user_config.read_text())


def test_agents_list_says_what_is_here_and_what_is_linked(project: Path, home: Path) -> None:
    (home / "bin").mkdir()
    (home / "bin" / "codex").write_text("#!/bin/sh\n")
    (home / "bin" / "codex").chmod(0o755)
    (home / ".gemini").mkdir()
    run("agents", "add", "cursor", "--scope", "project", "--via-gateway", project=project)
    rows = {a["name"]: a for a in run("agents", "list", project=project)["agents"]}
    assert set(rows) == set(extensions.targets())  # every registered agent, built-in or not
    assert rows["codex"]["present"] and rows["gemini"]["present"]
    assert not rows["zed"]["present"]
    assert rows["cursor"]["linked"] == {"project": {"via_gateway": True}}
    code, out, _ = cli(project, "agents", "list")
    assert code == 0 and "project (via gateway)" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["agents", "add", "nope"], "unknown agent 'nope'"),
        (["agents", "add", "zed", "--scope", "project"], "zed has no project-scope files"),
        (["agents", "remove", "gemini", "--scope", "project"], "gemini is not linked"),
        (["agents", "add", "gemini", "--scope", "global"], "'global' is not one of"),
        (["agents", "add"], "missing argument"),
    ],
)
def test_bad_input_is_a_usage_error_that_changes_nothing(
    project: Path, home: Path, args: list[str], message: str
) -> None:
    before = snapshot(project, home)
    code, _out, err = cli(project, *args)
    assert code == 2 and message in err and "hint:" in err
    assert snapshot(project, home) == before


@pytest.mark.slow
def test_an_agent_linked_via_the_gateway_connects_to_it(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gemini CLI 0.61.0 (real, from npm) gets one server, `plugman mcp serve`, which serves the
    installed notes server behind it, and connects to it."""
    import sys

    from tests.integration.agents import (
        agent_env,
        connected,
        gemini_mcp_list,
        trust_gemini_folder,
    )

    monkeypatch.setenv("PATH", REAL_PATH)
    run("install", "notes-server", project=project)
    run("agents", "add", "gemini", "--via-gateway", project=project)
    servers_file = home / ".gemini" / "settings.json"
    assert servers(servers_file) == {"plugman"}
    env = agent_env(home, Path(sys.executable).parent)
    trust_gemini_folder(home, project)  # the user's decision, which plugman never takes
    listed = gemini_mcp_list(home, project, env)
    assert connected(listed, "plugman"), listed


def test_through_the_gateway_an_agent_gets_its_components_and_lifecycle_hooks(
    project: Path, home: Path
) -> None:
    """The gateway runs the tool hooks around MCP calls; the agent itself gets every other
    hook (here SessionStart, UserPromptSubmit, Stop), the skills, and a note on the tool hooks;
    each hook runs once."""
    run("agents", "add", "gemini", "--scope", "project", "--via-gateway", project=project)
    code, _out, err = cli(project, "install", "guardrails", "writing-skills", "--scope", "project")
    assert code == 0, err
    settings = jsonc(project / ".gemini" / "settings.json")
    assert set(settings["mcpServers"]) == {"plugman"}
    assert set(settings["hooks"]) == {"SessionStart", "BeforeAgent", "AfterAgent"}
    assert "2 tool hook group(s) run in the gateway" in " ".join(err.split())
    assert (project / ".agents" / "skills" / "commit-message" / "SKILL.md").is_file()
    before = snapshot(project)
    run("uninstall", "guardrails", "--scope", "project", project=project)
    assert "hooks" not in jsonc(project / ".gemini" / "settings.json")
    assert snapshot(project) != before


def test_hooks_files_get_the_version_their_agents_ask_for(project: Path, home: Path) -> None:
    """Cursor and Copilot CLI hooks files carry `"version": 1`; a file that has it keeps its
    own, and uninstall leaves it byte-identical."""
    own = '{\n  "version": 1,\n  "hooks": {"stop": [{"command": "mine"}]}\n}\n'
    (project / ".cursor").mkdir()
    (project / ".cursor" / "hooks.json").write_text(own)
    run("agents", "add", "cursor", "copilot-cli", "--scope", "project", project=project)
    code, _out, err = cli(project, "install", "guardrails", "--scope", "project")
    assert code == 0 and "already there" not in err, err
    cursor = json.loads((project / ".cursor" / "hooks.json").read_text())
    assert cursor["version"] == 1 and len(cursor["hooks"]["stop"]) == 2
    copilot = json.loads((project / ".github" / "hooks" / "plugman.json").read_text())
    assert copilot["version"] == 1 and "PreToolUse" in copilot["hooks"]
    run("uninstall", "guardrails", "--scope", "project", project=project)
    assert (project / ".cursor" / "hooks.json").read_text() == own
    assert not (project / ".github").exists()


def test_an_agent_linked_via_the_gateway_is_linked_in_one_scope_only(
    project: Path, home: Path
) -> None:
    run("agents", "add", "cursor", "--via-gateway", project=project)
    before = snapshot(project, home)
    code, _out, err = cli(project, "agents", "add", "cursor", "--scope", "project")
    assert code == 2 and "already linked in the user scope through the gateway" in err
    assert "hint: first: plugman agents remove cursor --scope user" in err
    assert snapshot(project, home) == before


def test_doctor_reports_drift_in_what_was_deployed(project: Path, home: Path) -> None:
    run("agents", "add", "gemini", "--scope", "project", project=project)
    run("install", "writing-skills", "--scope", "project", project=project)
    skills = project / ".agents" / "skills"
    assert (skills / "commit-message" / "SKILL.md").is_file()
    (skills / "commit-message" / "SKILL.md").unlink()
    with (skills / "changelog-writer" / "SKILL.md").open("a") as handle:
        handle.write("mine\n")
    found = {p["where"]: p for p in run("doctor", project=project)["problems"]}
    gone, changed = found[str(skills / "commit-message")], found[str(skills / "changelog-writer")]
    assert "gone since plugman deployed it to gemini" in gone["message"]
    assert "changed since" in changed["message"] and "move it" in changed["hint"]
    run("agents", "add", "gemini", "--scope", "project", project=project)  # deploys again
    assert (skills / "commit-message" / "SKILL.md").is_file()
    assert (skills / "changelog-writer" / "SKILL.md").read_text().endswith("mine\n")  # theirs


def test_an_agent_that_reads_the_projects_mcp_json_does_not_get_its_servers_twice(
    project: Path, home: Path
) -> None:
    run("trust", "approve", "mine", project=project)
    run("agents", "add", "copilot-cli", "gemini", "--scope", "project", project=project)
    run("install", "notes-server", "--scope", "project", project=project)
    assert servers(project / ".github" / "mcp.json") == {"plugin_notes-server_notes"}
    assert servers(project / ".gemini" / "settings.json") == {"mine", "plugin_notes-server_notes"}


def test_a_project_install_leaves_git_status_with_what_a_team_commits(
    project: Path, home: Path
) -> None:
    """Claude Code's `.claude/settings.local.json` names a marketplace of this machine's project
    path, and the skill copies are this machine's output: both stay out of `git status`
    (through the clone's info/exclude); the files left hold no path of this machine."""
    import subprocess

    def status() -> set[str]:
        done = subprocess.run(
            ["git", "status", "--porcelain", "-uall"],
            cwd=project,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PATH": REAL_PATH},
        )
        return {line[3:] for line in done.stdout.splitlines()}

    subprocess.run(["git", "init", "-q"], cwd=project, check=True, env={"PATH": REAL_PATH})
    before = status()
    run("agents", "add", "claude-code", "codex", "--scope", "project", project=project)
    run("install", "writing-skills", "notes-server", "--scope", "project", project=project)
    assert (project / ".claude" / "settings.local.json").is_file()
    assert (project / ".agents" / "skills" / "commit-message" / "SKILL.md").is_file()
    shown = status() - before
    assert shown == {".codex/config.toml", "plugman.lock", "plugman.toml"}
    for name in shown:
        text = (project / name).read_text()
        assert str(home) not in text and str(project) not in text and "/store/" not in text
    exclude = (project / ".git" / "info" / "exclude").read_text()
    assert "/.claude/settings.local.json" in exclude
    run("uninstall", "writing-skills", "notes-server", "--scope", "project", project=project)
    run("agents", "remove", "claude-code", "codex", "--scope", "project", project=project)
    assert "plugman" not in (project / ".git" / "info" / "exclude").read_text()
    assert not (project / ".claude" / "settings.local.json").exists()


def test_claude_linked_via_the_gateway_is_asked_to_wait_for_it_and_left_as_it_was(
    project: Path, home: Path
) -> None:
    """Claude Code's first turn waits only ~2 s for MCP servers unless its own
    CLAUDE_CODE_MCP_STARTUP_WAIT_MS says otherwise (a real session proves the effect:
    tests/integration/test_gateway_agents.py); the link sets it in the scope's settings file,
    keeps a value the user set, and unlinking takes back exactly what it added."""
    settings = project / ".claude" / "settings.json"
    before = snapshot(project, home)
    run("agents", "add", "claude-code", "--scope", "project", "--via-gateway", project=project)
    assert json.loads(settings.read_text())["env"] == {"CLAUDE_CODE_MCP_STARTUP_WAIT_MS": "10000"}
    run("agents", "remove", "claude-code", "--scope", "project", project=project)
    assert snapshot(project, home) == before

    settings.parent.mkdir(exist_ok=True)
    settings.write_text('{"env": {"CLAUDE_CODE_MCP_STARTUP_WAIT_MS": "3000"}}\n')
    code, _out, err = cli(
        project, "agents", "add", "claude-code", "--scope", "project", "--via-gateway"
    )
    assert code == 0 and "'CLAUDE_CODE_MCP_STARTUP_WAIT_MS' is already there" in err
    assert json.loads(settings.read_text())["env"] == {"CLAUDE_CODE_MCP_STARTUP_WAIT_MS": "3000"}
    run("agents", "add", "claude-code", "--scope", "project", project=project)  # no gateway
    assert json.loads(settings.read_text())["env"] == {"CLAUDE_CODE_MCP_STARTUP_WAIT_MS": "3000"}

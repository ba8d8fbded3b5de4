"""Real agents accept what `plugman export` writes: Claude Code and Gemini CLI, from npm, report
the sample plugin's stdio server as connected, at user and project scope; and plugman takes its
entries out again after the agent has rewritten the file its own way."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.integration.agents import (
    agent_env,
    claude_bin,
    claude_mcp_list,
    connected,
    gemini_bin,
    gemini_mcp_list,
    trust_claude_project,
    trust_gemini_folder,
)
from tests.integration.helpers import run
from tests.integration.test_export import cli, install_samples

NOTES = "plugin_notes-server_notes"


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, dict[str, str]]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    install_samples(project, "notes-server")
    run("install", "notes-server", "--scope", "project", project=project)  # each scope's file
    return home, project, agent_env(home, Path(sys.executable).parent)


def test_claude_code_connects_to_the_exported_server(
    setup: tuple[Path, Path, dict[str, str]], record_property: pytest.RecordProperty
) -> None:
    home, project, env = setup
    claude_bin()  # installs the pinned agent (or skips when npm cannot be reached)
    cli(project, "export", "--target", "claude-code", "--write")
    cli(project, "export", "--target", "claude-code", "--scope", "project", "--write")
    project_file = json.loads((project / ".mcp.json").read_text())
    # The same server at both scopes: Claude lists the winner (project) once.
    assert NOTES in project_file["mcpServers"]
    trust_claude_project(home, project, [NOTES])
    listed = claude_mcp_list(home, project, env)
    assert connected(listed, NOTES), listed
    cli(project, "export", "--target", "claude-code", "--scope", "project", "--remove")
    listed = claude_mcp_list(home, project, env)  # now the user-scope entry
    assert connected(listed, NOTES), listed
    record_property("summary", f"claude code 2.1.328: {NOTES} connected (project, then user)")
    # Claude has rewritten ~/.claude.json (its own keys, no final newline): plugman still takes
    # out exactly its entry and keeps everything Claude wrote.
    claudes = json.loads((home / ".claude.json").read_text())
    cli(project, "export", "--target", "claude-code", "--remove")
    left = json.loads((home / ".claude.json").read_text())
    assert NOTES not in left.get("mcpServers", {})
    assert {k: v for k, v in claudes.items() if k != "mcpServers"} == {
        k: v for k, v in left.items() if k != "mcpServers"
    }
    assert not connected(claude_mcp_list(home, project, env), NOTES)


def test_gemini_cli_connects_to_the_exported_server(
    setup: tuple[Path, Path, dict[str, str]], record_property: pytest.RecordProperty
) -> None:
    home, project, env = setup
    gemini_bin()
    cli(project, "export", "--target", "gemini", "--write")
    trust_gemini_folder(home, project)
    listed = gemini_mcp_list(home, project, env)
    assert connected(listed, NOTES), listed
    cli(project, "export", "--target", "gemini", "--remove")
    cli(project, "export", "--target", "gemini", "--scope", "project", "--write")
    listed = gemini_mcp_list(home, project, env)
    assert connected(listed, NOTES), listed
    record_property("summary", f"gemini cli 0.61.0: {NOTES} connected (user, then project)")
    cli(project, "export", "--target", "gemini", "--scope", "project", "--remove")
    assert not (project / ".gemini").exists()

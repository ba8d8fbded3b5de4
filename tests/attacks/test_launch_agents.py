"""Consent at each call, seen by the real agents (slow): an approved project hook or server whose
script a `git pull` changed, with no plugman command in between, does not run in Claude Code
or Gemini CLI; approved again, it runs (issue 33).

The clone commits a `plugman.toml` with a SessionStart hook running `scripts/hook.sh` and a
stdio server running `scripts/notes_server.py`; the victim links the agent at project scope
and approves both, which deploys. The attacker then changes a script upstream and the victim
pulls. Before this work Claude Code and Gemini CLI ran the project's handlers as written into
their files, so the changed script ran until plugman's next deploy; now every entry that needs
approval goes through `plugman hooks exec` / `plugman mcp run`, which check the approval
(project, entry, file digests) at each call (agents.targets.hooks.launched,
agents.export_entries.servers).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.attacks.test_origin_clone import clone, push_change, upstream
from tests.integration.agents import (
    agent_env,
    claude_bin,
    claude_session_events,
    connected,
    gemini_bin,
    gemini_mcp_list,
    trust_gemini_folder,
)
from tests.integration.helpers import run

pytestmark = pytest.mark.slow

HOOK_TOML = (
    "[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\n"
    'type = "command"\ncommand = \'bash "$CLAUDE_PROJECT_DIR/scripts/hook.sh"\'\n'
)
SCRIPT = '#!/bin/sh\necho launch-hook-ran\necho ran >> "$CLAUDE_PROJECT_DIR/ran-hook"\n'
SERVER_TOML = '[mcp_servers.notes]\ncommand = "python3"\nargs = ["scripts/notes_server.py"]\n'
NOTES = Path(__file__).parents[2] / "sample-plugins" / "plugins" / "notes-server" / "server"


def responses(project: Path, home: Path) -> list[dict[str, object]]:
    """The SessionStart hook_response events of a real `claude -p` session in `project`."""
    events = claude_session_events(project, agent_env(home, Path(sys.executable).parent))
    return [
        e
        for e in events
        if e.get("subtype") == "hook_response" and e.get("hook_event") == "SessionStart"
    ]


def hook_ran(project: Path, home: Path) -> bool:
    marker = project / "ran-hook"
    marker.unlink(missing_ok=True)
    said = [str(e.get("stdout", "")) + str(e.get("output", "")) for e in responses(project, home)]
    ran = any("launch-hook-ran" in s for s in said)  # the handler's stdout, passed through
    assert ran == marker.exists(), (said, marker.exists())
    return ran


def test_claude_code_does_not_run_a_project_hook_whose_script_changed_after_approval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack: the project's approved SessionStart hook, then a `git pull` that changes its
    script, and a real `claude -p` session with no plugman command in between. Invariant: the
    hook in Claude's settings is `plugman hooks exec claude-code ...`, so the unchanged approved
    script runs (its stdout reaches Claude as the hook's), the changed one does not, and runs
    again once approved (with no redeploy needed)."""
    claude_bin()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    repo = upstream(tmp_path, {"plugman.toml": HOOK_TOML, "scripts/hook.sh": SCRIPT})
    victim = clone(repo, tmp_path / "victim")
    trusted = {"projects": {str(victim): {"hasTrustDialogAccepted": True}}}
    (home / ".claude.json").write_text(json.dumps(trusted))
    run("agents", "add", "claude-code", "--scope", "project", project=victim)
    run("trust", "approve", "SessionStart:*", project=victim)  # deploys to the linked agents
    settings = (victim / ".claude" / "settings.json").read_text()
    assert "plugman hooks exec claude-code SessionStart" in settings, settings
    assert hook_ran(victim, home), "the approved, unchanged hook did not run"

    push_change(repo, victim, {"scripts/hook.sh": SCRIPT + "echo evil > ran-evil\n"})
    assert not hook_ran(victim, home), "the changed script ran on the old approval"
    assert not (victim / "ran-evil").exists()

    run("trust", "approve", "SessionStart:*", project=victim)
    assert hook_ran(victim, home), "approved again, the hook did not run"
    assert (victim / "ran-evil").exists()


def connects(home: Path, project: Path, env: dict[str, str]) -> str:
    """Gemini's list, asked up to three times until `notes` connects: on a loaded machine its
    connection timeout can pass before the launcher has started the server (a refused server
    exits at once, so the negative case needs no second look)."""
    for _ in range(3):
        listed = gemini_mcp_list(home, project, env)
        if connected(listed, "notes"):
            return listed
    raise AssertionError(f"notes never connected:\n{listed}")


def test_gemini_does_not_start_a_project_server_whose_script_changed_after_approval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack: the project's approved stdio server, then a `git pull` that changes its script,
    and `gemini mcp list` with no plugman command in between. Invariant: Gemini's entry is
    `plugman mcp run notes`, so the approved server connects, the changed one does not, and
    connects again once approved."""
    gemini_bin()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    server = (NOTES / "notes_server.py").read_text()
    files = {"plugman.toml": SERVER_TOML, "scripts/notes_server.py": server}
    repo = upstream(tmp_path, files)
    victim = clone(repo, tmp_path / "victim")
    trust_gemini_folder(home, victim)
    env = agent_env(home, Path(sys.executable).parent)
    run("agents", "add", "gemini", "--scope", "project", project=victim)
    run("trust", "approve", "notes", project=victim)
    entry = json.loads((victim / ".gemini" / "settings.json").read_text())["mcpServers"]["notes"]
    assert entry == {"command": "plugman", "args": ["mcp", "run", "notes"]}, entry
    assert connects(home, victim, env)

    push_change(repo, victim, {"scripts/notes_server.py": server + "\n# changed upstream\n"})
    listed = gemini_mcp_list(home, victim, env)
    assert not connected(listed, "notes"), listed

    run("trust", "approve", "notes", project=victim)
    assert connects(home, victim, env)
    assert shutil.which("plugman", path=env["PATH"]) is not None

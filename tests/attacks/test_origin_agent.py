"""Origin and consent seen by the real Claude Code (slow): a clone's SessionStart hook delivered
through plugman runs in `claude -p` only once the user approved it, and not after the script
it runs changed (issue 33, points 2 and 3).

The clone tracks `.plugman/local.toml` (the local scope's file, which plugman used to take as
the user's) with a SessionStart hook running `scripts/hook.sh`; the victim links Claude Code to
the local scope (`plugman agents add claude-code --scope local`), which writes plugman's hooks
into `.claude/settings.local.json`. Claude Code's own trust dialog is accepted for the folder,
so only plugman stands between the clone and the hook.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.attacks.test_origin_clone import clone, push_change, upstream
from tests.integration.agents import agent_env, claude_bin, claude_session_events
from tests.integration.helpers import run

pytestmark = pytest.mark.slow

HOOK_TOML = (
    "[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\n"
    'type = "command"\ncommand = \'bash "$CLAUDE_PROJECT_DIR/scripts/hook.sh"\'\n'
)
SCRIPT = '#!/bin/sh\necho origin-hook-ran\necho ran >> "$CLAUDE_PROJECT_DIR/ran-hook"\n'


def hook_ran(project: Path, home: Path) -> bool:
    """Whether a real `claude -p` session in `project` ran the clone's hook (its output in a
    SessionStart hook_response, and its marker file written)."""
    marker = project / "ran-hook"
    marker.unlink(missing_ok=True)
    events = claude_session_events(project, agent_env(home, Path(sys.executable).parent))
    said = [
        str(e.get("stdout", "")) + str(e.get("output", ""))
        for e in events
        if e.get("subtype") == "hook_response" and e.get("hook_event") == "SessionStart"
    ]
    ran = any("origin-hook-ran" in s for s in said)
    assert ran == marker.exists(), (said, marker.exists())
    return ran


def test_claude_code_runs_a_clones_local_toml_hook_only_once_approved_and_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack: a tracked `.plugman/local.toml` hook, then (once approved) a changed script.
    Invariant: plugman delivers it to Claude Code only after `trust approve`, and takes it out
    again at the next deploy after the script changed; approving again brings it back."""
    claude_bin()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    repo = upstream(
        tmp_path, {".plugman/local.toml": HOOK_TOML, "scripts/hook.sh": SCRIPT, ".mcp.json": "{}"}
    )
    victim = clone(repo, tmp_path / "victim")
    trusted = {"projects": {str(victim): {"hasTrustDialogAccepted": True}}}
    (home / ".claude.json").write_text(json.dumps(trusted))
    run("agents", "add", "claude-code", "--scope", "local", project=victim)
    assert not hook_ran(victim, home), "the clone's hook ran with nothing approved"

    run("trust", "approve", "SessionStart:*", project=victim)  # deploys to the linked agents
    assert hook_ran(victim, home), "the approved hook did not run"

    push_change(repo, victim, {"scripts/hook.sh": SCRIPT + "echo evil\n"})
    run("agents", "add", "claude-code", "--scope", "local", project=victim)  # any deploy
    assert not hook_ran(victim, home), "the changed script ran on the old approval"

    run("trust", "approve", "SessionStart:*", project=victim)
    assert hook_ran(victim, home)

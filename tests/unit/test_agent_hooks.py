"""Hooks rendered for each agent from Claude Code's matcher groups (targets/hooks.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from plugman import extensions
from plugman.agents.targets import Given, Place, hook_id, target
from plugman.agents.targets.codex import hook_hash

BASH: dict[str, Any] = {
    "hooks": [{"type": "command", "command": "$CLAUDE_PROJECT_DIR/a.sh", "timeout": 30}],
    "matcher": "Bash|Edit",
}
STOP: dict[str, Any] = {"hooks": [{"type": "command", "command": "echo s", "statusMessage": "m"}]}
HOOKS = {"PreToolUse": [BASH], "SubagentStop": [STOP], "Notification": [STOP]}


def render(name: str, place: Place | None = None) -> tuple[dict[str, Any], list[str]]:
    rendered = target(extensions.target(name)).render(Given({}, HOOKS, {}, place))
    parts = {
        f"{role}:{'.'.join(p.container)}": p.entries
        for role, found in rendered.files.items()
        for p in found
    }
    return parts, rendered.unsupported


def test_claude_code_writes_the_groups_as_given() -> None:
    parts, notes = render("claude-code")
    assert parts["settings:hooks.PreToolUse"] == {hook_id("PreToolUse", BASH): BASH}
    assert notes == []


def test_gemini_renames_events_tools_and_variables_and_writes_milliseconds() -> None:
    parts, notes = render("gemini")
    group = parts["mcp:hooks.BeforeTool"][hook_id("PreToolUse", BASH)]
    assert group == {
        "hooks": [{"type": "command", "command": "$GEMINI_PROJECT_DIR/a.sh", "timeout": 30000}],
        "matcher": "run_shell_command|replace",
    }
    assert "mcp:hooks.Notification" in parts
    assert notes == [
        "SubagentStop hook 'echo s': Gemini CLI has no SubagentStop event; left out",
        "Notification hook 'echo s': field 'statusMessage' has no Gemini CLI equivalent; left out",
    ]


def test_cursor_writes_one_entry_per_handler_with_its_matcher() -> None:
    parts, notes = render("cursor")
    assert parts["hooks:hooks.preToolUse"] == {
        hook_id("PreToolUse", BASH): {
            "type": "command",
            "command": "$CLAUDE_PROJECT_DIR/a.sh",
            "timeout": 30,
            "matcher": "Shell|Edit",
        }
    }
    assert "Notification hook 'echo s': Cursor has no Notification event; left out" in notes


def test_copilot_keeps_claude_groups_under_its_own_file() -> None:
    parts, notes = render("copilot-cli")
    assert parts["hooks:hooks.PreToolUse"] == {hook_id("PreToolUse", BASH): BASH}
    assert "Notification hook 'echo s': Copilot CLI has no Notification event; left out" in notes


def test_a_handler_type_the_agent_does_not_run_is_reported() -> None:
    http = {"hooks": [{"type": "http", "url": "https://x.example/h"}]}
    rendered = target(extensions.target("codex")).render(Given({}, {"Stop": [http]}, {}))
    assert rendered.files.get("hooks") is None
    assert rendered.unsupported == [
        "Stop hook 'https://x.example/h': Codex runs no 'http' hooks; left out"
    ]


def test_codex_trusts_each_hook_at_its_position_in_the_users_config(tmp_path: Path) -> None:
    place = Place("project", tmp_path / "home", tmp_path / "proj", {})
    hooks_json = tmp_path / "proj" / ".codex" / "hooks.json"
    hooks_json.parent.mkdir(parents=True)
    hooks_json.write_text('{"hooks": {"PreToolUse": [{"hooks": [{"command": "mine"}]}]}}')
    parts, notes = render("codex", place)
    assert parts["hooks:hooks.PreToolUse"] == {hook_id("PreToolUse", BASH): BASH}
    state = parts["trust:hooks.state"]
    assert state[f"{hooks_json}:pre_tool_use:1:0"] == {
        "trusted_hash": hook_hash("PreToolUse", "Bash|Edit", BASH["hooks"][0])
    }
    assert f"{hooks_json}:subagent_stop:0:0" in state
    assert "Notification hook 'echo s': Codex has no Notification event; left out" in notes


def test_codex_hash_is_the_one_codex_reports() -> None:
    # currentHash from `codex app-server` hooks/list (Codex 0.169.0) for these hooks; 0.171.0
    # still trusts the hashes plugman writes (tests/integration/test_agent_hooks.py)
    pre = {"type": "command", "command": "echo pre", "timeout": 30}
    assert hook_hash("PreToolUse", "Bash", pre) == (
        "sha256:212223e3659b01a4a264d8f8f0c73bef2c80234f1dc3bab0020a825b516e04a1"
    )
    two = {"type": "command", "command": "echo two", "statusMessage": "hi"}
    assert hook_hash("PreToolUse", None, two) == (
        "sha256:201f7cbd1a6e89767b5907331a41d9ef6e110e919b0d2cf71cf55bb5a20ea531"
    )


def test_agents_without_hooks_take_none() -> None:
    assert extensions.target("zed").hooks is None


def test_claude_code_2_1_332s_skill_shell_event_and_holds_tools_reach_claude_only() -> None:
    """PreSkillShellCommand (a blocking event: a skill's shell command) and holdsTools (Claude
    goes on without waiting for the hook) as Claude Code 2.1.332 reads them: Claude gets both
    as written; an agent without the event is told it is left out, and one that runs the hook
    gets it without holdsTools (the hook runs the same, waited for), saying so."""
    holds = {"hooks": [{"type": "command", "command": "echo h", "holdsTools": True}]}
    guard = {"hooks": [{"type": "command", "command": "echo g"}], "matcher": "Bash"}
    hooks = {"PreSkillShellCommand": [guard], "UserPromptSubmit": [holds]}
    for name in ("claude-code", "gemini", "codex"):
        rendered = target(extensions.target(name)).render(Given({}, hooks, {}))
        text = json.dumps(
            {role: [p.entries for p in found] for role, found in rendered.files.items()}
        )
        if name == "claude-code":
            assert rendered.unsupported == []
            assert '"holdsTools": true' in text and "echo g" in text
            continue
        agent = {"gemini": "Gemini CLI", "codex": "Codex"}[name]
        assert (
            f"PreSkillShellCommand hook 'echo g': {agent} has no PreSkillShellCommand event; "
            "left out" in rendered.unsupported
        )
        assert "echo g" not in text and "holdsTools" not in text
        assert "echo h" in text or "hooks exec" in text  # the hook itself is delivered
        assert any("'holdsTools'" in note for note in rendered.unsupported), rendered.unsupported

"""Which hooks an event reaches: matcher forms, `if` rules and timeouts
(docs/claude-format.md#hook-matchers, #hook-if-rules-and-timeouts)."""

from __future__ import annotations

from typing import Any

import pytest

from plugman.config.merge import Hook, Origin
from plugman.runtime.hooks.match import if_matches, matcher_value, matches
from plugman.runtime.hooks.run import selected, timeout_of


def tool(name: str, **tool_input: str) -> dict[str, Any]:
    return {"tool_name": name, "tool_input": tool_input, "cwd": "/repo"}


@pytest.mark.parametrize(
    ("matcher", "name", "expected"),
    [
        (None, "Bash", True),
        ("", "Bash", True),
        ("*", "Bash", True),
        ("Bash", "Bash", True),
        ("Bash", "bash", False),  # case-sensitive
        ("Bash", "BashOutput", False),  # a plain matcher is exact, not a prefix
        ("Write|Edit", "Edit", True),
        ("Write|Edit", "NotebookEdit", False),
        ("Write, Edit", "Edit", True),  # commas and spaces (v2.1.191+)
        (" Write | Edit ", "Write", True),
        ("Write,Edit", "Read", False),
        ("my-tool", "my-tool", True),  # hyphens are plain (v2.1.195+)
        ("Edit.*", "NotebookEdit", True),  # a regex is unanchored
        ("^Edit$", "NotebookEdit", False),
        ("Notebook.*", "NotebookEdit", True),
        ("mcp__memory__.*", "mcp__memory__create_entities", True),
        ("mcp__memory__.*", "mcp__github__search", False),
        ("mcp__memory", "mcp__memory__create_entities", False),  # plain: exact, hits nothing
        ("mcp__plugin_notes_notes__.*", "mcp__plugin_notes_notes__search", True),
        ("(?<kind>Edit|Write)", "Write", True),  # JavaScript named group
        ("Edit(", "Edit(", False),  # an invalid regex matches nothing
    ],
)
def test_tool_matchers(matcher: str | None, name: str, expected: bool) -> None:
    assert matches("PreToolUse", matcher, tool(name)) is expected


@pytest.mark.parametrize(
    ("event", "payload", "matcher", "expected"),
    [
        ("SessionStart", {"source": "startup"}, "startup", True),
        ("SessionStart", {"source": "resume"}, "startup", False),
        ("SessionStart", {"source": "compact"}, "startup|compact", True),
        ("Notification", {"notification_type": "idle_prompt"}, "idle_prompt", True),
        ("Notification", {"notification_type": "auth_success"}, "idle_prompt", False),
        ("PreCompact", {"trigger": "manual"}, "auto", False),
        ("PostCompact", {"trigger": "auto"}, "auto", True),
        ("SubagentStop", {"agent_type": "plugin:reviewer"}, "plugin:.*", True),
        ("SubagentStart", {"agent_type": "Explore"}, "Plan", False),
        ("Setup", {"trigger": "init"}, "init", True),
        ("UserPromptExpansion", {"command_name": "deploy"}, "deploy", True),
        ("ConfigChange", {"source": "skills"}, "user_settings", False),
        ("InstructionsLoaded", {"load_reason": "include"}, "include|compact", True),
        ("SessionEnd", {"reason": "logout"}, "logout", True),
        ("Elicitation", {"mcp_server_name": "github"}, "git.*", True),
        ("StopFailure", {"error_type": "rate_limit"}, "rate_limit|overloaded", True),
        ("FileChanged", {"file_path": "/repo/.envrc"}, ".envrc|.env", True),  # literal names
        ("FileChanged", {"file_path": "/repo/xenvrc"}, ".envrc", False),  # not a regex
        ("PostToolUse", {}, "Write", False),  # no tool_name: a matcher cannot match
    ],
)
def test_matcher_fields(event: str, payload: dict[str, Any], matcher: str, expected: bool) -> None:
    assert matches(event, matcher, payload) is expected


@pytest.mark.parametrize(
    "event", ["UserPromptSubmit", "Stop", "TaskCompleted", "CwdChanged", "SomeFutureEvent"]
)
def test_events_without_matchers_ignore_it(event: str) -> None:
    assert matches(event, "NothingLikeThis", {"tool_name": "Bash"})


def test_matcher_value_of_file_changed_is_the_name() -> None:
    assert matcher_value("FileChanged", {"file_path": "/a/b/.env"}) == ".env"
    assert matcher_value("PreToolUse", {"tool_name": 3}) is None


@pytest.mark.parametrize(
    ("rule", "payload", "expected"),
    [
        ("Bash", tool("Bash", command="anything"), True),
        ("Bash(git *)", tool("Bash", command="git status"), True),
        ("Bash(git *)", tool("Bash", command="git"), True),
        ("Bash(git *)", tool("Bash", command="gitk --all"), False),
        ("Bash(git *)", tool("Bash", command="echo git"), False),
        ("Bash(npm run test*)", tool("Bash", command="npm run test:unit"), True),
        ("Bash(git commit:*)", tool("Bash", command="git commit -m x"), True),  # legacy prefix
        ("Bash(git commit:*)", tool("Bash", command="git commit"), True),
        ("Bash(git commit:*)", tool("Bash", command="git commitx"), False),
        ("Bash(git *)", tool("Edit", file_path="git x"), False),  # another tool
        ("Edit(*.py)", tool("Edit", file_path="/repo/src/a.py"), True),
        ("Edit(src/*)", tool("Edit", file_path="/repo/src/a.py"), True),  # relative to cwd
        ("Edit(src/*)", tool("Edit", file_path="/elsewhere/src/a.py"), False),
        ("Write(*.md)", tool("Write", file_path="/repo/README.md"), True),
        ("Read(*.env)", tool("Read", file_path="/repo/.env"), True),
        ("Read(*.env)", tool("Read", file_path="/repo/env.txt"), False),
        ("mcp__memory__*", tool("mcp__memory__create"), True),
        ("Bash(", tool("Bash", command="x"), False),  # unreadable: never matches
        ("Bash(*)", tool("Bash", command="x"), True),
        ("Task(x*)", tool("Task", prompt="xyz"), False),  # no primary input known
    ],
)
def test_if_rules(rule: str, payload: dict[str, Any], expected: bool) -> None:
    assert if_matches("PreToolUse", rule, payload) is expected


def test_if_never_runs_outside_tool_events() -> None:
    assert not if_matches("UserPromptSubmit", "Bash", {"tool_name": "Bash"})
    assert not if_matches("PreToolUse", 42, tool("Bash", command="x"))


def hook(event: str, matcher: str | None = None, **handler: Any) -> Hook:
    return Hook(
        event, matcher, {"type": "command", "command": "true", **handler}, Origin("user", "f")
    )


def test_selected_checks_event_matcher_and_if() -> None:
    bash = tool("Bash", command="git push")
    assert selected(hook("PreToolUse", "Bash", **{"if": "Bash(git *)"}), "PreToolUse", bash)
    assert not selected(hook("PreToolUse", "Bash", **{"if": "Bash(npm *)"}), "PreToolUse", bash)
    assert not selected(hook("PostToolUse", "Bash"), "PreToolUse", bash)
    assert not selected(hook("Stop", None, **{"if": "Bash"}), "Stop", {})
    assert selected(hook("Stop", "ignored"), "Stop", {})


@pytest.mark.parametrize(
    ("handler", "event", "seconds"),
    [
        ({"type": "command"}, "PreToolUse", 600),
        ({"type": "command", "timeout": 5}, "PreToolUse", 5),
        ({"type": "command"}, "UserPromptSubmit", 30),
        ({"type": "command", "timeout": 45}, "UserPromptSubmit", 45),
        ({"type": "http"}, "Stop", 600),
        ({"type": "command"}, "MessageDisplay", 10),
        ({"type": "command"}, "SessionEnd", 1.5),
        ({"type": "command", "timeout": 300}, "SessionEnd", 60),
        ({"type": "command", "timeout": True}, "Stop", 600),
    ],
)
def test_timeouts(handler: dict[str, Any], event: str, seconds: float) -> None:
    assert timeout_of(handler, event) == seconds

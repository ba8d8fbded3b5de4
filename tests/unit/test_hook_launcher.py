"""The hook launcher (plugman.runtime.launch.hook, `plugman hooks exec`): matching on each agent's
event JSON, the "never wider" rule over the handler fields, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from plugman import extensions
from plugman.agents.targets import Given, Place
from plugman.agents.targets import target as renderer
from plugman.agents.targets.hooks import MARK
from plugman.agents.targets.table import SPECS
from plugman.config.merge import Hook, Origin
from plugman.core.paths import Paths
from plugman.runtime.launch import hook as hook_exec

# Each agent's PostToolUse JSON for one shell command, as it sends it: captured from real runs
# of Codex 0.169 (`codex exec`), Gemini CLI 0.61 (AfterTool, its own tool names) and Copilot
# CLI 1.0.102 (a PascalCase event: Claude's shape); Cursor's (`Shell`) from its docs.
SHELL = {
    "codex": {
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git commit -m x"},
        "tool_response": "",
        "tool_use_id": "call_1",
        "permission_mode": "bypassPermissions",
    },
    "gemini": {
        "hook_event_name": "AfterTool",
        "timestamp": "2026-11-25T16:29:06.480Z",
        "tool_name": "run_shell_command",
        "tool_input": {"command": "git commit -m x"},
        "tool_response": {"llmContent": "Output: (empty)", "returnDisplay": ""},
    },
    "cursor": {
        "hook_event_name": "postToolUse",
        "tool_name": "Shell",
        "tool_input": {"command": "git commit -m x"},
    },
    "copilot": {
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git commit -m x", "description": "run"},
        "tool_result": {"result_type": "success", "text_result_for_llm": ""},
    },
}
PLUGIN = Origin("plugin", "/store/abc", "guard@m")
# each agent's tool renames by its launcher word, as its spec has them
TOOLS = {s.hooks.launcher: s.hooks.tools for s in SPECS if s.hooks and s.hooks.launcher}


def hook(handler: dict[str, Any], matcher: str | None = "Bash") -> Hook:
    return Hook("PostToolUse", matcher, {"type": "command", **handler}, PLUGIN)


def run(agent: str, found: Hook, payload: dict[str, Any], tmp_path: Path) -> Any:
    event = hook_exec.claude_payload(TOOLS[agent], "PostToolUse", payload)
    return hook_exec.launch(
        found,
        "PostToolUse",
        event,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        project_dir=tmp_path,
    )


@pytest.mark.parametrize("agent", sorted(SHELL))
def test_each_agents_shell_call_is_matched_as_claude_matches_it(agent: str, tmp_path: Path) -> None:
    commit = hook({"command": "echo ran; cat", "if": "Bash(git commit:*)"})
    raw = run(agent, commit, SHELL[agent], tmp_path)
    assert raw.exit_code == 0 and raw.stdout.startswith("ran\n")
    given = json.loads(raw.stdout.split("\n", 1)[1])  # what the handler read: Claude's shape
    assert given["tool_name"] == "Bash" and given["hook_event_name"] == "PostToolUse"
    push = hook({"command": "echo ran", "if": "Bash(git push:*)"})
    assert run(agent, push, SHELL[agent], tmp_path).stdout == ""
    other = {**SHELL[agent], "tool_input": {"command": "echo git commit"}}
    assert run(agent, commit, other, tmp_path).skipped == "not selected"
    edit = hook({"command": "echo ran"}, matcher="Edit|Write")
    assert run(agent, edit, SHELL[agent], tmp_path).skipped == "not selected"


def test_the_handler_gets_the_plugins_environment_and_its_exit_code_passes(tmp_path: Path) -> None:
    found = hook({"command": 'echo "$CLAUDE_PLUGIN_ROOT" >&2; exit 2'})
    raw = run("codex", found, SHELL["codex"], tmp_path)
    assert (raw.exit_code, raw.stderr) == (2, "/store/abc\n")
    assert hook_exec.exit_code(raw) == 2  # blocks in the agent, as the handler meant


def test_a_handler_that_times_out_is_a_non_blocking_error(tmp_path: Path) -> None:
    raw = run("codex", hook({"command": "sleep 5", "timeout": 0.3}), SHELL["codex"], tmp_path)
    assert raw.timed_out and hook_exec.exit_code(raw) == 1
    assert "timed out" in hook_exec.failure(raw)


def test_an_async_handler_is_started_and_not_awaited(tmp_path: Path) -> None:
    marker = tmp_path / "done"
    found = hook({"command": f"sleep 0.3; cat > {marker}", "async": True})
    raw = run("codex", found, SHELL["codex"], tmp_path)
    assert raw.exit_code == 0 and raw.stdout == "" and not marker.exists()
    for _ in range(50):
        if marker.exists() and marker.read_text():
            break
        subprocess.run(["sleep", "0.1"], check=True)
    assert json.loads(marker.read_text())["tool_name"] == "Bash"


def test_ids_count_per_owner_and_event_and_are_found_again() -> None:
    own = Origin("user", "/u/plugman.toml")
    hooks = [
        hook({"command": "a"}),
        Hook("PostToolUse", None, {"command": "b"}, own),
        hook({"command": "c"}),
        Hook("Stop", None, {"command": "d"}, PLUGIN),
    ]
    ids = [str(r) for r in hook_exec.refs(hooks).values()]
    assert ids == ["guard@m#0", "user#0", "guard@m#1", "guard@m#0"]
    assert hook_exec.find(hooks, "PostToolUse", hook_exec.parse_ref("guard@m#1")) is hooks[2]
    assert hook_exec.find(hooks, "Stop", hook_exec.parse_ref("guard@m#0")) is hooks[3]


# --- never wider: every handler field, for every agent with a launcher -------------------

LAUNCHERS = {"codex": "codex", "gemini": "gemini", "cursor": "cursor", "copilot-cli": "copilot"}
# A field → what each of those agents gets: "launched" (the launcher delivers it exactly),
# "out" (the handler is left out, one note), "as given" (the agent takes it itself).
FIELDS: dict[str, tuple[Any, str]] = {
    "if": ("Bash(git commit:*)", "launched"),
    "async": (True, "launched"),
    "shell": ("bash", "launched"),
    "args": (["x"], "launched"),
    "asyncRewake": (True, "out"),
    "rewakeMessage": ("woke", "out"),
    "once": (True, "out"),
    "onFailure": ("block", "out"),
    "somethingNew": (1, "out"),
}


def rendered(target: str, group: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    place = Place("project", Path("/h"), Path("/p"), {})
    out = renderer(extensions.target(target)).render(Given({}, {"PostToolUse": [group]}, {}, place))
    handlers = [
        h
        for parts in out.files.values()
        for part in parts
        if part.listed
        for entry in part.entries.values()
        for h in (entry.get("hooks", [entry]) if isinstance(entry, dict) else [])
    ]
    return handlers, out.unsupported


@pytest.mark.parametrize("target", sorted(LAUNCHERS))
@pytest.mark.parametrize("field", sorted(FIELDS))
@pytest.mark.parametrize("plugin", [True, False])
def test_no_field_is_dropped_in_a_way_that_widens_what_runs(
    target: str, field: str, plugin: bool
) -> None:
    value, outcome = FIELDS[field]
    handler = {"type": "command", "command": "check.sh", field: value}
    group = {"matcher": "Bash", "hooks": [handler], MARK: {"id": "o#0", "plugin": plugin}}
    handlers, notes = rendered(target, group)
    if outcome == "out":
        assert handlers == [] and len(notes) == 1 and repr(field) in notes[0], notes
        return
    agent = LAUNCHERS[target]
    assert len(handlers) == 1 and notes == [], notes
    if (target, field, plugin) == ("codex", "async", False):  # Codex runs `async` itself
        assert handlers == [handler]
        return
    assert handlers[0]["command"] == f"plugman hooks exec {agent} PostToolUse 'o#0'"
    assert field not in handlers[0] and "check.sh" not in json.dumps(handlers)


DIRECT = {"codex", "copilot-cli"}  # HookSpelling.direct


@pytest.mark.parametrize("target", sorted(DIRECT))
@pytest.mark.parametrize(
    ("matcher", "extra", "mark"),
    [
        ("Bash", {}, {}),  # a matcher the agent may read in another dialect
        (None, {"if": "Bash(git *)"}, {}),
        (None, {"async": True}, {}),
        (None, {}, {"approval": True}),
        (None, {}, {"plugin": False}),
    ],
)
def test_the_direct_form_only_where_the_launcher_would_translate_nothing(
    target: str, matcher: str | None, extra: dict[str, object], mark: dict[str, object]
) -> None:
    handler = {"type": "command", "command": "check.sh", **extra}
    group: dict[str, object] = {"hooks": [handler], MARK: {"id": "p@m#3", "plugin": True, **mark}}
    if matcher:
        group["matcher"] = matcher
    launched, _ = rendered(target, group)
    assert not launched or not launched[0]["command"].startswith("plugman-hook"), launched


@pytest.mark.parametrize("target", sorted(LAUNCHERS))
def test_a_plugins_plain_handler_is_launched_and_an_own_one_written_as_given(target: str) -> None:
    handler = {"type": "command", "command": "check.sh", "timeout": 7}
    launched, _ = rendered(target, {"hooks": [handler], MARK: {"id": "p@m#3", "plugin": True}})
    # an agent sending Claude's own event JSON gets the direct form (nothing to translate)
    head = "plugman-hook" if target in DIRECT else "plugman hooks exec"
    assert launched[0]["command"] == f"{head} {LAUNCHERS[target]} PostToolUse 'p@m#3'"
    scale = 1000 if target == "gemini" else 1
    assert launched[0]["timeout"] == (7 + hook_exec.LAUNCH_MARGIN) * scale
    own, _ = rendered(target, {"hooks": [handler], MARK: {"id": "user#0", "plugin": False}})
    assert own[0]["command"] == "check.sh"


def test_claude_code_keeps_every_field_and_no_launcher() -> None:
    handler = {"type": "command", "command": "c", "if": "Bash(x)", "asyncRewake": True}
    group = {"matcher": "Bash", "hooks": [handler], MARK: {"id": "p@m#0", "plugin": True}}
    out = renderer(extensions.target("claude-code")).render(
        Given({}, {"PostToolUse": [group]}, {}, None)
    )
    written = [e for p in out.files["settings"] for e in p.entries.values()]
    assert written == [{"matcher": "Bash", "hooks": [handler]}] and out.unsupported == []


# --- bad input: a clear error, exit 1 (never 2, which would block the agent) -------------


def launcher(project: Path, *args: str, stdin: str = "{}") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plugman", "hooks", "exec", *args],
        cwd=project,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "p"
    folder.mkdir()
    user = Paths.from_env(project=folder).user_config
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(
        '[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "echo stopped"\n'
    )
    return folder


def test_the_launcher_runs_an_own_hook_by_its_id(project: Path) -> None:
    done = launcher(project, "codex", "Stop", "user#0")
    assert (done.returncode, done.stdout) == (0, "stopped\n")


@pytest.mark.parametrize(
    ("args", "stdin", "said"),
    [
        (("codex", "Stop", "user#7"), "{}", "no Stop hook user#7"),
        (("codex", "Stop", "user"), "{}", "not a hook id"),
        (("codex", "Stop", "user#0"), "{not json", "the event JSON on stdin is invalid"),
        (("codex", "Stop", "user#0"), "[1]", "must be an object, not list"),
        (("claude", "Stop", "user#0"), "{}", "unknown agent 'claude'"),
        (("codex", "stop", "user#0"), "{}", "unknown hook event 'stop'"),
        (("codex",), "{}", "takes AGENT EVENT HOOK-ID"),
    ],
)
def test_bad_input_is_a_clear_non_blocking_error(
    project: Path, args: tuple[str, ...], stdin: str, said: str
) -> None:
    done = launcher(project, *args, stdin=stdin)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("error: ") and said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_a_user_file_names_the_dispatcher_beside_this_interpreter_where_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The direct form in a user file is the dispatcher by its path beside `sys.executable`
    (the wheel's shared script); where this install has none, the launcher as before."""
    from plugman.agents.targets.hooks import launcher

    monkeypatch.setattr(sys, "executable", str(tmp_path / "bin" / "python"))
    (tmp_path / "bin").mkdir()
    before = launcher("user", "codex", "Stop", "p@m#0", fast=True)
    assert before == f"{tmp_path}/bin/python -m plugman hooks exec codex Stop 'p@m#0'"
    (tmp_path / "bin" / "plugman-hook").write_text("#!/bin/sh\n")
    assert launcher("user", "codex", "Stop", "p@m#0", fast=True) == (
        f"{tmp_path}/bin/plugman-hook codex Stop 'p@m#0'"
    )
    assert (
        launcher("project", "codex", "Stop", "p@m#0", fast=True)
        == "plugman-hook codex Stop 'p@m#0'"
    )
    assert launcher("project", "codex", "Stop", "p@m#0") == "plugman hooks exec codex Stop 'p@m#0'"

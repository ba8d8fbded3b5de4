"""Running hooks for real: subprocesses, process groups, an HTTP server, and the CLI."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from plugman.cli import invoke
from plugman.cli.runner import Result
from plugman.config.merge import Hook, Origin
from plugman.runtime.hooks.run import HookRun, run_hooks
from tests.conftest import SAMPLES
from tests.integration.helpers import run

GUARDRAILS = SAMPLES / "plugins" / "guardrails"
USER = Origin("user", "/home/me/.config/plugman/plugman.toml")


def command(text: str, event: str = "PreToolUse", matcher: str | None = None, **more: Any) -> Hook:
    return Hook(event, matcher, {"type": "command", "command": text, **more}, USER)


def says(tmp_path: Path, data: dict[str, Any], exit_code: int = 0) -> str:
    """A shell command that prints `data` as JSON and exits with `exit_code`."""
    file = tmp_path / f"out-{len(list(tmp_path.glob('out-*')))}.json"
    file.write_text(json.dumps(data))
    return f"cat '{file}'; exit {exit_code}"


def decide(tmp_path: Path, decision: str, reason: str = "") -> Hook:
    output = {"hookEventName": "PreToolUse", "permissionDecision": decision}
    if reason:
        output["permissionDecisionReason"] = reason
    return command(says(tmp_path, {"hookSpecificOutput": output}))


def fire(hooks: list[Hook], tmp_path: Path, event: str = "PreToolUse", **payload: Any) -> HookRun:
    payload = payload or {"tool_name": "Bash", "tool_input": {"command": "ls"}}
    return run_hooks(
        event, payload, hooks, cwd=tmp_path, env=dict(os.environ), project_dir=tmp_path
    )


def bash(cmd: str) -> dict[str, Any]:
    return {"tool_name": "Bash", "tool_input": {"command": cmd}}


def test_guardrails_script_blocks_rm_rf_root(tmp_path: Path) -> None:
    script = command(f"python3 '{GUARDRAILS}/hooks/block_dangerous.py'", matcher="Bash")
    blocked = fire([script], tmp_path, **bash("rm -rf /"))
    assert blocked.blocked and blocked.decision == "deny"
    assert blocked.reason and "guardrails: blocked `rm -rf /`" in blocked.reason
    assert blocked.results[0].exit_code == 2
    harmless = fire([script], tmp_path, **bash("rm -rf /tmp/x"))
    assert not harmless.blocked and harmless.decision is None
    assert harmless.results[0].exit_code == 0


@pytest.mark.parametrize(
    ("decisions", "winner"),
    [
        (["allow", "ask", "defer", "deny"], "deny"),
        (["allow", "defer", "ask"], "defer"),
        (["ask", "allow"], "ask"),
        (["allow", "allow"], "allow"),
    ],
)
def test_permission_precedence(tmp_path: Path, decisions: list[str], winner: str) -> None:
    hooks = [decide(tmp_path, d, f"{d} #{i}") for i, d in enumerate(decisions)]
    found = fire(hooks, tmp_path)
    assert found.decision == winner
    assert found.reason == "\n".join(f"{d} #{i}" for i, d in enumerate(decisions) if d == winner)
    assert found.blocked is (winner == "deny")


def test_exit_2_beats_json_allow_and_json_reason_wins(tmp_path: Path) -> None:
    output = {"permissionDecision": "allow", "hookEventName": "PreToolUse"}
    both = command(says(tmp_path, {"hookSpecificOutput": output}, 2))
    found = fire([both], tmp_path)
    assert found.decision == "deny"
    reasoned = {"decision": "block", "reason": "json says no"}
    found = fire([command(says(tmp_path, reasoned, 2))], tmp_path)
    assert (found.decision, found.reason) == ("deny", "json says no")  # legacy block -> deny


def test_continue_false_wins(tmp_path: Path) -> None:
    stop = {"continue": False, "stopReason": "enough", "systemMessage": "bye"}
    found = fire([decide(tmp_path, "allow"), command(says(tmp_path, stop))], tmp_path)
    assert not found.continue_ and found.stop_reason == "enough"
    assert found.decision == "allow" and found.system_messages == ["bye"]


def test_exit_1_does_not_block(tmp_path: Path) -> None:
    found = fire([command("echo 'first line' >&2; echo second >&2; exit 1")], tmp_path)
    assert not found.blocked and found.decision is None
    assert found.results[0].note == "hook error (exit 1, non-blocking): first line"


def test_exit_2_blocks_only_blockable_events(tmp_path: Path) -> None:
    fails = command("echo stop it >&2; exit 2", event="Stop")
    assert fire([fails], tmp_path, "Stop", session_id="s").decision == "block"
    late = command("echo too late >&2; exit 2", event="PostToolUse")
    found = fire([late], tmp_path, "PostToolUse", tool_name="Bash")
    assert not found.blocked and found.additional_context == ["too late"]
    note = command("exit 2", event="Notification")
    assert not fire([note], tmp_path, "Notification", notification_type="x").blocked


def test_timeout_kills_the_process_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    slow = command(f"sleep 30 & echo $! > '{pids}'; wait", timeout=1)
    started = time.monotonic()
    found = fire([slow], tmp_path)
    assert time.monotonic() - started < 3
    result = found.results[0]
    assert result.timed_out and result.exit_code is None and found.decision is None
    sleeper = int(pids.read_text())
    stat = Path(f"/proc/{sleeper}/stat")
    assert not stat.exists() or stat.read_text().split(") ")[1].startswith("Z")


def test_hooks_run_in_parallel(tmp_path: Path) -> None:
    started = time.monotonic()
    found = fire([command(f"sleep 1; echo {i}") for i in range(3)], tmp_path)
    assert time.monotonic() - started < 2.5
    assert [r.exit_code for r in found.results] == [0, 0, 0]


def test_plain_text_is_context_for_prompt_events_only(tmp_path: Path) -> None:
    hello = [command("echo remember this", event=e) for e in ("UserPromptSubmit", "PreToolUse")]
    prompt = fire(hello, tmp_path, "UserPromptSubmit", prompt="hi")
    assert prompt.additional_context == ["remember this"]
    assert fire(hello, tmp_path).additional_context == []


def test_json_context_updated_input_and_cap(tmp_path: Path) -> None:
    output = {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": {"command": "ls -la"},
        "additionalContext": "x" * 20_000,
    }
    found = fire([command(says(tmp_path, {"hookSpecificOutput": output}))], tmp_path)
    assert found.updated_input == {"command": "ls -la"}
    assert len(found.additional_context[0]) < 10_100
    assert found.additional_context[0].endswith("[10000 more characters cut]")


def test_wrong_hook_event_name_is_ignored(tmp_path: Path) -> None:
    output = {"hookEventName": "PostToolUse", "permissionDecision": "deny"}
    found = fire([command(says(tmp_path, {"hookSpecificOutput": output}))], tmp_path)
    assert found.decision is None and "hookEventName" in str(found.results[0].note)


def test_environment_stdin_and_exec_form(tmp_path: Path) -> None:
    plugin = Hook(
        "PreToolUse",
        None,
        {"type": "command", "command": "sh", "args": ["-c", 'cat; echo "|$CLAUDE_PLUGIN_ROOT"']},
        Origin("plugin", str(tmp_path / "store" / "abc"), "p@m"),
    )
    project = command('echo "$CLAUDE_PROJECT_DIR|$CLAUDE_PLUGIN_ROOT|$(pwd)"')
    found = fire([plugin, project], tmp_path, **bash("ls"))
    payload, root_dir = found.results[0].stdout.rsplit("|", 1)
    assert json.loads(payload)["hook_event_name"] == "PreToolUse"
    assert json.loads(payload)["cwd"] == str(tmp_path)
    assert root_dir.strip() == str(tmp_path / "store" / "abc")
    assert found.results[1].stdout.strip() == f"{tmp_path}||{tmp_path}"


def test_if_rules_select_handlers(tmp_path: Path) -> None:
    git = command("echo git", **{"if": "Bash(git *)"})
    npm = command("echo npm", **{"if": "Bash(npm *)"})
    found = fire([git, npm], tmp_path, **bash("git status"))
    assert [r.stdout.strip() for r in found.results] == ["git"]


def test_model_and_mcp_handlers_are_reported_skipped(tmp_path: Path) -> None:
    hooks = [
        Hook("Stop", None, {"type": kind, "prompt": "check"}, USER)
        for kind in ("prompt", "agent", "mcp_tool")
    ]
    found = fire(hooks, tmp_path, "Stop", session_id="s")
    assert [r.skipped for r in found.results] == [
        f"skipped: plugman cannot run {kind} hooks" for kind in ("prompt", "agent", "mcp_tool")
    ]
    assert found.decision is None


class Recorder(BaseHTTPRequestHandler):
    seen: list[tuple[str, dict[str, str], dict[str, Any]]] = []  # noqa: RUF012

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        body = json.loads(self.rfile.read(length))
        Recorder.seen.append((self.path, dict(self.headers), body))
        status, reply = {
            "/deny": (
                200,
                {
                    "hookSpecificOutput": {
                        "hookEventName": "PreToolUse",
                        "permissionDecision": "deny",
                        "permissionDecisionReason": "http says no",
                    }
                },
            ),
            "/broken": (500, {"decision": "block", "reason": "ignored"}),
        }[self.path]
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = HTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def http(url: str, **more: Any) -> Hook:
    return Hook("PreToolUse", "Bash", {"type": "http", "url": url, **more}, USER)


def test_http_handler(server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOK_TOKEN", "t0k")
    monkeypatch.setenv("OTHER_SECRET", "leak")
    headers = {"Authorization": "Bearer ${HOOK_TOKEN}", "X-Other": "[$OTHER_SECRET]"}
    denying = http(f"{server}/deny", headers=headers, allowedEnvVars=["HOOK_TOKEN"])
    found = fire([denying, http(f"{server}/broken")], tmp_path, **bash("ls"))
    assert (found.decision, found.reason) == ("deny", "http says no")
    assert [r.status for r in found.results] == [200, 500]
    assert found.results[1].note == "HTTP 500"
    seen = {path: (sent, body) for path, sent, body in Recorder.seen}
    sent, body = seen["/deny"]
    assert sent["Authorization"] == "Bearer t0k" and sent["X-Other"] == "[]"
    assert body["hook_event_name"] == "PreToolUse" and body["tool_input"] == {"command": "ls"}


def test_http_failures_do_not_block(tmp_path: Path) -> None:
    found = fire([http("http://127.0.0.1:9/nothing", timeout=2)], tmp_path, **bash("ls"))
    assert not found.blocked and found.results[0].note
    assert str(found.results[0].note).startswith("request failed")


# The CLI, with the sample guardrails plugin installed through the real commands.


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    run("marketplace", "add", str(SAMPLES), project=folder)
    run("install", "guardrails", project=folder)
    return folder


def cli(project: Path, *args: str, stdin: str = "") -> Result:
    return invoke(["--project", str(project), "hooks", *args], input=stdin)


def test_cli_lists_guardrails_hooks(project: Path) -> None:
    found = json.loads(cli(project, "list", "--json").stdout)
    events = [(h["event"], h["matcher"]) for h in found["hooks"]]
    assert ("PreToolUse", "Bash") in events and ("SessionStart", "startup") in events
    assert {h["origin"]["plugin"] for h in found["hooks"]} == {"guardrails@plugman-samples"}
    assert "block_dangerous.py" in cli(project, "list").stdout


def test_cli_blocks_rm_rf_root(project: Path) -> None:
    result = cli(project, "run", "PreToolUse", stdin=json.dumps(bash("rm -rf /")))
    assert result.exit_code == 2
    assert result.stderr.startswith("guardrails: blocked `rm -rf /`")
    assert "decision: deny" in result.stdout
    allowed = cli(project, "run", "PreToolUse", "--json", stdin=json.dumps(bash("ls -la")))
    assert allowed.exit_code == 0, allowed.output
    doc = json.loads(allowed.stdout)
    assert doc["command"] == "hooks run" and doc["decision"] is None
    assert doc["results"][0]["exit_code"] == 0


def test_cli_prompt_session_and_logging(project: Path, isolated_home: Path) -> None:
    key = {"prompt": "my key is AKIAABCDEFGHIJKLMNOP"}
    result = cli(project, "run", "UserPromptSubmit", stdin=json.dumps(key))
    assert result.exit_code == 2 and "AWS access key" in result.stderr
    started = cli(project, "run", "SessionStart", "--json", stdin='{"source": "startup"}')
    assert "guardrails plugin is active" in json.loads(started.stdout)["additional_context"][0]
    resumed = json.loads(cli(project, "run", "SessionStart", "--json", stdin="{}").stdout)
    assert resumed["results"] == []
    edit = {"tool_name": "Edit", "tool_input": {"file_path": "a.py"}, "session_id": "s1"}
    assert cli(project, "run", "PostToolUse", stdin=json.dumps(edit)).exit_code == 0
    log = isolated_home / "data" / "plugins" / "guardrails-plugman-samples" / "activity.jsonl"
    assert json.loads(log.read_text())["file"] == "a.py"


def test_cli_rejects_invalid_json(project: Path) -> None:
    result = cli(project, "run", "PreToolUse", stdin='{"tool_name": }')
    assert result.exit_code == 2
    assert "invalid: Expecting value at line 1 column 15" in result.stderr
    assert "must be an object" in cli(project, "run", "Stop", stdin="[1]").stderr


def test_cli_settings_hooks_and_pending_project_hooks(project: Path, isolated_home: Path) -> None:
    said = says(project.parent, {"continue": False, "stopReason": "done for today"})
    stop = f'[[hooks.Stop]]\nhooks = [{{ type = "command", command = "{said}" }}]\n'
    (isolated_home / "config").mkdir(exist_ok=True)
    (isolated_home / "config" / "plugman.toml").write_text(stop)
    (project / "plugman.toml").write_text(stop.replace("cat", "echo"))
    listed = json.loads(cli(project, "list", "--json").stdout)
    assert [d["reason"] for d in listed["dropped"]] == ["pending-approval"]
    assert "dropped Stop:* (project): run: plugman trust approve" in cli(project, "list").stdout
    result = cli(project, "run", "Stop", stdin='{"session_id": "s"}')
    assert result.exit_code == 2 and result.stderr.strip() == "done for today"
    assert "stop: done for today" in result.stdout

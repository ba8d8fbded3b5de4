"""The hook launcher's three paths give the same result (issue 36): the full launcher
(`plugman hooks exec` with PLUGMAN_NO_PLANS=1: resolve, find, match, run), the plan path (the
same command reading the hook's JSON plan: plugman.cli.fast_launch) and, for a hook with nothing
to translate, the direct form (`plugman-hook`: its sh plan execs the handler) write byte for byte
the same stdout and stderr and exit with the same code, for the reference's cases (issue 36's
note, 1.5): Codex, Gemini (its tool names renamed back), Cursor and Copilot; no matcher, a list
and a regex matcher; an `if` rule that admits and one that refuses; the plugin's environment
and the event's `cwd` (a subfolder of the project); a 1-s timeout; exit codes 0, 1, 2 and 3.
PLUGMAN_LAUNCH_TRACE proves which path each call took.

The handler prints the event JSON it got, the plugin's variables and its working folder, writes
a line on stderr and exits with the code it is given. The event each call sends is already in
the launcher's form (json.dumps, `hook_event_name` and `cwd` set), as Codex and Copilot send it:
the direct form passes the agent's bytes through, the launcher re-encodes them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.integration.test_export import cli

HANDLER = (
    'in=$(cat)\nprintf "%s\\n" "$in"\n'
    'echo "$1 root=${CLAUDE_PLUGIN_ROOT##*/} data=${CLAUDE_PLUGIN_DATA##*/}'
    ' project=$CLAUDE_PROJECT_DIR pwd=$(pwd)"\n'
    'echo "said on stderr by $1" >&2\nexit "$2"\n'
)


def handler(name: str, code: int = 0, **more: object) -> dict[str, object]:
    return {
        "type": "command",
        "command": f'sh "${{CLAUDE_PLUGIN_ROOT}}/h.sh" {name} {code}',
        **more,
    }


# PostToolUse groups, in order: the hook ids are parity@parities#0.. in this order
GROUPS = [
    {"hooks": [handler("plain", 0), handler("one", 1), handler("two", 2), handler("three", 3)]},
    {"matcher": "Bash|Edit", "hooks": [handler("list")]},
    {"matcher": "Ba.*h", "hooks": [handler("regex")]},
    {
        "matcher": "Bash",
        "hooks": [
            handler("admitted", **{"if": "Bash(git commit:*)"}),
            handler("refused", **{"if": "Bash(npm *)"}),
            {"type": "command", "command": "sleep 5", "timeout": 1},
        ],
    },
]
DIRECT = range(4)  # no matcher, no `if`: the direct form for Codex and Copilot


class Agent(NamedTuple):
    word: str  # `hooks exec AGENT`
    bash: str  # its name of Claude's Bash tool


AGENTS = [
    Agent("codex", "Bash"),
    Agent("copilot", "Bash"),
    Agent("gemini", "run_shell_command"),
    Agent("cursor", "Shell"),
]


def parity_market(root: Path) -> Path:
    plugin = root / "parity"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / "hooks").mkdir()
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "parity", "version": "1"}')
    (plugin / "h.sh").write_text(HANDLER)
    (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"PostToolUse": GROUPS}}))
    catalog = {
        "name": "parities",
        "owner": {"name": "t"},
        "plugins": [{"name": "parity", "source": "./parity"}],
    }
    (root / ".claude-plugin").mkdir()
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    return root


def event(agent: Agent, cwd: Path) -> str:
    return json.dumps(
        {
            "session_id": "s1",
            "hook_event_name": "PostToolUse",
            "tool_name": agent.bash,
            "tool_input": {"command": "git commit -m 'x'"},
            "tool_response": {"ok": True},
            "cwd": str(cwd),
        }
    )


class Result(NamedTuple):
    code: int
    out: str
    err: str
    path: str  # the path PLUGMAN_LAUNCH_TRACE says it took


def launch(argv: list[str], cwd: Path, stdin: str, trace: Path, **env: str) -> Result:
    bin_dir = str(Path(sys.executable).parent)
    full = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PLUGMAN_LAUNCH_TRACE": str(trace),
        **env,
    }
    done = subprocess.run(
        argv, cwd=cwd, input=stdin, capture_output=True, text=True, env=full, timeout=60
    )
    lines = trace.read_text().splitlines() if trace.exists() else []
    trace.unlink(missing_ok=True)
    return Result(done.returncode, done.stdout, done.stderr, lines[-1].split()[0] if lines else "")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    found = tmp_path / "project"
    (found / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=found, check=True)
    cli(found, "marketplace", "add", str(parity_market(tmp_path / "market")))
    cli(found, "install", "parity", "--scope", "user")
    return found


def test_the_full_launcher_the_plan_and_the_direct_form_say_the_same(
    project: Path, tmp_path: Path
) -> None:
    trace, cwd = tmp_path / "trace", project / "sub"
    ids = sum(len(group["hooks"]) for group in GROUPS)  # type: ignore[misc,arg-type]
    calls = [(agent, n) for agent in AGENTS for n in range(ids)]
    full: dict[tuple[str, int], Result] = {}
    for agent, n in calls:
        argv = ["plugman", "hooks", "exec", agent.word, "PostToolUse", f"parity@parities#{n}"]
        full[agent.word, n] = launch(argv, cwd, event(agent, cwd), trace, PLUGMAN_NO_PLANS="1")
        assert full[agent.word, n].path == "full"
        launch(argv, cwd, event(agent, cwd), trace)  # a miss: writes the plan
    time.sleep(2.1)  # the sh plans are written once the files they watch are 2 s old
    for agent, n in calls:
        argv = ["plugman", "hooks", "exec", agent.word, "PostToolUse", f"parity@parities#{n}"]
        planned = launch(argv, cwd, event(agent, cwd), trace)
        assert planned.path == "plan", (agent, n, planned)
        assert planned[:3] == full[agent.word, n][:3], (agent, n)
    direct = 0
    for agent, n in calls:
        if agent.word not in ("codex", "copilot") or n not in DIRECT:
            continue
        argv = ["plugman-hook", agent.word, "PostToolUse", f"parity@parities#{n}"]
        taken = launch(argv, cwd, event(agent, cwd), trace)
        assert taken.path == "direct", (agent, n, taken)
        assert taken[:3] == full[agent.word, n][:3], (agent, n)
        direct += 1
    assert direct == 8
    said = {key: r for key, r in full.items() if key[0] == "codex"}
    assert [said["codex", n].code for n in range(4)] == [0, 1, 2, 3]
    assert "list root=" in said["codex", 4].out and "regex root=" in said["codex", 5].out
    assert "admitted" in said["codex", 6].out and said["codex", 7] == Result(0, "", "", "full")
    assert said["codex", 8].code == 1 and "timed out" in said["codex", 8].err
    plain = said["codex", 0].out
    assert f"project={project} pwd={cwd}" in plain and "data=parity-parities" in plain
    gemini = full["gemini", 0].out.splitlines()[0]
    assert json.loads(gemini)["tool_name"] == "Bash"  # Gemini's name, renamed back

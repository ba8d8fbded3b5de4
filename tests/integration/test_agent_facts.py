"""The facts the hot commands need of an agent (plugman.runtime.launch.agent_facts) come from its
`AgentSpec`, written by the deployment; `plugman hooks exec`, `plugman hooks notify` and the
folder-trust check of `plugman list` read them from that file (no agent table imported), and
fall back to the specs without it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from plugman.core.paths import Paths
from plugman.runtime.launch import agent_facts
from plugman.runtime.launch.agent_facts import Facts, FolderTrust, Launching
from tests.integration.helpers import run

HOOK = '[[hooks.PostToolUse]]\nmatcher = "Bash"\n[[hooks.PostToolUse.hooks]]\ntype = "command"\n'


def hooks_exec(project: Path, *args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "plugman", "hooks", "exec", *args]
    return subprocess.run(argv, cwd=project, input=stdin, capture_output=True, text=True)


def test_the_deployment_writes_each_linked_agents_facts_from_its_spec(
    tmp_path: Path, home: Path
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    run("agents", "add", "cursor", "codex", "claude-code", project=project)
    facts = agent_facts.load(Paths.from_env(project=project))
    assert facts.launchers == {
        "cursor": Launching({"Bash": "Shell"}),
        "codex": Launching({}),
        "claude-code": Launching({}, async_itself=True),
    }
    assert {name: (a.label, a.notice) for name, a in facts.agents.items()} == {
        "cursor": ("Cursor", "additional_context"),
        "codex": ("Codex", "claude"),
        "claude-code": ("Claude Code", "claude"),
    }
    assert facts.agents["cursor"].trust is None  # no folder trust
    assert facts.agents["codex"].trust == FolderTrust(
        "codex",
        {"project": frozenset({"mcp", "hooks", "agents"})},
        "run codex in {folder} and trust the folder when it asks",
    )


def test_the_launcher_takes_an_agents_tool_names_from_the_written_facts(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    paths = Paths.from_env(project=project)
    paths.user_config.parent.mkdir(parents=True, exist_ok=True)
    paths.user_config.write_text(HOOK + 'command = "echo ran"\n')
    event = json.dumps({"tool_name": "Sh", "tool_input": {"command": "ls"}})
    # `mine` is no registered target: only the facts file knows its word and its shell tool
    written = Facts({"mine": Launching({"Bash": "Sh"})}, {})
    agent_facts.path(paths).parent.mkdir(parents=True, exist_ok=True)
    agent_facts.path(paths).write_bytes(agent_facts.dump(written))
    done = hooks_exec(project, "mine", "PostToolUse", "user#0", stdin=event)
    assert (done.returncode, done.stdout) == (0, "ran\n"), done.stderr

    # facts another plugman version wrote are not read: the word is unknown again
    body = json.loads(agent_facts.path(paths).read_text())
    agent_facts.path(paths).write_text(json.dumps({**body, "version": "0.0.0-other"}))
    done = hooks_exec(project, "mine", "PostToolUse", "user#0", stdin=event)
    assert done.returncode == 1 and "unknown agent 'mine'" in done.stderr, done.stderr
    # and a built-in's come from its spec: Cursor's `Shell` is Claude's `Bash`
    shell = json.dumps({"tool_name": "Shell", "tool_input": {"command": "ls"}})
    done = hooks_exec(project, "cursor", "PostToolUse", "user#0", stdin=shell)
    assert (done.returncode, done.stdout) == (0, "ran\n"), done.stderr

"""Attacks on consent at each call (issue 33): an approved project hook or server whose script
changes afterwards (a `git pull`, no plugman command in between) must not run in any agent.

An approval covers the project, the entry and the digest of every file its command runs
(config.merge.approval_key, config.binding.files_run), but only a command that asks plugman
at each call can check it: the launchers `plugman hooks exec` and `plugman mcp run` resolve
again every time. The invariant attacked: every hook and stdio server that needs approval (the
project's own) is written into every agent's file as the launcher
(agents.export_entries.hooks/servers, agents.targets.hooks.launched), Claude Code's included,
so the command the agent's file holds, run as the agent runs it, starts the approved script
and refuses the changed one; the user's own hooks stay as given (no launcher cost).

Each case runs what plugman wrote into the agent's file (`sh -c COMMAND` for a hook, COMMAND
ARGS for a server) in the victim's real git clone, as the agent would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.attacks.test_origin_clone import clone, push_change, upstream
from tests.integration.helpers import git, run

HOOK = '#!/bin/sh\necho hook-said-hello\necho hook > "$CLAUDE_PROJECT_DIR/ran-hook"\n'
START = "#!/bin/sh\necho server > ran-server\n"
HOOK_TOML = (
    "[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\n"
    'type = "command"\ncommand = \'bash "$CLAUDE_PROJECT_DIR/scripts/hook.sh"\'\n'
)
SERVER_TOML = '[mcp_servers.evil]\ncommand = "bash"\nargs = ["./scripts/start.sh"]\n'
SCRIPTS = {"scripts/hook.sh": HOOK, "scripts/start.sh": START}
HOOK_AGENTS = ["claude-code", "codex", "gemini", "cursor", "copilot-cli"]
SERVER_AGENTS = ["claude-code", "codex", "gemini", "cursor"]
EVENT = json.dumps({"hook_event_name": "SessionStart", "source": "startup"})


def agent_env(project: Path) -> dict[str, str]:
    """The environment an agent runs its hooks with: `plugman` on PATH, the project named."""
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "CLAUDE_PROJECT_DIR": str(project),
        "GEMINI_PROJECT_DIR": str(project),
    }


def written(project: Path) -> Iterator[tuple[Path, Any]]:
    """Every agent file the export wrote into the clone (untracked), parsed."""
    for line in git(project, "status", "--porcelain", "-uall").splitlines():
        path = project / line[3:]
        if path.suffix == ".json":
            yield path, json.loads(path.read_text())
        elif path.suffix == ".toml" and path.name != "plugman.toml":
            yield path, tomllib.loads(path.read_text())


def walk(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


def hook_commands(project: Path) -> list[str]:
    """The hook commands in the agents' files plugman wrote (not server entries)."""
    return [
        d["command"]
        for _, doc in written(project)
        for d in walk(doc.get("hooks", {}))
        if isinstance(d.get("command"), str)
    ]


def server_entry(project: Path, name: str = "evil") -> dict[str, Any]:
    for _, doc in written(project):
        for d in walk(doc):
            entry = d.get(name)
            if isinstance(entry, dict) and "command" in entry:
                return entry
    raise AssertionError(f"no server {name} in {[str(p) for p, _ in written(project)]}")


def run_hook(project: Path, command: str) -> subprocess.CompletedProcess[str]:
    """The hook command as the agent runs it: a shell in the project, the event on stdin."""
    return subprocess.run(
        ["sh", "-c", command],
        cwd=project,
        input=EVENT,
        capture_output=True,
        text=True,
        timeout=60,
        env=agent_env(project),
        check=False,
    )


def run_server(project: Path, entry: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [entry["command"], *entry.get("args", [])],
        cwd=project,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        env={**agent_env(project), **entry.get("env", {})},
        check=False,
    )


@pytest.fixture(autouse=True)
def _own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A home of the test's own: a project's Codex hooks put their trust keys in the user's
    `~/.codex/config.toml`, which must never be the machine's (tests.open_audit)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)


def victim(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Path]:
    repo = upstream(tmp_path, {**files, **SCRIPTS})
    return repo, clone(repo, tmp_path / "victim")


@pytest.mark.parametrize("agent", HOOK_AGENTS)
def test_an_approved_project_hook_whose_script_changed_does_not_run(
    agent: str, tmp_path: Path
) -> None:
    """Attack: the project's SessionStart hook is approved and exported into AGENT's project
    file; then a `git pull` changes the script it runs, and the agent starts a session with no
    plugman command in between. Invariant (agents.targets.hooks.launched): the agent's file
    names `plugman hooks exec`, which runs the approved script, passes its output through, and
    refuses (exit 1, saying why) the changed one; approving again runs it."""
    repo, project = victim(tmp_path, {"plugman.toml": HOOK_TOML})
    run("trust", "approve", "SessionStart:*", project=project)
    run("export", "--target", agent, "--scope", "project", "--write", project=project)
    commands = hook_commands(project)
    assert len(commands) == 1 and "hooks exec" in commands[0], commands
    marker = project / "ran-hook"

    approved = run_hook(project, commands[0])
    assert approved.returncode == 0, approved
    assert "hook-said-hello" in approved.stdout and marker.exists()
    marker.unlink()

    push_change(repo, project, {"scripts/hook.sh": HOOK + "echo evil >> ran-evil\n"})
    changed = run_hook(project, commands[0])
    assert changed.returncode == 1, changed
    assert "waits for approval" in changed.stderr and "Traceback" not in changed.stderr
    assert not marker.exists() and not (project / "ran-evil").exists()

    run("trust", "approve", "SessionStart:*", project=project)
    again = run_hook(project, commands[0])
    assert again.returncode == 0 and marker.exists() and (project / "ran-evil").exists(), again


@pytest.mark.parametrize("agent", HOOK_AGENTS)
def test_a_users_own_hook_is_written_as_given(
    agent: str, tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pair of the above: the user's own hook (user scope, consented by being the user's)
    needs no approval, so it is written as the handler itself, without the launcher's cost,
    and runs."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    _, project = victim(tmp_path, {"README": "x\n"})
    script = project / "scripts" / "hook.sh"
    user_toml = isolated_home / "config" / "plugman.toml"
    user_toml.parent.mkdir(parents=True, exist_ok=True)
    user_toml.write_text(HOOK_TOML.replace('"$CLAUDE_PROJECT_DIR/scripts/hook.sh"', str(script)))
    run("export", "--target", agent, "--scope", "user", "--write", project=project)
    files = [p for p in home.rglob("*") if p.is_file() and "hook.sh" in p.read_text()]
    assert files, list(home.rglob("*"))
    text = "".join(p.read_text() for p in files)
    assert "hooks exec" not in text and f"bash {script}" in text
    done = run_hook(project, f"bash {script}")
    assert done.returncode == 0 and (project / "ran-hook").exists()


@pytest.mark.parametrize("agent", SERVER_AGENTS)
def test_an_approved_project_server_whose_script_changed_does_not_start(
    agent: str, tmp_path: Path
) -> None:
    """Attack: the project's stdio server is approved and exported into AGENT's project file;
    a `git pull` then changes its start script. Invariant (agents.export_entries.servers): the
    agent's entry is `plugman mcp run evil`, which starts the approved script and refuses the
    changed one (exit 1, nothing started) until it is approved again."""
    repo, project = victim(tmp_path, {"plugman.toml": SERVER_TOML})
    run("trust", "approve", "evil", project=project)
    run("export", "--target", agent, "--scope", "project", "--write", project=project)
    entry = server_entry(project)
    assert entry["command"] == "plugman" and entry["args"] == ["mcp", "run", "evil"], entry
    marker = project / "ran-server"

    assert run_server(project, entry).returncode == 0 and marker.exists()
    marker.unlink()
    push_change(repo, project, {"scripts/start.sh": START + "echo evil > ran-evil\n"})
    changed = run_server(project, entry)
    assert changed.returncode == 1 and not marker.exists(), changed
    assert not (project / "ran-evil").exists()

    run("trust", "approve", "evil", project=project)
    assert run_server(project, entry).returncode == 0 and (project / "ran-evil").exists()


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_a_mcp_json_server_reaches_other_agents_through_the_launcher(
    agent: str, tmp_path: Path
) -> None:
    """Attack: the clone's `.mcp.json` server (which Claude Code reads itself, under its own
    approval) exported to an agent that does not read `.mcp.json`; the script changes after
    approval. Invariant: that agent starts it only through `plugman mcp run`, which refuses
    the changed script; the approved one starts."""
    server = {"command": "bash", "args": ["./scripts/start.sh"]}
    repo, project = victim(tmp_path, {".mcp.json": json.dumps({"mcpServers": {"evil": server}})})
    run("trust", "approve", "evil", project=project)
    run("export", "--target", agent, "--scope", "project", "--write", project=project)
    entry = server_entry(project)
    assert entry["args"] == ["mcp", "run", "evil"], entry
    assert run_server(project, entry).returncode == 0 and (project / "ran-server").exists()
    push_change(repo, project, {"scripts/start.sh": START + "echo evil > ran-evil\n"})
    assert run_server(project, entry).returncode == 1
    assert not (project / "ran-evil").exists()


HOOK2 = '#!/bin/sh\necho second >> "$CLAUDE_PROJECT_DIR/ran-second"\n'
TWO_HOOKS = HOOK_TOML + (
    "[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\n"
    'type = "command"\ncommand = \'bash "$CLAUDE_PROJECT_DIR/scripts/hook2.sh"\'\n'
)


def test_a_hook_waiting_again_does_not_shift_its_id_onto_the_next(tmp_path: Path) -> None:
    """Attack: two approved project hooks of one event; a `git pull` changes the first one's
    script. Invariant (config.merge: a hook's slot is counted before any is dropped): the
    launcher id written for the first (`project#0`) still names the first, which now waits,
    and never runs the second in its place; the second's id still runs the second, once."""
    repo, project = victim(tmp_path, {"plugman.toml": TWO_HOOKS, "scripts/hook2.sh": HOOK2})
    run("trust", "approve", "SessionStart:*", project=project)
    run("export", "--target", "codex", "--scope", "project", "--write", project=project)
    first, second = hook_commands(project)
    assert "project#0" in first and "project#1" in second, (first, second)
    push_change(repo, project, {"scripts/hook.sh": HOOK + "echo evil >> ran-evil\n"})

    refused = run_hook(project, first)
    assert refused.returncode == 1 and "waits for approval" in refused.stderr, refused
    assert not (project / "ran-second").exists() and not (project / "ran-evil").exists()
    ran = run_hook(project, second)
    assert ran.returncode == 0, ran
    assert (project / "ran-second").read_text() == "second\n"

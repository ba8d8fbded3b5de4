"""Attacks on the direct form of the hook launcher (issue 36): `plugman-hook AGENT EVENT
HOOK-ID` sources the hook's sh plan and execs the handler with no Python and no resolve, so
whatever would stop the hook in a resolve must stop it at the very next call through the sh
plan too.

The invariant attacked (runtime.launch.shplan): an sh plan is used only while every file the
resolution reads or probes is as it was when the plan's JSON plan was found fresh (present ones
not newer, absent ones absent, the folders holding plugman's files unchanged), in the same
environment, with this plugman installed; plans live only in plugman's state folder. Each case
installs a plugin with a SessionStart hook (no matcher, no `if`: nothing to translate) at project
scope with Codex linked, runs the command Codex's project file names as Codex runs it (`sh -c
COMMAND` in the project, the event on stdin), and reads PLUGMAN_LAUNCH_TRACE to see which path
each call took: `direct` before the attack, the full launcher (which refuses) after it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.attacks.test_launch_plans import paths_taken as taken
from tests.integration.test_export import cli

EVENT = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "cwd": "."})
HELLO = 'echo "hello from $(basename "$CLAUDE_PLUGIN_ROOT")"\necho ran >> ran-hook\n'


@pytest.fixture(autouse=True)
def _own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)


def greeter_market(root: Path) -> Path:
    plugin = root / "greeter"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / "hooks").mkdir()
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "greeter", "version": "1"}')
    (plugin / "hello.sh").write_text(HELLO)
    handler = {"type": "command", "command": 'sh "${CLAUDE_PLUGIN_ROOT}/hello.sh"'}
    hooks = {"hooks": {"SessionStart": [{"hooks": [handler]}]}}
    (plugin / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    catalog = {
        "name": "greets",
        "owner": {"name": "t"},
        "plugins": [{"name": "greeter", "source": "./greeter"}],
    }
    (root / ".claude-plugin").mkdir()
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    return root


def greeted(tmp_path: Path) -> tuple[Path, str]:
    """A git project with `greeter` installed and approved at project scope, Codex linked
    there; the command Codex's project file names (the direct form)."""
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    cli(project, "marketplace", "add", str(greeter_market(tmp_path / "market")))
    cli(project, "agents", "add", "codex", "--scope", "project")
    cli(project, "install", "greeter", "--scope", "project")
    cli(project, "trust", "approve", "--all")
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]
    commands = [h["command"] for g in hooks["SessionStart"] for h in g["hooks"]]
    assert commands == ["plugman-hook codex SessionStart 'greeter@greets#0'"], commands
    return project, commands[0]


def call(project: Path, command: str, trace: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PLUGMAN_LAUNCH_TRACE": str(trace),
    }
    return subprocess.run(
        ["sh", "-c", command],
        cwd=project,
        input=EVENT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def runs_direct(project: Path, command: str, trace: Path) -> None:
    """Once the files the plan watches are 2 s old, a call through the JSON plan writes the sh
    plan, and the next call is direct."""
    time.sleep(2.1)
    first = call(project, command, trace)
    assert first.returncode == 0 and "hello from" in first.stdout, first
    assert taken(trace) == ["sh-plan", "plan"]
    done = call(project, command, trace)
    assert done.returncode == 0 and done.stdout == first.stdout and not done.stderr, done
    assert taken(trace) == ["direct"]
    assert (project / "ran-hook").read_text() == "ran\nran\n"
    (project / "ran-hook").unlink()


def refused(project: Path, command: str, trace: Path) -> subprocess.CompletedProcess[str]:
    done = call(project, command, trace)
    assert done.returncode == 1 and "Traceback" not in done.stderr, (done, taken(trace))
    assert not (project / "ran-hook").exists()
    assert taken(trace) == ["full"]
    return done


def state() -> Path:
    return Path(os.environ["PLUGMAN_HOME"]) / "state"


def test_a_managed_policy_arriving_later_stops_the_direct_hook(tmp_path: Path) -> None:
    """Attack: an administrator's managed settings arrive (only managed hooks may run) after
    the sh plan was written; the very next call obeys them."""
    project, command = greeted(tmp_path)
    trace = tmp_path / "trace"
    runs_direct(project, command, trace)
    managed = Path(os.environ["PLUGMAN_MANAGED_DIR"])
    managed.mkdir(parents=True, exist_ok=True)
    (managed / "managed-settings.toml").write_text("allowManagedHooksOnly = true\n")
    refused(project, command, trace)


def not_direct(project: Path, command: str, trace: Path) -> None:
    done = call(project, command, trace)
    assert done.returncode == 0 and "hello from" in done.stdout, done
    assert taken(trace)[-1] in ("full", "plan")


def test_a_changed_approvals_file_sends_the_next_call_to_the_launcher(tmp_path: Path) -> None:
    """Attack on the stamp: the approvals file is edited by hand with no plugman command. A
    hook needing approval never gets the direct form (agents.targets.hooks.direct), so this
    plugin's hook (its user installed it: consented) still runs, but the sh plan is not used:
    the launcher decides (a revoked approval stops a hook there: test_launch_plans)."""
    project, command = greeted(tmp_path)
    trace = tmp_path / "trace"
    runs_direct(project, command, trace)
    (state() / "trust.json").write_text(json.dumps({"format": 1}))
    not_direct(project, command, trace)


def test_an_old_approvals_file_moved_back_is_seen(tmp_path: Path) -> None:
    """Attack on the mtime check: approvals restored from a backup older than the plan (`mv`
    keeps the backup's mtime); the folder holding it changed, so the sh plan is not used."""
    project, command = greeted(tmp_path)
    backup = tmp_path / "trust.json.bak"
    backup.write_text(json.dumps({"format": 1}))
    os.utime(backup, (time.time() - 3600, time.time() - 3600))
    trace = tmp_path / "trace"
    runs_direct(project, command, trace)
    backup.replace(state() / "trust.json")
    not_direct(project, command, trace)


@pytest.mark.parametrize("how", [["disable", "greeter"], ["uninstall", "greeter"]])
def test_a_plugin_disabled_or_uninstalled_stops_the_direct_hook(
    tmp_path: Path, how: list[str]
) -> None:
    """A plugin disabled or uninstalled with the agent file left as it was (its hook line kept
    by hand): the next call falls back to the full launcher, which runs nothing."""
    project, command = greeted(tmp_path)
    trace = tmp_path / "trace"
    runs_direct(project, command, trace)
    kept = (project / ".codex" / "hooks.json").read_text()
    cli(project, *how, "--scope", "project")
    (project / ".codex").mkdir(exist_ok=True)
    (project / ".codex" / "hooks.json").write_text(kept)
    refused(project, command, trace)


def test_sh_plans_live_only_in_plugmans_state_and_go_with_the_agent(tmp_path: Path) -> None:
    """An sh plan is never written into the project (a clone cannot bring one), is 0600, holds
    no machine path of the project's files but its own stamp, and the deployment deletes the
    project's sh plans when the agent is unlinked."""
    project, command = greeted(tmp_path)
    runs_direct(project, command, tmp_path / "trace")
    plans = list((state() / "plans" / "sh").rglob("*.sh"))
    assert plans and all(p.stat().st_mode & 0o777 == 0o600 for p in plans)
    assert not list(project.rglob("*.sh"))
    cli(project, "agents", "remove", "codex", "--scope", "project")
    assert not [p for p in plans if p.exists()]

"""Attacks on the launch plans (issue 36): the hook launcher's fast path runs a plan written at
deploy time without resolving, so whatever would stop the hook in a resolve must stop it at the
very next call through the plan too.

The invariant attacked (runtime.launch.plans, planfile): a plan is used only while every file
the resolution reads or probes holds what it held when the plan was written (its stamp), in the
environment and plugman version it was written for; plans live only in plugman's state folder.
Each case links Codex at project scope (so the deployment writes the plans), runs the command
Codex's project file names, as Codex runs it (`sh -c COMMAND` in the project, the event on
stdin), and reads PLUGMAN_LAUNCH_TRACE to see which path each call took: the approved hook
through its plan, and after the attack the full launcher, which refuses it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.attacks.test_launch_files import HOOK, HOOK_TOML, agent_env, hook_commands, victim
from tests.attacks.test_origin_clone import push_change
from tests.integration.helpers import run

EVENT = json.dumps({"hook_event_name": "SessionStart", "source": "startup"})


@pytest.fixture(autouse=True)
def _own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)


def call(project: Path, command: str, trace: Path) -> subprocess.CompletedProcess[str]:
    env = {**agent_env(project), "PLUGMAN_LAUNCH_TRACE": str(trace)}
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


def paths_taken(trace: Path) -> list[str]:
    lines = trace.read_text().splitlines() if trace.exists() else []
    trace.unlink(missing_ok=True)
    return [line.split()[0] for line in lines]


def linked_victim(tmp_path: Path) -> tuple[Path, Path, str]:
    """A clone whose project hook is approved, with Codex linked at project scope: the
    deployment has written the hook's plan. The command Codex's file names."""
    repo, project = victim(tmp_path, {"plugman.toml": HOOK_TOML})
    run("trust", "approve", "SessionStart:*", project=project)
    run("agents", "add", "codex", "--scope", "project", project=project)
    commands = hook_commands(project)
    assert len(commands) == 1 and "hooks exec codex SessionStart" in commands[0], commands
    plans = Path(os.environ["PLUGMAN_HOME"]) / "state" / "plans"
    assert [p.name for p in plans.rglob("hook.*.json")], "no plan written at deploy"
    return repo, project, commands[0]


def approved_runs_from_its_plan(project: Path, command: str, trace: Path) -> None:
    done = call(project, command, trace)
    assert done.returncode == 0 and "hook-said-hello" in done.stdout, done
    assert paths_taken(trace) == ["plan"]
    (project / "ran-hook").unlink()


def refused(project: Path, command: str, trace: Path, said: str) -> None:
    done = call(project, command, trace)
    assert done.returncode == 1, done
    assert said in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (project / "ran-hook").exists() and not (project / "ran-evil").exists()
    assert paths_taken(trace) == ["full"]


def test_a_changed_script_stops_the_planned_hook(tmp_path: Path) -> None:
    """Attack: a `git pull` changes the approved hook's script, no plugman command after."""
    repo, project, command = linked_victim(tmp_path)
    trace = tmp_path / "trace"
    approved_runs_from_its_plan(project, command, trace)
    push_change(repo, project, {"scripts/hook.sh": HOOK + "echo evil >> ran-evil\n"})
    refused(project, command, trace, "waits for approval")


def test_a_revoked_approval_stops_the_planned_hook(tmp_path: Path) -> None:
    """Attack on the stamp: the approvals file loses the approval (edited, or restored from a
    backup) with no plugman command: the plan must not outlive it."""
    _, project, command = linked_victim(tmp_path)
    trace = tmp_path / "trace"
    approved_runs_from_its_plan(project, command, trace)
    trust = Path(os.environ["PLUGMAN_HOME"]) / "state" / "trust.json"
    trust.write_text(json.dumps({"format": 1}))
    refused(project, command, trace, "waits for approval")


def test_a_managed_policy_arriving_later_stops_the_planned_hook(tmp_path: Path) -> None:
    """Attack: an administrator's managed settings arrive (only managed hooks may run) after
    the plan was written; the very next call obeys them."""
    _, project, command = linked_victim(tmp_path)
    trace = tmp_path / "trace"
    approved_runs_from_its_plan(project, command, trace)
    managed = Path(os.environ["PLUGMAN_MANAGED_DIR"])
    managed.mkdir(parents=True, exist_ok=True)
    (managed / "managed-settings.toml").write_text("allowManagedHooksOnly = true\n")
    done = call(project, command, trace)
    assert done.returncode == 1 and not (project / "ran-hook").exists(), done
    assert paths_taken(trace) == ["full"]


def test_a_new_file_the_hook_would_run_stops_the_plan(tmp_path: Path) -> None:
    """Attack: the project's hook changes in plugman.toml (a merge) to another script under
    the same hook id; the plan (written for the old command) is not used."""
    _, project, command = linked_victim(tmp_path)
    trace = tmp_path / "trace"
    approved_runs_from_its_plan(project, command, trace)
    toml = project / "plugman.toml"  # as a merge would leave it (the link is recorded there)
    toml.write_text(toml.read_text().replace("hook.sh", "evil.sh"))
    (project / "scripts" / "evil.sh").write_text("#!/bin/sh\necho evil >> ran-evil\n")
    refused(project, command, trace, "waits for approval")


def test_plans_live_only_in_plugmans_state_and_hold_no_secret(tmp_path: Path) -> None:
    """A plan is never written into the project (a clone cannot bring one), is 0600, and the
    deployment deletes the project's plans when the agent is unlinked."""
    _, project, _ = linked_victim(tmp_path)
    plans = list((Path(os.environ["PLUGMAN_HOME"]) / "state" / "plans").rglob("*.json"))
    assert plans and all(p.stat().st_mode & 0o777 == 0o600 for p in plans)
    assert not [p for p in project.rglob("*") if "plans" in p.parts]
    run("agents", "remove", "codex", "--scope", "project", project=project)
    assert not [p for p in plans if p.exists()]

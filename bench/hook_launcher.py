"""What the hook launcher (``plugman hooks exec``) adds to each hook call an agent makes.

A throw-away PLUGMAN_HOME gets a local marketplace with one plugin whose ``PostToolUse`` handler
is ``true``, installed at user scope; each timed run feeds the same Codex-shaped event JSON (a
``Bash`` call) on stdin to either

* direct: the handler as the agent ran it before the launcher, ``sh -c true``;
* launcher: ``plugman hooks exec codex PostToolUse bench-hook@bench-market#0``, what the agent's
  hooks file now names (resolve the config, find the handler, test matcher and ``if``, run it).

The two alternate, run after run, so a load spike on the (busy, 2-core) machine hits both
alike; each run's exit code is checked. The figures are the launcher's median minus the direct
median, in the same run: wall time, and CPU time (user + system of the child processes, which a
busy machine inflates less).

``--project-hook`` measures instead what Claude Code (and every other agent) pays for a hook
that needs approval: the project's own approved ``PostToolUse`` hook ``bash scripts/hook.sh``
(a ``true`` script), direct ``sh -c 'bash scripts/hook.sh'`` against ``plugman hooks exec
claude-code PostToolUse project#0``, which also hashes the script to check the approval.

Results go to ``bench/results/hook-launcher.json`` (``hook-launcher-project.json``).

Usage: ``.venv/bin/python bench/hook_launcher.py [--runs 40] [--project-hook]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
PLUGMAN = REPO_ROOT / ".venv" / "bin" / "plugman"
RESULTS = REPO_ROOT / "bench" / "results" / "hook-launcher.json"
HOOK_ID = "bench-hook@bench-market#0"
PAYLOAD = json.dumps(
    {
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git status"},
        "tool_response": "",
        "tool_use_id": "call_1",
    }
)


def market(root: Path) -> Path:
    plugin = root / "bench-hook"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / "hooks").mkdir()
    manifest = {"name": "bench-hook", "version": "1.0.0"}
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    group = {"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}
    (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"PostToolUse": [group]}}))
    entry = {"name": "bench-hook", "source": "./bench-hook"}
    catalog = {"name": "bench-market", "owner": {"name": "bench"}, "plugins": [entry]}
    (root / ".claude-plugin").mkdir()
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    return root


def timed(argv: list[str], cwd: Path, env: dict[str, str], cpu: list[float] | None = None) -> float:
    """Wall ms of one run; its CPU ms (user + system, the child's) appended to `cpu`."""
    before = os.times()
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, input=PAYLOAD.encode(), capture_output=True)
    ms = (time.perf_counter() - started) * 1000
    after = os.times()
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()}")
    if cpu is not None:
        used = after.children_user + after.children_system
        cpu.append((used - before.children_user - before.children_system) * 1000)
    return ms


def measure(plugman: str, runs: int) -> dict[str, Any]:
    """Median ms of the direct handler and of the launcher, and what the launcher adds."""
    plugman = str(Path(plugman).absolute()) if os.sep in plugman else plugman
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        project = root / "project"
        project.mkdir()
        env = {**os.environ, "PLUGMAN_HOME": str(root / "home"), "HOME": str(root / "user")}
        for args in (
            ["marketplace", "add", str(market(root / "market"))],
            ["install", "bench-hook", "--scope", "user"],
        ):
            subprocess.run([plugman, *args], cwd=project, env=env, check=True, capture_output=True)
        direct_argv = ["sh", "-c", "true"]
        launcher_argv = [plugman, "hooks", "exec", "codex", "PostToolUse", HOOK_ID]
        timed(launcher_argv, project, env)  # warm-up (and a check that the id is found)
        direct, launcher, cpu_direct, cpu_launcher = [], [], [], []
        for _ in range(runs):
            direct.append(timed(direct_argv, project, env, cpu_direct))
            launcher.append(timed(launcher_argv, project, env, cpu_launcher))
    d, lch = statistics.median(direct), statistics.median(launcher)
    cpu = statistics.median(cpu_launcher) - statistics.median(cpu_direct)
    return {
        "runs": runs,
        "direct_ms": d,
        "launcher_ms": lch,
        "added_ms": lch - d,
        "added_cpu_ms": cpu,
    }


PROJECT_TOML = (
    '[[hooks.PostToolUse]]\nmatcher = "Bash"\n[[hooks.PostToolUse.hooks]]\n'
    'type = "command"\ncommand = "bash scripts/hook.sh"\n'
)


def measure_project(plugman: str, runs: int) -> dict[str, Any]:
    """As `measure`, for the project's own approved hook launched for Claude Code."""
    plugman = str(Path(plugman).absolute()) if os.sep in plugman else plugman
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        project = root / "project"
        (project / "scripts").mkdir(parents=True)
        (project / "plugman.toml").write_text(PROJECT_TOML)
        (project / "scripts" / "hook.sh").write_text("#!/bin/sh\ntrue\n")
        env = {**os.environ, "PLUGMAN_HOME": str(root / "home"), "HOME": str(root / "user")}
        approve = [plugman, "trust", "approve", "--all"]
        subprocess.run(approve, cwd=project, env=env, check=True, capture_output=True)
        direct_argv = ["sh", "-c", "bash scripts/hook.sh"]
        launcher_argv = [plugman, "hooks", "exec", "claude-code", "PostToolUse", "project#0"]
        timed(launcher_argv, project, env)  # warm-up (and a check that the id is found)
        direct, launcher, cpu_direct, cpu_launcher = [], [], [], []
        for _ in range(runs):
            direct.append(timed(direct_argv, project, env, cpu_direct))
            launcher.append(timed(launcher_argv, project, env, cpu_launcher))
    d, lch = statistics.median(direct), statistics.median(launcher)
    cpu = statistics.median(cpu_launcher) - statistics.median(cpu_direct)
    return {"runs": runs, "direct_ms": d, "launcher_ms": lch, "added_ms": lch - d,
            "added_cpu_ms": cpu}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--project-hook", action="store_true")
    args = parser.parse_args(argv)
    chosen = measure_project if args.project_hook else measure
    result = chosen(str(PLUGMAN), args.runs)
    out = RESULTS.with_name("hook-launcher-project.json") if args.project_hook else RESULTS
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"direct {result['direct_ms']:.1f} ms, launcher {result['launcher_ms']:.1f} ms, "
        f"added {result['added_ms']:.1f} ms wall, {result['added_cpu_ms']:.1f} ms CPU "
        f"(median of {args.runs} each)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

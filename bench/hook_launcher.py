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
import resource
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
    plain = {"hooks": [{"type": "command", "command": "true"}]}  # no matcher: the direct form
    hooks = {"hooks": {"PostToolUse": [group, plain]}}
    (plugin / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    entry = {"name": "bench-hook", "source": "./bench-hook"}
    catalog = {"name": "bench-market", "owner": {"name": "bench"}, "plugins": [entry]}
    (root / ".claude-plugin").mkdir()
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    return root


def timed(argv: list[str], cwd: Path, env: dict[str, str], cpu: list[float] | None = None) -> float:
    """Wall ms of one run; its CPU ms (user + system, the child's) appended to `cpu`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)  # (os.times: 10 ms steps)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, input=PAYLOAD.encode(), capture_output=True)
    ms = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()}")
    if cpu is not None:
        used = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        cpu.append(used * 1000)
    return ms


VARIANTS = ("direct", "direct_form", "plan", "full")


def measure(plugman: str, runs: int) -> dict[str, Any]:
    """Median ms of four ways to run the same `true` handler, interleaved run after run (the
    order reversed every other round): the handler run directly (`sh -c true`); the direct
    form (`plugman-hook codex PostToolUse ID#1`, the handler with no matcher: its sh plan
    execs it); the plan path (`plugman hooks exec codex PostToolUse ID#0`, the `Bash` one:
    its JSON plan, no resolve); the full launcher (the same with PLUGMAN_NO_PLANS=1). Each
    `*_ms` is a median, each `added_*` that minus the direct median (wall, and CPU of the
    children). `launcher_ms`/`added_ms`/`added_cpu_ms` are the plan path's: what `plugman
    hooks exec` costs as agents' files name it (bench/table.py's row)."""
    plugman = str(Path(plugman).absolute()) if os.sep in plugman else plugman
    dispatcher = str(Path(plugman).parent / "plugman-hook")
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
        plain = HOOK_ID.replace("#0", "#1")
        argvs = {
            "direct": (["sh", "-c", "true"], env),
            "direct_form": ([dispatcher, "codex", "PostToolUse", plain], env),
            "plan": ([plugman, "hooks", "exec", "codex", "PostToolUse", HOOK_ID], env),
            "full": (
                [plugman, "hooks", "exec", "codex", "PostToolUse", HOOK_ID],
                {**env, "PLUGMAN_NO_PLANS": "1"},
            ),
        }
        warm_up(argvs, project, root / "trace")
        wall: dict[str, list[float]] = {v: [] for v in VARIANTS}
        cpu: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for round_ in range(runs):
            for variant in VARIANTS if round_ % 2 == 0 else reversed(VARIANTS):
                argv, variant_env = argvs[variant]
                wall[variant].append(timed(argv, project, variant_env, cpu[variant]))
    med = {v: statistics.median(wall[v]) for v in VARIANTS}
    cpu_med = {v: statistics.median(cpu[v]) for v in VARIANTS}
    result: dict[str, Any] = {"runs": runs, "direct_ms": med["direct"]}
    for variant in VARIANTS[1:]:
        result[f"{variant}_ms"] = med[variant]
        result[f"{variant}_added_ms"] = med[variant] - med["direct"]
        result[f"{variant}_added_cpu_ms"] = cpu_med[variant] - cpu_med["direct"]
    result["launcher_ms"] = med["plan"]
    result["added_ms"] = result["plan_added_ms"]
    result["added_cpu_ms"] = result["plan_added_cpu_ms"]
    return result


def warm_up(argvs: dict[str, tuple[list[str], dict[str, str]]], cwd: Path, trace: Path) -> None:
    """Run each variant until it takes its path (the first calls miss and write the plans; the
    sh plan is written once the files it watches are 2 s old), and check it does."""
    for variant in ("plan", "direct_form", "direct_form"):
        argv, env = argvs[variant]
        timed(argv, cwd, env)
    time.sleep(2.1)
    argv, env = argvs["direct_form"]
    timed(argv, cwd, env)  # through the JSON plan, which writes the sh plan
    expected = {"direct_form": "direct", "plan": "plan", "full": "full"}
    for variant, path in expected.items():
        argv, env = argvs[variant]
        trace.unlink(missing_ok=True)
        timed(argv, cwd, {**env, "PLUGMAN_LAUNCH_TRACE": str(trace)})
        taken = trace.read_text().split()[0] if trace.exists() else "none"
        if taken != path:
            raise RuntimeError(f"{variant}: took the {taken} path, not {path}")


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
    for variant in VARIANTS[1:] if not args.project_hook else ():
        print(
            f"  {variant:12} {result[f'{variant}_ms']:7.1f} ms, added "
            f"{result[f'{variant}_added_ms']:+7.1f} ms wall, "
            f"{result[f'{variant}_added_cpu_ms']:+7.1f} ms CPU"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

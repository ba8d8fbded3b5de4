"""Start-up time: the python floor, ``plugman --version``, ``--help``, ``list``, ``paths``,
``config resolve``, ``install --help`` and ``validate`` of one sample plugin, against
``claude --version``.

Each command is timed as the median of N fresh processes (default 5) after one untimed warm-up,
all in the same run. The floor is ``python -c pass`` with the venv's interpreter, the one
plugman runs on. The plugman commands run in a temp ``PLUGMAN_HOME`` and HOME and a temp empty
project, so ``list`` and ``config resolve`` see nothing installed: the cost of starting the
command and reading every scope. Every run must exit 0 (``--help`` too) and print what the
command prints when it worked.

Goals (issue 15): ``--version`` and ``--help`` within floor + 25 ms; ``list``, ``paths`` and
``config resolve`` within floor + 60 ms, and so the two other hot commands here (issue 25):
``install --help`` (a hot command's own parsing and help) and ``validate`` of one plugin.
Claude Code (pinned, see ``claude_code.py``) has only ``claude --version`` to compare with.

Results go to ``bench/results/startup-speed.json``.

Usage: ``.venv/bin/python bench/startup_speed.py [--runs N] [--quick]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import sys
import tempfile
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from claude_code import (
    CLAUDE_VERSION,
    DEFAULT_TOOLS_DIR,
    REPO_ROOT,
    ToolError,
    claude_env,
    ensure_claude,
    ensure_plugman,
    results_dir,
)
from compare import Run, Tree, ignores_pythonpath, run_measured
from validate_speed import (
    CLAUDE_VERSION_DONE,
    SAMPLE_PLUGIN,
    BenchError,
    Check,
    Timing,
    run_once,
    time_command,
)

PASSING = frozenset({0})
# (label, arguments after `plugman`, what its output must hold, the goal over the floor in ms)
COMMANDS = (
    ("--version", ["--version"], r"plugman \d+\.\d+", 25),
    ("--help", ["--help"], r"Usage: plugman", 25),
    ("list", ["list"], r"no plugins installed", 60),
    ("paths", ["paths"], r"store_dir", 60),
    ("config resolve (empty)", ["config", "resolve"], r"MCP servers \(0\)", 60),
    ("install --help", ["install", "--help"], r"Usage: plugman install", 60),
    ("validate (one plugin)", ["validate", str(SAMPLE_PLUGIN)], r"0 errors", 60),
)


@dataclass
class Startup:
    """Median start-up timings by label (plus ``floor``); ``claude_version`` is None when Claude
    Code was not timed."""

    floor: Timing
    plugman: dict[str, Timing]
    claude_version: Timing | None


def plugman_env(home: Path) -> dict[str, str]:
    """The caller's environment (bytecode caches allowed) with plugman pointed at ``home``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PLUGMAN_HOME"] = str(home)
    env["PLUGMAN_MANAGED_DIR"] = str(home / "managed")
    return env


FLOOR = "python -c pass (floor)"


@dataclass
class TreeTimings:
    """One tree's runs: the floor, each of COMMANDS by label, and the commands it could not
    run (a base tree that lacks one) with why; ``runs``: each command's runs timed three ways
    (``compare.Run``: wall, own, CPU), by label."""

    floor: Timing
    timed: dict[str, Timing]
    missing: dict[str, str]
    runs: dict[str, list[Run]] = field(default_factory=dict)


def argvs(plugman: str, project: Path) -> dict[str, tuple[list[str], Check]]:
    """The floor and each of COMMANDS: its argv and what a run must look like."""
    found = {FLOOR: ([sys.executable, "-c", "pass"], Check(PASSING, None))}
    for label, args, done, _ in COMMANDS:
        project_args = ["--project", str(project)] if args[0][0] != "-" else []
        found[label] = ([plugman, *project_args, *args], Check(PASSING, re.compile(done)))
    return found


def time_trees(
    plugman: str, runs: int, trees: Sequence[Tree], only: Collection[str] | None = None
) -> dict[str, TreeTimings]:
    """Every command on every tree (by label; ``only``: these labels and the floor),
    interleaved: run after run each command runs on each tree in turn, the order of the trees
    reversed every other run; after one untimed warm-up each, which also finds what a base tree
    cannot run. Each tree has its own empty PLUGMAN_HOME, HOME and project."""
    workdir = Path(tempfile.mkdtemp(prefix="plugman-startup-bench-"))
    try:
        envs, cmds = {}, {}
        for tree in trees:
            root = workdir / tree.label
            (root / "project").mkdir(parents=True)
            env = plugman_env(root / "home")
            env["HOME"] = str(root)
            envs[tree.label] = tree.env(env)
            chosen = argvs(plugman, root / "project")
            cmds[tree.label] = {
                k: v for k, v in chosen.items() if only is None or k in only or k == FLOOR
            }
        found = {
            t.label: TreeTimings(Timing(), {c[0]: Timing() for c in COMMANDS}, {}) for t in trees
        }
        for tree in trees:
            for label, (argv, check) in cmds[tree.label].items():
                why = ignores_pythonpath(argv) if label != FLOOR else None
                if why:
                    raise BenchError(f"cannot time {tree.name} that way: {why}")
                try:
                    run_once(argv, envs[tree.label], check)
                except BenchError as exc:
                    if tree.label == "head":
                        raise
                    found[tree.label].missing[label] = str(exc).splitlines()[0]
        for i in range(runs):
            order = trees if i % 2 == 0 else trees[::-1]
            for label in cmds[trees[0].label]:
                for tree in order:
                    if label in found[tree.label].missing:
                        continue
                    argv, check = cmds[tree.label][label]
                    run = run_measured(argv, envs[tree.label], check)
                    timing = found[tree.label]
                    target = timing.floor if label == FLOOR else timing.timed[label]
                    target.seconds.append(run.wall_ms / 1000)
                    target.exit_codes.append(0)
                    timing.runs.setdefault(label, []).append(run)
        return found
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def time_plugman(plugman: str, runs: int) -> tuple[Timing, dict[str, Timing]]:
    """(the floor, each of COMMANDS by label) of this tree, in a temp home and an empty
    project."""
    found = time_trees(plugman, runs, [Tree("head", REPO_ROOT, "head")])["head"]
    return found.floor, found.timed


def time_claude(claude: str, runs: int) -> Timing:
    """``claude --version`` in a throw-away HOME."""
    return time_command(
        [claude, "--version"], runs, Check(PASSING, CLAUDE_VERSION_DONE), claude_env()
    )


def measure(plugman: str, claude: str | None, runs: int) -> Startup:
    floor, timed = time_plugman(plugman, runs)
    return Startup(floor, timed, time_claude(claude, runs) if claude else None)


def report(result: Startup, runs: int) -> None:
    print(
        f"\nstart-up; median of {runs} runs; {platform.python_implementation()} "
        f"{platform.python_version()}; Claude Code {CLAUDE_VERSION}; {os.cpu_count()} CPUs\n"
    )
    floor = result.floor.median_ms
    print(f"{'python -c pass (floor)':<32} {floor:>8,.0f} ms")
    for label, _, _, over in COMMANDS:
        ms = result.plugman[label].median_ms
        verdict = "met" if ms <= floor + over else "NOT met"
        print(f"{'plugman ' + label:<32} {ms:>8,.0f} ms   goal floor + {over} ms: {verdict}")
    if result.claude_version is not None:
        claude_ms = result.claude_version.median_ms
        print(f"{'claude --version':<32} {claude_ms:>8,.0f} ms")


def save(result: Startup, runs: int, quick: bool) -> Path:
    out = results_dir() / "startup-speed.json"
    payload = {
        "claude_version": CLAUDE_VERSION,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "runs": runs,
        "quick": quick,
        "timings": asdict(result),
        "goals_over_floor_ms": {label: over for label, _, _, over in COMMANDS},
    }
    out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per command (default 5)")
    parser.add_argument("--quick", action="store_true", help="3 runs per command")
    parser.add_argument("--tools-dir", type=Path, default=DEFAULT_TOOLS_DIR)
    args = parser.parse_args(argv)
    runs: int = 3 if args.quick else args.runs
    if runs < 1:
        parser.error("--runs must be at least 1")
    try:
        claude = str(ensure_claude(args.tools_dir.resolve()))
        plugman = str(ensure_plugman())
    except ToolError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    try:
        result = measure(plugman, claude, runs)
    except BenchError as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    report(result, runs)
    print(f"\nwrote {save(result, runs, args.quick)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

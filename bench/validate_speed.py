"""Wall-clock speed of ``plugman validate`` against ``claude plugin validate``.

Each case is timed as the median of N runs (default 5) of a fresh process, after one untimed
warm-up run (the corpus sweeps, which run one process per target, get no warm-up). The one-plugin
cases run plugman and Claude Code interleaved (the order reversed every other round), so both
see the same load: a ratio of timings taken minutes apart on a shared machine is noise. Cases:

* floors: ``python -c pass`` and ``python -c "import typer"`` in the venv, ``claude --version``;
* one plugin: the sample ``writing-skills`` plugin and ``hookify`` from
  anthropics/claude-plugins-official (skills, commands, an agent and a ``hooks/hooks.json``);
* the whole corpus: ONE plugman process given every target at once, plugman once per target
  (sequential total) and Claude Code once per target (sequential total).

Every run's exit code is recorded and checked: it must be the expected one (0 for the valid single
plugins, the same code in every run for the corpus), stderr must hold no traceback, and stdout must
hold the tool's final summary line, so a crash can never be timed as a fast run.

Goals: one plugin >= 6x faster than Claude Code; the whole corpus in one process < 5 s.
Results go to ``bench/results/validate-speed.json``.

Usage: ``.venv/bin/python bench/validate_speed.py [--runs N] [--quick]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from claude_code import (
    CLAUDE_VERSION,
    DEFAULT_CORPUS,
    DEFAULT_TOOLS_DIR,
    REPO_ROOT,
    VENV_PYTHON,
    ToolError,
    claude_env,
    corpus_targets,
    display_path,
    ensure_claude,
    ensure_plugman,
    results_dir,
)

SAMPLE_PLUGIN = REPO_ROOT / "sample-plugins" / "plugins" / "writing-skills"
CORPUS_PLUGIN_REL = Path("anthropics__claude-plugins-official/plugins/hookify")
QUICK_SAMPLE = 20
TIMEOUT_S = 300
GOAL_PLUGIN_RATIO = 6.0  # issue 36
GOAL_CORPUS_MS = 5000.0

# What a run that really validated prints last (a crash never prints it).
PLUGMAN_DONE = re.compile(r"\d+ files? checked: \d+ errors?, \d+ warnings?")
CLAUDE_DONE = re.compile(r"Validation (passed|failed)")
CLAUDE_VERSION_DONE = re.compile(re.escape(CLAUDE_VERSION))
TRACEBACK = "Traceback (most recent call last)"


class BenchError(RuntimeError):
    """A timed run did not do what it should (crash, usage error, wrong exit code)."""


@dataclass
class Check:
    """What a run must look like to count."""

    expected: frozenset[int] | None  # None: any of 0/1, but the same in every run
    done: re.Pattern[str] | None  # must match stdout


@dataclass
class Timing:
    """Runs of one command: wall-clock seconds and exit codes."""

    seconds: list[float] = field(default_factory=list)
    exit_codes: list[int] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.seconds) * 1000.0


def run_once(
    cmd: Sequence[str], env: dict[str, str] | None, check: Check, cwd: Path | None = None
) -> tuple[float, int]:
    """Run ``cmd`` once; return (seconds, exit code) or raise BenchError if it misbehaved."""
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            list(cmd),
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd,
            timeout=TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise BenchError(f"timed out after {TIMEOUT_S}s: {' '.join(cmd)}") from exc
    elapsed = time.perf_counter() - started
    failed = misbehaved(cmd, proc.returncode, proc.stdout, proc.stderr, check)
    if failed is not None:
        raise failed
    return elapsed, proc.returncode


def misbehaved(
    cmd: Sequence[str], code: int, stdout: str, stderr: str, check: Check
) -> BenchError | None:
    """Why a finished run does not count (crash, usage error, wrong exit code, no summary
    line), as the error to raise; None when it does."""
    problem = None
    if code == 2:
        problem = "exit code 2 (usage error)"
    elif TRACEBACK in stderr or TRACEBACK in stdout:
        problem = "traceback in output"
    elif check.expected is not None and code not in check.expected:
        problem = f"exit code {code}, expected {sorted(check.expected)}"
    elif check.expected is None and code not in (0, 1):
        problem = f"exit code {code}, expected 0 or 1"
    elif check.done is not None and not check.done.search(stdout):
        problem = f"stdout lacks the summary line /{check.done.pattern}/"
    if problem is None:
        return None
    tail = "\n".join((stderr.strip() or stdout.strip()).splitlines()[-15:])
    return BenchError(f"{problem}: {' '.join(cmd)}\n{tail}")


def time_command(
    cmd: Sequence[str],
    runs: int,
    check: Check,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Timing:
    """One untimed warm-up, then ``runs`` timed runs; the exit code must not change."""
    _, first = run_once(cmd, env, check, cwd)
    timing = Timing()
    for _ in range(runs):
        seconds, code = run_once(cmd, env, check, cwd)
        if code != first:
            raise BenchError(f"exit code changed from {first} to {code}: {' '.join(cmd)}")
        timing.seconds.append(seconds)
        timing.exit_codes.append(code)
    return timing


def time_interleaved(
    cases: Sequence[tuple[Sequence[str], Check, dict[str, str] | None]], runs: int
) -> list[Timing]:
    """Each (command, check, environment) once untimed, then ``runs`` rounds running each once,
    the order reversed every other round; the exit code must not change."""
    firsts = [run_once(cmd, env, check)[1] for cmd, check, env in cases]
    timings = [Timing() for _ in cases]
    for round_ in range(runs):
        order = range(len(cases)) if round_ % 2 == 0 else reversed(range(len(cases)))
        for i in order:
            cmd, check, env = cases[i]
            seconds, code = run_once(cmd, env, check)
            if code != firsts[i]:
                raise BenchError(f"exit code changed from {firsts[i]} to {code}: {' '.join(cmd)}")
            timings[i].seconds.append(seconds)
            timings[i].exit_codes.append(code)
    return timings


def time_sweep(
    cmds: Sequence[Sequence[str]], runs: int, check: Check, env: dict[str, str] | None = None
) -> Timing:
    """Run every command in turn, ``runs`` times; each run's time is the sum over commands.

    The recorded exit code of a sweep is the highest of its commands; every command must give
    the same exit code in every sweep.
    """
    timing = Timing()
    seen: dict[int, int] = {}
    for _ in range(runs):
        total = 0.0
        worst = 0
        for i, cmd in enumerate(cmds):
            seconds, code = run_once(cmd, env, check)
            if seen.setdefault(i, code) != code:
                raise BenchError(f"exit code changed from {seen[i]} to {code}: {' '.join(cmd)}")
            total += seconds
            worst = max(worst, code)
        timing.seconds.append(total)
        timing.exit_codes.append(worst)
    return timing


def fmt_ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def fmt_ratio(plugman_ms: float | None, claude_ms: float | None) -> str:
    if plugman_ms is None or claude_ms is None or plugman_ms <= 0:
        return "-"
    return f"{claude_ms / plugman_ms:.1f}x"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per case (default 5)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"3 runs; time Claude on {QUICK_SAMPLE} corpus targets and extrapolate",
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--tools-dir", type=Path, default=DEFAULT_TOOLS_DIR)
    args = parser.parse_args(argv)
    runs: int = 3 if args.quick else args.runs
    if runs < 1:
        parser.error("--runs must be at least 1")
    corpus: Path = args.corpus.resolve()

    try:
        claude = str(ensure_claude(args.tools_dir.resolve()))
        plugman = str(ensure_plugman())
    except ToolError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    python = str(VENV_PYTHON)
    corpus_plugin = corpus / CORPUS_PLUGIN_REL
    targets = [str(path) for _, path in corpus_targets(corpus)]
    for needed in (SAMPLE_PLUGIN, corpus_plugin):
        if not needed.is_dir():
            print(f"error: {needed} does not exist", file=sys.stderr)
            return 3
    if not targets:
        print(f"error: no .claude-plugin manifests under {corpus}", file=sys.stderr)
        return 3
    env = claude_env()
    # Time plugman as installed for a user: with bytecode caches. The warm-up run may write them
    # even where the environment disables it (PYTHONDONTWRITEBYTECODE is set in some sandboxes).
    py_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    load_before = os.getloadavg()

    passing = frozenset({0})
    plugman_ok = Check(passing, PLUGMAN_DONE)
    claude_ok = Check(passing, CLAUDE_DONE)
    plugman_any = Check(None, PLUGMAN_DONE)
    claude_any = Check(None, CLAUDE_DONE)

    rows: list[dict[str, Any]] = []
    notes: list[str] = []

    def add(
        case: str,
        plugman_t: Timing | None,
        claude_t: Timing | None,
        claude_scale: float = 1.0,
        kind: str = "compare",
    ) -> None:
        p_ms = plugman_t.median_ms if plugman_t else None
        c_ms = claude_t.median_ms * claude_scale if claude_t else None
        rows.append(
            {
                "case": case,
                "kind": kind,
                "plugman_ms": p_ms,
                "claude_ms": c_ms,
                "ratio": (c_ms / p_ms) if p_ms and c_ms else None,
                "claude_scale": claude_scale,
                "plugman": asdict(plugman_t) if plugman_t else None,
                "claude": asdict(claude_t) if claude_t else None,
            }
        )
        print(f"  done: {case}", file=sys.stderr, flush=True)

    try:
        floor_ok = Check(passing, None)
        add(
            "floor: python -c pass",
            time_command([python, "-c", "pass"], runs, floor_ok, py_env),
            None,
            kind="floor",
        )
        add(
            'floor: python -c "import typer"',
            time_command([python, "-c", "import typer"], runs, floor_ok, py_env),
            None,
            kind="floor",
        )
        add(
            "floor: claude --version",
            None,
            time_command([claude, "--version"], runs, Check(passing, CLAUDE_VERSION_DONE), env),
            kind="floor",
        )
        for label, plugin in (
            ("plugin: sample writing-skills", SAMPLE_PLUGIN),
            ("plugin: official hookify", corpus_plugin),
        ):
            plugman_t, claude_t = time_interleaved(
                [
                    ([plugman, "validate", str(plugin)], plugman_ok, py_env),
                    ([claude, "plugin", "validate", str(plugin)], claude_ok, env),
                ],
                runs,
            )
            add(label, plugman_t, claude_t, kind="plugin")

        n = len(targets)
        one_process = time_command([plugman, "validate", *targets], runs, plugman_any, py_env)
        plugman_each = time_sweep(
            [[plugman, "validate", t] for t in targets], runs, plugman_any, py_env
        )
        if args.quick:
            step = max(1, n // QUICK_SAMPLE)
            sample = targets[::step][:QUICK_SAMPLE]
            scale = n / len(sample)
            claude_each = time_sweep(
                [[claude, "plugin", "validate", t] for t in sample], runs, claude_any, env
            )
            notes.append(
                f"--quick: Claude Code was timed on {len(sample)} of {n} corpus targets "
                f"(every {step}th) and its sum extrapolated x{scale:.2f} to all {n}"
            )
        else:
            scale = 1.0
            claude_each = time_sweep(
                [[claude, "plugin", "validate", t] for t in targets], runs, claude_any, env
            )
        add(f"corpus: plugman 1 process ({n} targets)", one_process, claude_each, scale, "corpus")
        add(
            f"corpus: 1 process per target ({n}, sum)",
            plugman_each,
            claude_each,
            scale,
            "corpus",
        )
    except BenchError as exc:
        print(f"\nFAILED: {exc}", file=sys.stderr)
        return 1

    plugin_rows = [r for r in rows if r["kind"] == "plugin"]
    one_row = next(r for r in rows if r["case"].startswith("corpus: plugman 1 process"))
    corpus_ms = one_row["plugman_ms"]
    goals = {
        "plugin_6x_faster": all(
            r["ratio"] is not None and r["ratio"] >= GOAL_PLUGIN_RATIO for r in plugin_rows
        ),
        "corpus_one_process_under_5s": corpus_ms is not None and corpus_ms < GOAL_CORPUS_MS,
    }

    print(
        f"\nplugman validate vs claude plugin validate ({CLAUDE_VERSION}); median of {runs} "
        f"runs; {platform.python_implementation()} {platform.python_version()}"
    )
    print(f"one plugin (corpus): {display_path(corpus_plugin, corpus)}; corpus: {corpus}")
    load_after = os.getloadavg()
    print(
        f"load average (1 min) before/after: {load_before[0]:.2f}/{load_after[0]:.2f} on "
        f"{os.cpu_count()} CPUs (a busy machine makes every number noisier)\n"
    )
    width = max(len(r["case"]) for r in rows)
    header = f"{'case':<{width}}  {'plugman ms':>10}  {'claude ms':>10}  {'claude/plugman':>14}"
    print(header)
    print("-" * len(header))
    for r in rows:
        ratio = fmt_ratio(r["plugman_ms"], r["claude_ms"])
        mark = "*" if r["claude_scale"] != 1.0 else ""
        print(
            f"{r['case']:<{width}}  {fmt_ms(r['plugman_ms']):>10}  "
            f"{fmt_ms(r['claude_ms']) + mark:>10}  {ratio:>14}"
        )
    for note in notes:
        print(f"* {note}")
    print()
    worst = min((r["ratio"] for r in plugin_rows if r["ratio"] is not None), default=0.0)
    print(
        f"goal: one plugin >= {GOAL_PLUGIN_RATIO:.0f}x faster than Claude Code: "
        f"{'PASS' if goals['plugin_6x_faster'] else 'FAIL'} (worst {worst:.1f}x)"
    )
    print(
        f"goal: whole corpus in one process < {GOAL_CORPUS_MS / 1000:.0f} s: "
        f"{'PASS' if goals['corpus_one_process_under_5s'] else 'FAIL'} "
        f"({fmt_ms(corpus_ms)} ms, exit code {one_row['plugman']['exit_codes'][0]})"
    )

    out = results_dir() / "validate-speed.json"
    payload = {
        "claude_version": CLAUDE_VERSION,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "runs": runs,
        "quick": args.quick,
        "targets": len(targets),
        "load_average_before_after": [load_before[0], load_after[0]],
        "corpus_plugin": str(corpus_plugin),
        "notes": notes,
        "goals": goals,
        "rows": rows,
    }
    out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

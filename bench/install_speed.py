"""Wall-clock speed of ``plugman install``/``uninstall`` against Claude Code's own (one plugin).

One plugin at a time from a LOCAL marketplace: ``sample-plugins`` (``plugman-samples``), copied
into a temp dir first (one copy per tool) so that neither tool can touch the repo. Plugins timed:
``guardrails`` (hooks) and ``writing-skills`` (skills).

Every run starts from nothing: plugman gets a fresh temp ``PLUGMAN_HOME`` (and
``PLUGMAN_MANAGED_DIR=<home>/managed``), Claude Code a fresh temp ``HOME`` (``claude_env()``). In
each run the marketplace is added once (untimed), then install and uninstall are timed separately,
each as one fresh process, run from an empty temp folder. Untimed checks after each step:

* install: ``plugman list --json`` / ``claude plugin list --json`` shows the id in user scope;
* uninstall: the list no longer shows it, and plugman's store (``plugman paths --json`` ->
  ``store_dir``) holds no files and no tree other than its empty ``.staging`` folder.

Every timed process must exit 0 with no traceback in its output, so a crash is never timed as a
fast run. Each (tool, plugin) pair gets one untimed warm-up cycle; the timed runs then alternate
the tools (plugman first in even runs, Claude first in odd ones). Floors for context: ``python -c
pass`` and ``plugman --version`` in the venv, ``claude --version``.

Goal: install+uninstall >= 2x faster than Claude Code, for every plugin timed.
Results go to ``bench/results/install-speed.json``.

Usage: ``.venv/bin/python bench/install_speed.py [--runs N] [--quick]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from claude_code import (
    CLAUDE_VERSION,
    DEFAULT_TOOLS_DIR,
    REPO_ROOT,
    VENV_PYTHON,
    ToolError,
    claude_env,
    ensure_claude,
    ensure_plugman,
    results_dir,
)

MARKETPLACE_SRC = REPO_ROOT / "sample-plugins"
MARKETPLACE = "plugman-samples"
PLUGINS = ("guardrails", "writing-skills")
STAGING = ".staging"  # plugman's (empty) staging folder may stay in the store
TIMEOUT_S = 300
GOAL_RATIO = 2.0
TRACEBACK = "Traceback (most recent call last)"


class BenchError(RuntimeError):
    """A run did not do what it should (non-zero exit, traceback, nothing installed, leftovers)."""


@dataclass
class Timing:
    """Wall-clock seconds of the timed runs of one command."""

    seconds: list[float] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.seconds) * 1000.0


@dataclass
class Cycle:
    """The timed steps of one install + uninstall cycle, in seconds."""

    install: float
    uninstall: float


@dataclass
class Series:
    """All timed cycles of one (tool, plugin) pair."""

    install: Timing = field(default_factory=Timing)
    uninstall: Timing = field(default_factory=Timing)
    both: Timing = field(default_factory=Timing)

    def add(self, cycle: Cycle) -> None:
        self.install.seconds.append(cycle.install)
        self.uninstall.seconds.append(cycle.uninstall)
        self.both.seconds.append(cycle.install + cycle.uninstall)


def run(
    cmd: Sequence[str], env: dict[str, str], cwd: Path
) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run ``cmd`` once (stdin closed); return (seconds, process) or raise BenchError.

    The run must exit 0 and print no traceback.
    """
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            list(cmd),
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            timeout=TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise BenchError(f"timed out after {TIMEOUT_S}s: {' '.join(cmd)}") from exc
    elapsed = time.perf_counter() - started
    problem = None
    if proc.returncode != 0:
        problem = f"exit code {proc.returncode}, expected 0"
    elif TRACEBACK in proc.stderr or TRACEBACK in proc.stdout:
        problem = "traceback in output"
    if problem:
        tail = "\n".join((proc.stderr.strip() or proc.stdout.strip()).splitlines()[-15:])
        raise BenchError(f"{problem}: {' '.join(cmd)}\n{tail}")
    return elapsed, proc


def parse_json(text: str, cmd: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise BenchError(f"`{cmd}` did not print JSON: {exc}\n{text[:500]}") from exc


def listed_user_ids(data: Any) -> set[str]:
    """Plugin ids in user scope from ``plugman list --json`` (a dict) or Claude's (a list)."""
    entries = data.get("plugins") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        return set()
    return {
        str(entry.get("id"))
        for entry in entries
        if isinstance(entry, dict) and entry.get("scope") == "user"
    }


def store_leftovers(store: Path) -> list[str]:
    """Everything in plugman's store except its empty top-level staging folder."""
    left: list[str] = []
    for dirpath, dirnames, filenames in os.walk(store):
        here = Path(dirpath)
        left.extend(str((here / name).relative_to(store)) for name in filenames)
        left.extend(
            str((here / name).relative_to(store))
            for name in dirnames
            if not (here == store and name == STAGING)
        )
    return sorted(left)


def copy_marketplace(dest: Path) -> Path:
    """A private copy of the sample marketplace (caches left out)."""
    shutil.copytree(
        MARKETPLACE_SRC, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"), symlinks=True
    )
    return dest


class PlugmanRunner:
    """Install/uninstall cycles of plugman, each in a fresh PLUGMAN_HOME."""

    def __init__(self, plugman: str, marketplace: Path, workdir: Path) -> None:
        self.plugman = plugman
        self.marketplace = marketplace
        self.workdir = workdir
        self.cwd = workdir / "project"
        self.cwd.mkdir(parents=True, exist_ok=True)
        # Time plugman as installed for a user: with bytecode caches (PYTHONDONTWRITEBYTECODE is
        # set in some sandboxes).
        self.base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.store_rel = self._store_rel()

    def env(self, home: Path) -> dict[str, str]:
        env = dict(self.base_env)
        env["PLUGMAN_HOME"] = str(home)
        env["PLUGMAN_MANAGED_DIR"] = str(home / "managed")
        return env

    def _store_rel(self) -> Path:
        """Where the store is, relative to PLUGMAN_HOME (from ``plugman paths --json``)."""
        home = Path(tempfile.mkdtemp(prefix="home-", dir=self.workdir))
        try:
            cmd = [self.plugman, "paths", "--json"]
            _, proc = run(cmd, self.env(home), self.cwd)
            data = parse_json(proc.stdout, " ".join(cmd))
            store = data.get("paths", {}).get("store_dir") if isinstance(data, dict) else None
            if not isinstance(store, str):
                raise BenchError(f"`{' '.join(cmd)}` gave no paths.store_dir")
            try:
                return Path(store).relative_to(home)
            except ValueError as exc:
                raise BenchError(f"store_dir {store} is not under PLUGMAN_HOME {home}") from exc
        finally:
            shutil.rmtree(home, ignore_errors=True)

    def listed(self, env: dict[str, str]) -> set[str]:
        cmd = [self.plugman, "list", "--json"]
        _, proc = run(cmd, env, self.cwd)
        return listed_user_ids(parse_json(proc.stdout, " ".join(cmd)))

    def cycle(self, plugin: str) -> Cycle:
        home = Path(tempfile.mkdtemp(prefix="home-", dir=self.workdir))
        try:
            env = self.env(home)
            pid = f"{plugin}@{MARKETPLACE}"
            p = self.plugman
            run([p, "marketplace", "add", str(self.marketplace)], env, self.cwd)
            install, _ = run([p, "install", pid, "--scope", "user"], env, self.cwd)
            if pid not in self.listed(env):
                raise BenchError(f"plugman install exited 0 but `plugman list` lacks {pid}")
            uninstall, _ = run([p, "uninstall", pid, "--scope", "user"], env, self.cwd)
            if pid in self.listed(env):
                raise BenchError(f"plugman uninstall exited 0 but `plugman list` still has {pid}")
            left = store_leftovers(home / self.store_rel)
            if left:
                raise BenchError(f"plugman uninstall left store entries behind: {left[:10]}")
            return Cycle(install, uninstall)
        finally:
            shutil.rmtree(home, ignore_errors=True)


class ClaudeRunner:
    """Install/uninstall cycles of Claude Code, each in a fresh HOME."""

    def __init__(self, claude: str, marketplace: Path, workdir: Path) -> None:
        self.claude = claude
        self.marketplace = marketplace
        self.cwd = workdir / "project"
        self.cwd.mkdir(parents=True, exist_ok=True)

    def listed(self, env: dict[str, str]) -> set[str]:
        cmd = [self.claude, "plugin", "list", "--json"]
        _, proc = run(cmd, env, self.cwd)
        return listed_user_ids(parse_json(proc.stdout, " ".join(cmd)))

    def cycle(self, plugin: str) -> Cycle:
        env = claude_env()  # a fresh temp HOME, removed here or at exit
        try:
            pid = f"{plugin}@{MARKETPLACE}"
            c = self.claude
            run([c, "plugin", "marketplace", "add", str(self.marketplace)], env, self.cwd)
            install, _ = run([c, "plugin", "install", pid, "--scope", "user"], env, self.cwd)
            if pid not in self.listed(env):
                raise BenchError(f"claude plugin install exited 0 but its list lacks {pid}")
            uninstall, _ = run([c, "plugin", "uninstall", pid, "--scope", "user"], env, self.cwd)
            if pid in self.listed(env):
                raise BenchError(f"claude plugin uninstall exited 0 but its list still has {pid}")
            return Cycle(install, uninstall)
        finally:
            shutil.rmtree(env["HOME"], ignore_errors=True)


def time_floor(cmd: Sequence[str], env: dict[str, str], cwd: Path, runs: int) -> Timing:
    """One untimed warm-up, then ``runs`` timed runs of a command that must exit 0."""
    run(cmd, env, cwd)
    timing = Timing()
    for _ in range(runs):
        seconds, _ = run(cmd, env, cwd)
        timing.seconds.append(seconds)
    return timing


def time_cycles(plugin: str, runs: int, cycles: Sequence[Callable[[str], Cycle]]) -> list[Series]:
    """One untimed warm-up cycle per tool, then ``runs`` timed cycles of each, in turn.

    The order of the tools is reversed in every other run. Returns one Series per tool.
    """
    for cycle in cycles:
        cycle(plugin)
    series = [Series() for _ in cycles]
    for i in range(runs):
        steps = list(zip(series, cycles, strict=True))
        if i % 2:
            steps.reverse()
        for done, cycle in steps:
            done.add(cycle(plugin))
    return series


def fmt_ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def fmt_ratio(plugman_ms: float | None, claude_ms: float | None) -> str:
    if plugman_ms is None or claude_ms is None or plugman_ms <= 0:
        return "-"
    return f"{claude_ms / plugman_ms:.1f}x"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per case (default 5)")
    parser.add_argument("--quick", action="store_true", help="3 runs per case")
    parser.add_argument("--tools-dir", type=Path, default=DEFAULT_TOOLS_DIR)
    args = parser.parse_args(argv)
    runs: int = 3 if args.quick else args.runs
    if runs < 1:
        parser.error("--runs must be at least 1")
    if not (MARKETPLACE_SRC / ".claude-plugin" / "marketplace.json").is_file():
        print(f"error: {MARKETPLACE_SRC} has no .claude-plugin/marketplace.json", file=sys.stderr)
        return 3
    try:
        claude = str(ensure_claude(args.tools_dir.resolve()))
        plugman = str(ensure_plugman())
    except ToolError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3

    workdir = Path(tempfile.mkdtemp(prefix="plugman-install-bench-"))
    try:
        return _bench(runs, args.quick, plugman, claude, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _bench(runs: int, quick: bool, plugman: str, claude: str, workdir: Path) -> int:
    load_before = os.getloadavg()
    rows: list[dict[str, Any]] = []

    def add(case: str, kind: str, plugman_t: Timing | None, claude_t: Timing | None) -> None:
        p_ms = plugman_t.median_ms if plugman_t else None
        c_ms = claude_t.median_ms if claude_t else None
        rows.append(
            {
                "case": case,
                "kind": kind,
                "plugman_ms": p_ms,
                "claude_ms": c_ms,
                "ratio": (c_ms / p_ms) if p_ms and c_ms else None,
                "plugman": asdict(plugman_t) if plugman_t else None,
                "claude": asdict(claude_t) if claude_t else None,
            }
        )
        print(f"  done: {case}", file=sys.stderr, flush=True)

    try:
        p_runner = PlugmanRunner(plugman, copy_marketplace(workdir / "mkt-plugman"), workdir)
        c_runner = ClaudeRunner(claude, copy_marketplace(workdir / "mkt-claude"), workdir)
        cwd = workdir / "project"
        py_env = p_runner.base_env
        c_env = claude_env()
        add(
            "floor: python -c pass",
            "floor",
            time_floor([str(VENV_PYTHON), "-c", "pass"], py_env, cwd, runs),
            None,
        )
        add(
            "floor: plugman --version",
            "floor",
            time_floor([plugman, "--version"], p_runner.env(workdir / "floor-home"), cwd, runs),
            None,
        )
        add(
            "floor: claude --version",
            "floor",
            None,
            time_floor([claude, "--version"], c_env, cwd, runs),
        )

        for plugin in PLUGINS:
            p_series, c_series = time_cycles(plugin, runs, [p_runner.cycle, c_runner.cycle])
            add(f"{plugin}: install", "install", p_series.install, c_series.install)
            add(f"{plugin}: uninstall", "uninstall", p_series.uninstall, c_series.uninstall)
            add(f"{plugin}: install+uninstall", "both", p_series.both, c_series.both)
    except BenchError as exc:
        print(f"\nFAILED: {exc}", file=sys.stderr)
        return 1

    goal_rows = [r for r in rows if r["kind"] == "both"]
    worst = min((r["ratio"] for r in goal_rows if r["ratio"] is not None), default=0.0)
    goal_pass = bool(goal_rows) and all(
        r["ratio"] is not None and r["ratio"] >= GOAL_RATIO for r in goal_rows
    )

    print(
        f"\nplugman install/uninstall vs claude plugin install/uninstall ({CLAUDE_VERSION}); "
        f"median of {runs} runs; {platform.python_implementation()} {platform.python_version()}"
    )
    print(
        f"local marketplace: copy of {MARKETPLACE_SRC.relative_to(REPO_ROOT)} ({MARKETPLACE}); "
        "user scope; a fresh home per run"
    )
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
        print(
            f"{r['case']:<{width}}  {fmt_ms(r['plugman_ms']):>10}  "
            f"{fmt_ms(r['claude_ms']):>10}  {fmt_ratio(r['plugman_ms'], r['claude_ms']):>14}"
        )
    print()
    print(
        f"goal: install+uninstall >= {GOAL_RATIO:.0f}x faster than Claude Code: "
        f"{'PASS' if goal_pass else 'FAIL'} (worst {worst:.1f}x)"
    )

    out = results_dir() / "install-speed.json"
    payload = {
        "claude_version": CLAUDE_VERSION,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "runs": runs,
        "quick": quick,
        "marketplace": MARKETPLACE,
        "plugins": list(PLUGINS),
        "load_average_before_after": [load_before[0], load_after[0]],
        "goals": {"install_uninstall_2x_faster": goal_pass, "worst_ratio": worst},
        "rows": rows,
    }
    out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

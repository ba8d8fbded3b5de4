"""Start-up time: ``plugman --version`` and ``plugman config resolve`` against ``claude --version``.

Each command is timed as the median of N fresh processes (default 5) after one untimed warm-up.
``plugman config resolve`` (text output) runs in a temp ``PLUGMAN_HOME`` and a temp empty project,
so it resolves an empty config: the cost of importing the command layer and reading every scope.
Claude Code (pinned, see ``claude_code.py``) has no counterpart to that; ``claude --version`` is
compared with ``plugman --version`` only. Every run must exit 0 and print what the command prints
when it worked (the version, or the ``MCP servers (0)`` heading).

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
from dataclasses import asdict, dataclass
from pathlib import Path

from claude_code import (
    CLAUDE_VERSION,
    DEFAULT_TOOLS_DIR,
    ToolError,
    claude_env,
    ensure_claude,
    ensure_plugman,
    results_dir,
)
from validate_speed import CLAUDE_VERSION_DONE, BenchError, Check, Timing, time_command

PLUGMAN_VERSION_DONE = re.compile(r"\d+\.\d+")
RESOLVE_DONE = re.compile(r"MCP servers \(0\)")
PASSING = frozenset({0})


@dataclass
class Startup:
    """Median start-up timings; ``claude_version`` is None when Claude Code was not timed."""

    plugman_version: Timing
    plugman_resolve: Timing
    claude_version: Timing | None


def plugman_env(home: Path) -> dict[str, str]:
    """The caller's environment (bytecode caches allowed) with plugman pointed at ``home``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PLUGMAN_HOME"] = str(home)
    env["PLUGMAN_MANAGED_DIR"] = str(home / "managed")
    return env


def time_plugman(plugman: str, runs: int) -> tuple[Timing, Timing]:
    """(``plugman --version``, ``plugman config resolve`` on an empty config)."""
    workdir = Path(tempfile.mkdtemp(prefix="plugman-startup-bench-"))
    try:
        project = workdir / "project"
        project.mkdir()
        env = plugman_env(workdir / "home")
        version = time_command(
            [plugman, "--version"], runs, Check(PASSING, PLUGMAN_VERSION_DONE), env
        )
        resolve = time_command(
            [plugman, "--project", str(project), "config", "resolve"],
            runs,
            Check(PASSING, RESOLVE_DONE),
            env,
        )
        return version, resolve
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def time_claude(claude: str, runs: int) -> Timing:
    """``claude --version`` in a throw-away HOME."""
    return time_command(
        [claude, "--version"], runs, Check(PASSING, CLAUDE_VERSION_DONE), claude_env()
    )


def measure(plugman: str, claude: str | None, runs: int) -> Startup:
    version, resolve = time_plugman(plugman, runs)
    return Startup(version, resolve, time_claude(claude, runs) if claude else None)


def report(result: Startup, runs: int) -> None:
    print(
        f"\nstart-up; median of {runs} runs; {platform.python_implementation()} "
        f"{platform.python_version()}; Claude Code {CLAUDE_VERSION}; {os.cpu_count()} CPUs\n"
    )
    claude_ms = result.claude_version.median_ms if result.claude_version else None
    rows = [
        ("plugman --version", result.plugman_version.median_ms),
        ("plugman config resolve (empty)", result.plugman_resolve.median_ms),
        ("claude --version", claude_ms),
    ]
    for label, ms in rows:
        print(f"{label:<32} {'-' if ms is None else f'{ms:,.0f} ms':>10}")
    if claude_ms is not None:
        print(f"\nclaude/plugman --version: {claude_ms / result.plugman_version.median_ms:.2f}x")


def save(result: Startup, runs: int, quick: bool) -> Path:
    out = results_dir() / "startup-speed.json"
    payload = {
        "claude_version": CLAUDE_VERSION,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "runs": runs,
        "quick": quick,
        "timings": asdict(result),
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

"""What the update notice (``plugman hooks notify AGENT``) costs per agent start.

A throw-away PLUGMAN_HOME gets a local marketplace with one plugin, installed at user scope; the
catalog then offers a new version and ``plugman outdated`` (the real command) writes the cache
the notice reads. Each timed run is a fresh process of exactly what an agent's SessionStart
hook names, ``<venv python> -m plugman hooks notify claude-code``, against the python floor,
``<venv python> -c pass``; the two alternate, run after run, so a load spike on the (busy,
2-core) machine hits both alike. Every notice run must exit 0 and print the one-line notice
(Claude Code's JSON naming the plugin). The figures are medians, in the same run.

Results go to ``bench/results/notice-speed.json``.

Usage: ``.venv/bin/python bench/notice_speed.py [--runs 20]``
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
RESULTS = REPO_ROOT / "bench" / "results" / "notice-speed.json"
EXPECTED = "1 plugin has an update (bench-notice@bench-market)"
GOAL_MS = 100  # issue 27: well under 100 ms per agent start


def market(root: Path, version: str) -> Path:
    plugin = root / "bench-notice" / ".claude-plugin"
    plugin.mkdir(parents=True, exist_ok=True)
    (plugin / "plugin.json").write_text(json.dumps({"name": "bench-notice", "version": version}))
    entry = {"name": "bench-notice", "source": "./bench-notice"}
    catalog = {"name": "bench-market", "owner": {"name": "bench"}, "plugins": [entry]}
    (root / ".claude-plugin").mkdir(exist_ok=True)
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    return root


def timed(argv: list[str], cwd: Path, env: dict[str, str], expect: str | None) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    ms = (time.perf_counter() - started) * 1000
    if done.returncode != 0 or (expect is not None and expect not in done.stdout):
        raise RuntimeError(
            f"{' '.join(argv)} exited {done.returncode}: {done.stdout!r} {done.stderr!r}"
        )
    return ms


def measure(plugman: str, python: str, runs: int) -> dict[str, Any]:
    """Median ms of the python floor and of the notice, and what the notice adds."""
    plugman = str(Path(plugman).absolute()) if os.sep in plugman else plugman
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        project = root / "project"
        project.mkdir()
        env = {**os.environ, "PLUGMAN_HOME": str(root / "home"), "HOME": str(root / "user")}
        source = market(root / "market", "1.0.0")
        for args in (["marketplace", "add", str(source)], ["install", "bench-notice"]):
            subprocess.run([plugman, *args], cwd=project, env=env, check=True, capture_output=True)
        market(source, "1.1.0")
        subprocess.run([plugman, "outdated"], cwd=project, env=env, check=True, capture_output=True)
        floor_argv = [python, "-c", "pass"]
        notice_argv = [python, "-m", "plugman", "hooks", "notify", "claude-code"]
        timed(notice_argv, project, env, EXPECTED)  # warm-up, and a check of what it says
        floor, notice = [], []
        for _ in range(runs):
            floor.append(timed(floor_argv, project, env, None))
            notice.append(timed(notice_argv, project, env, EXPECTED))
    f, n = statistics.median(floor), statistics.median(notice)
    return {"runs": runs, "floor_ms": f, "notice_ms": n, "added_ms": n - f, "goal_ms": GOAL_MS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    python = str(PLUGMAN.parent / "python")
    result = measure(str(PLUGMAN), python, args.runs)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"floor {result['floor_ms']:.1f} ms, notice {result['notice_ms']:.1f} ms, "
        f"added {result['added_ms']:.1f} ms (median of {args.runs} each; goal < {GOAL_MS} ms)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Time the server launcher adds per server start: `plugman mcp run NAME` against the server
started directly.

What an agent waits for when it starts a server: from spawning the process to the answer to
its MCP `initialize` request. Two servers, each configured as a user-scope stdio server under a
throw-away PLUGMAN_HOME (so `mcp run` resolves every scope as it does for an agent):

* minimal: a few lines of Python answering `initialize` by hand (no SDK), so the difference is
  the launcher's own cost (a Python start, plugman's fast path, resolving the config, exec);
* notes: the sample notes server on the MCP SDK, a realistic server start.

Three ways per server: the server's own command (direct), `plugman mcp run` from its launch
plan (what an agent gets from the second start on: plugman.runtime.launch.server_plans, the
fast path in plugman.cli.fast_launch; checked through PLUGMAN_LAUNCH_TRACE before timing), and
the full launcher (`PLUGMAN_NO_PLANS=1`: resolving the config at every start, as before plans).
They alternate, start after start, the order reversed every other round, so a load spike on the
(busy, 2-core) machine hits all alike; each answer is checked (`result.serverInfo`), never
timed as a fast failure. The added cost is the difference of the medians (same run);
`launched_ms`/`added_ms` are the plan path's, `full_ms`/`full_added_ms` the full launcher's.
The launcher execs the server (no process stays in between), so it adds nothing per call after
the start. Goal (issue 36): the plan path within +30 ms of the direct start.

Results go to `bench/results/launcher-overhead.json`.

Usage: `.venv/bin/python bench/launcher_overhead.py [--runs 20] [--quick]`
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gateway_overhead import write_config

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTES = REPO_ROOT / "sample-plugins" / "plugins" / "notes-server" / "server" / "notes_server.py"
RESULTS = REPO_ROOT / "bench" / "results" / "launcher-overhead.json"
MINIMAL = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {},
                  "serverInfo": {"name": "minimal", "version": "1"}}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def start(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from spawning `argv` to its answer to `initialize`."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(INITIALIZE) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        took = time.perf_counter() - started
        answer = json.loads(line) if line else {}
        if "serverInfo" not in answer.get("result", {}):
            raise RuntimeError(f"{' '.join(argv)}: no initialize answer: {line!r}")
        return took
    finally:
        proc.kill()
        proc.wait(timeout=10)


def planned(argv: list[str], env: dict[str, str], cwd: Path, trace: Path) -> None:
    """Start through the launcher until a start took its plan (the first misses, writes it)."""
    for _ in range(3):
        trace.unlink(missing_ok=True)
        start(argv, {**env, "PLUGMAN_LAUNCH_TRACE": str(trace)}, cwd)
        if trace.read_text().split()[:1] == ["plan"]:
            return
    raise RuntimeError(f"{' '.join(argv)}: never started from its plan")


def measure(runs: int) -> dict[str, Any]:
    """Per server: the direct, plan-path and full-launcher medians (ms) and what each adds."""
    with tempfile.TemporaryDirectory(prefix="plugman-launcher-bench-") as tmp:
        root = Path(tmp)
        project, home = root / "project", root / "plugman-home"
        project.mkdir()
        (project / ".git").mkdir()  # a project the launcher finds from its folder
        minimal = root / "minimal.py"
        minimal.write_text(MINIMAL)
        scripts = {"minimal": minimal, "notes": NOTES}
        write_config(home, **scripts)
        env = {**os.environ, "PLUGMAN_HOME": str(home), "PLUGMAN_SECRETS": "file"}
        for name in [n for n in env if n.startswith(("PLUGMAN_OPT_", "PLUGMAN_FAULT"))]:
            del env[name]
        env.pop("PLUGMAN_NO_PLANS", None)
        env.pop("PLUGMAN_LAUNCH_TRACE", None)
        found: dict[str, Any] = {}
        for name, script in scripts.items():
            launched = [sys.executable, "-m", "plugman", "mcp", "run", name]
            ways = {
                "direct": ([sys.executable, str(script)], env),
                "launched": (launched, env),
                "full": (launched, {**env, "PLUGMAN_NO_PLANS": "1"}),
            }
            start(*ways["direct"], project)  # warm-up: the OS caches, .pyc files
            start(*ways["full"], project)
            planned(launched, env, project, root / "trace")
            times: dict[str, list[float]] = {way: [] for way in ways}
            for round_ in range(runs):
                order = list(ways) if round_ % 2 == 0 else list(reversed(ways))
                for way in order:
                    times[way].append(start(*ways[way], project))
            medians = {k: statistics.median(v) * 1000 for k, v in times.items()}
            found[name] = {
                "direct_ms": medians["direct"],
                "launched_ms": medians["launched"],
                "added_ms": medians["launched"] - medians["direct"],
                "full_ms": medians["full"],
                "full_added_ms": medians["full"] - medians["direct"],
                "runs": runs,
            }
        return found


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="starts per way and server")
    parser.add_argument("--quick", action="store_true", help="5 starts (CI)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    found = measure(5 if args.quick else args.runs)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    body = {"python": platform.python_version(), "cpus": os.cpu_count(), "servers": found}
    RESULTS.write_text(json.dumps(body, indent=2) + "\n")
    for name, row in found.items():
        print(
            f"{name}: direct {row['direct_ms']:.1f} ms; plugman mcp run from its plan "
            f"{row['launched_ms']:.1f} ms, added {row['added_ms']:+.1f} ms (goal <= +30 ms); "
            f"full launcher {row['full_ms']:.1f} ms, added {row['full_added_ms']:+.1f} ms "
            f"(medians of {row['runs']}, interleaved)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Time the server launcher adds per server start: `plugman mcp run NAME` against the server
started directly.

What an agent waits for when it starts a server: from spawning the process to the answer to
its MCP `initialize` request. Two servers, each configured as a user-scope stdio server under a
throw-away PLUGMAN_HOME (so `mcp run` resolves every scope as it does for an agent):

* minimal: a few lines of Python answering `initialize` by hand (no SDK), so the difference is
  the launcher's own cost (a Python start, plugman's fast path, resolving the config, exec);
* notes: the sample notes server on the MCP SDK, a realistic server start.

The two ways alternate, start after start, so a load spike on the (busy, 2-core) machine hits
both alike; each answer is checked (`result.serverInfo`), never timed as a fast failure. The
launcher's added cost is the difference of the medians (same run). The launcher execs the
server (no process stays in between), so it adds nothing per call after the start.

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


def measure(runs: int) -> dict[str, Any]:
    """Per server: the direct and launched medians (ms) and the launcher's added cost."""
    with tempfile.TemporaryDirectory(prefix="plugman-launcher-bench-") as tmp:
        root = Path(tmp)
        project, home = root / "project", root / "plugman-home"
        project.mkdir()
        minimal = root / "minimal.py"
        minimal.write_text(MINIMAL)
        scripts = {"minimal": minimal, "notes": NOTES}
        write_config(home, **scripts)
        env = {**os.environ, "PLUGMAN_HOME": str(home), "PLUGMAN_SECRETS": "file"}
        found: dict[str, Any] = {}
        for name, script in scripts.items():
            direct = [sys.executable, str(script)]
            launched = [sys.executable, "-m", "plugman", "mcp", "run", name]
            start(direct, env, project)  # warm-up: the OS caches, .pyc files
            start(launched, env, project)
            times: dict[str, list[float]] = {"direct": [], "launched": []}
            for _ in range(runs):
                times["direct"].append(start(direct, env, project))
                times["launched"].append(start(launched, env, project))
            medians = {k: statistics.median(v) * 1000 for k, v in times.items()}
            found[name] = {
                "direct_ms": medians["direct"],
                "launched_ms": medians["launched"],
                "added_ms": medians["launched"] - medians["direct"],
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
            f"{name}: direct {row['direct_ms']:.1f} ms, through plugman mcp run "
            f"{row['launched_ms']:.1f} ms, added {row['added_ms']:+.1f} ms "
            f"(median of {row['runs']})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Per-call latency that ``plugman mcp serve`` adds in front of an MCP server.

Two client sessions stay open side by side, both over stdio:

* direct: the sample notes server (``notes_server.py``), tool ``echo``;
* gateway: ``plugman mcp serve`` with that same server as its only backend (a user-scope
  ``[mcp_servers.notes]`` entry under a throw-away ``PLUGMAN_HOME``), tool ``mcp__notes__echo``.

After an untimed warm-up of each, the timed calls alternate between the two paths in blocks of
``--block`` calls, so a load spike on the (busy, 2-core) machine hits both alike. Every call's
result is checked (the echoed text, no error), so a failure can never be timed as a fast call.
No hook is configured: this is the cost of the hop itself (one more JSON-RPC round trip over
pipes, and the gateway's routing), not of running hooks.

Goal: the gateway adds at most 2 ms at p50. Results go to ``bench/results/gateway-overhead.json``.

Usage: ``.venv/bin/python bench/gateway_overhead.py [--calls 1000] [--warmup 100] [--block 50]
[--quick]``
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
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTES = REPO_ROOT / "sample-plugins" / "plugins" / "notes-server" / "server" / "notes_server.py"
RESULTS = REPO_ROOT / "bench" / "results" / "gateway-overhead.json"
GOAL_P50_MS = 2.0
QUICK_CALLS = 300
QUICK_WARMUP = 30
READ_TIMEOUT = 30.0
TEXT = "hello from the gateway benchmark"
LOCAL_APP = """
import typer
from plugman.cli.app import RootGroup, root
from plugman.cli.serve import serve
app = typer.Typer(cls=RootGroup, pretty_exceptions_enable=False, add_completion=False)
app.callback()(root)
mcp = typer.Typer()
mcp.command("serve")(serve)
app.add_typer(mcp, name="mcp")
app(prog_name="plugman")
"""


class BenchError(RuntimeError):
    """A call did not do what it should."""


@dataclass
class Lane:
    label: str
    tool: str
    client: Any = None
    ms: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        ordered = sorted(self.ms)
        return {
            "p50_ms": percentile(ordered, 50),
            "p95_ms": percentile(ordered, 95),
            "mean_ms": statistics.fmean(ordered),
            "min_ms": ordered[0],
            "max_ms": ordered[-1],
        }


def percentile(ordered: list[float], pct: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    rank = max(1, round(pct / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def gateway_argv(project: Path) -> list[str]:
    """``plugman mcp serve`` as mounted, or the same command in a local typer app."""
    probe = [sys.executable, "-m", "plugman", "mcp", "serve", "--help"]
    mounted = subprocess.run(probe, capture_output=True, timeout=60, check=False).returncode == 0
    launcher = ["-m", "plugman"] if mounted else ["-c", LOCAL_APP]
    return [sys.executable, *launcher, "--project", str(project), "mcp", "serve"]


def write_config(home: Path) -> None:
    config = home / "config"
    config.mkdir(parents=True)
    (config / "plugman.toml").write_text(
        f"[mcp_servers.notes]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(NOTES))}]\n"
    )


async def call(path: Lane) -> float:
    started = time.perf_counter()
    result = await path.client.call_tool(path.tool, {"text": TEXT})
    elapsed = (time.perf_counter() - started) * 1000.0
    texts = [block.text for block in result.content if block.type == "text"]
    if result.is_error or texts != [TEXT]:
        raise BenchError(f"{path.label}: unexpected result {result!r}")
    return elapsed


async def measure(args: argparse.Namespace, home: Path, errlog: Any) -> list[Lane]:
    from mcp import Client, StdioServerParameters, stdio_client

    project = home / "project"
    project.mkdir()
    env = {**os.environ, "PLUGMAN_HOME": str(home), "PLUGMAN_MANAGED_DIR": str(home / "managed")}
    direct = StdioServerParameters(command=sys.executable, args=[str(NOTES)], env=env)
    argv = gateway_argv(project)
    through = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
    paths = [Lane("direct", "echo"), Lane("gateway", "mcp__notes__echo")]
    async with AsyncExitStack() as stack:
        for path, params in zip(paths, (direct, through), strict=True):
            client = Client(
                stdio_client(params, errlog=errlog),
                mode="legacy",
                read_timeout_seconds=READ_TIMEOUT,
            )
            path.client = await stack.enter_async_context(client)
        for path in paths:
            for _ in range(args.warmup):
                await call(path)
        done = 0
        while done < args.calls:
            block = min(args.block, args.calls - done)
            for path in paths:
                path.ms += [await call(path) for _ in range(block)]
            done += block
    return paths


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="timed calls per path")
    parser.add_argument("--warmup", type=int, default=100, help="untimed calls per path first")
    parser.add_argument("--block", type=int, default=50, help="calls per path before switching")
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK_CALLS} calls, {QUICK_WARMUP} warm-up"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.calls, args.warmup = QUICK_CALLS, QUICK_WARMUP
    if min(args.calls, args.block) < 1 or args.warmup < 0:
        parser.error("--calls and --block must be at least 1, --warmup at least 0")
    return args


def run_lanes(args: argparse.Namespace) -> list[Lane]:
    """Both paths, timed, in a throw-away PLUGMAN_HOME (raises BenchError on a bad call)."""
    with tempfile.TemporaryDirectory(prefix="plugman-bench-") as tmp:
        home = Path(tmp)
        write_config(home)
        with (home / "servers.stderr").open("w") as errlog:
            return anyio.run(measure, args, home, errlog)


def overhead_ms(paths: list[Lane]) -> dict[str, float]:
    """What the gateway adds over the direct path: p50, p95 and mean, in ms."""
    rows = {path.label: path.summary() for path in paths}
    keys = ("p50_ms", "p95_ms", "mean_ms")
    return {key: rows["gateway"][key] - rows["direct"][key] for key in keys}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    load_before = os.getloadavg()
    try:
        paths = run_lanes(args)
    except BenchError as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    load_after = os.getloadavg()
    report(args, paths, (load_before[0], load_after[0]))
    return 0


def report(args: argparse.Namespace, paths: list[Lane], load: tuple[float, float]) -> None:
    rows = {path.label: path.summary() for path in paths}
    overhead = overhead_ms(paths)
    print(
        f"gateway overhead: {args.calls} calls of notes `echo` per path (after {args.warmup} "
        f"warm-up), alternating blocks of {args.block}; {platform.python_implementation()} "
        f"{platform.python_version()}; load (1 min) before/after {load[0]:.2f}/{load[1]:.2f} "
        f"on {os.cpu_count()} CPUs\n"
    )
    header = f"{'path':<10} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8} {'min ms':>8} {'max ms':>8}"
    print(header)
    print("-" * len(header))
    for label, row in rows.items():
        cells = (row[k] for k in ("p50_ms", "p95_ms", "mean_ms", "min_ms", "max_ms"))
        print(f"{label:<10} " + " ".join(f"{value:8.3f}" for value in cells))
    print(
        f"{'overhead':<10} {overhead['p50_ms']:8.3f} {overhead['p95_ms']:8.3f} "
        f"{overhead['mean_ms']:8.3f}"
    )
    passed = overhead["p50_ms"] <= GOAL_P50_MS
    print(
        f"\ngoal: the gateway adds at most {GOAL_P50_MS:g} ms at p50: "
        f"{'PASS' if passed else 'FAIL'} ({overhead['p50_ms']:.3f} ms)"
    )
    payload = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "calls": args.calls,
        "warmup": args.warmup,
        "block": args.block,
        "load_average_before_after": list(load),
        "paths": rows,
        "overhead": overhead,
        "goal_p50_ms": GOAL_P50_MS,
        "goal_met": passed,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    sys.exit(main())

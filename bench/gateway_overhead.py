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

Goals (issue 15): the gateway adds at most 1 ms at p50 and 3 ms at p99.

Then the first answers: a gateway with the notes server and a server that takes SLOW_START
seconds to start is spawned with ``--first-list-wait 0``, and the bench times (from the spawn)
its initialize result, its first ``tools/list`` (which should hold the notes tools only: the
gateway answers with the backends that are ready) and the ``tools/list_changed`` that announces
the slow server's tool. Before issue 15 the first list waited for every backend.

Then the first lists (issue 24): the notes server and one that takes SLOW_LIST seconds to start,
each time from a fresh spawn to its first ``tools/list`` answer and how many tools it held:
"today" (``--first-list-wait 0`` and nothing remembered: issue 15's answer at once, with the
backends up by then), "first session" (nothing remembered, the default wait of 5 s, shorter than
the slow server takes), and "remembered" (after one session that saw every server up: the
catalogs are listed from the gateway's memory while the slow server still starts).

Results go to ``bench/results/gateway-overhead.json``.

Usage: ``.venv/bin/python bench/gateway_overhead.py [--calls 1000] [--warmup 100] [--block 50]
[--quick]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTES = REPO_ROOT / "sample-plugins" / "plugins" / "notes-server" / "server" / "notes_server.py"
RESULTS = REPO_ROOT / "bench" / "results" / "gateway-overhead.json"
GOAL_P50_MS = 1.0
GOAL_P99_MS = 3.0
SLOW_START = 3.0
SLOW = f"""
import time
time.sleep({SLOW_START})
from mcp.server.mcpserver import MCPServer
server = MCPServer("slow")


@server.tool()
def ping() -> str:
    return "pong"


server.run()
"""
SLOW_LIST = 6.0
QUICK_CALLS = 300
QUICK_WARMUP = 30
READ_TIMEOUT = 30.0
TEXT = "hello from the gateway benchmark"


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
            "p99_ms": percentile(ordered, 99),
            "mean_ms": statistics.fmean(ordered),
            "min_ms": ordered[0],
            "max_ms": ordered[-1],
        }


def percentile(ordered: list[float], pct: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    rank = max(1, round(pct / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def gateway_argv(project: Path) -> list[str]:
    return [sys.executable, "-m", "plugman", "--project", str(project), "mcp", "serve"]


def write_config(home: Path, **scripts: Path) -> None:
    """User scope: one stdio server per name, running that Python script."""
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "plugman.toml").write_text(
        "".join(
            f"[mcp_servers.{name}]\ncommand = {json.dumps(sys.executable)}\n"
            f"args = [{json.dumps(str(script))}]\n"
            for name, script in scripts.items()
        )
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
    paths = [Lane("direct", "echo"), Lane("gateway", "notes__echo")]
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
        write_config(home, notes=NOTES)
        with (home / "servers.stderr").open("w") as errlog:
            return anyio.run(measure, args, home, errlog)


async def first_answers(home: Path, errlog: Any) -> dict[str, float]:
    """Seconds from spawning a gateway (notes + a server slow to start) to its initialize
    result, its first tools/list, and the list_changed that brings the slow server's tool."""
    from mcp import Client, StdioServerParameters, stdio_client, types

    project = home / "project"
    project.mkdir()
    env = {**os.environ, "PLUGMAN_HOME": str(home), "PLUGMAN_MANAGED_DIR": str(home / "managed")}
    argv = [*gateway_argv(project), "--first-list-wait", "0"]  # issue 15's answer at once
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    started = time.perf_counter()
    client = Client(
        stdio_client(params, errlog=errlog),
        mode="legacy",
        read_timeout_seconds=READ_TIMEOUT,
        message_handler=on_message,
    )
    async with client:
        initialized = time.perf_counter() - started
        first = {tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools}
        listed = time.perf_counter() - started
        if "slow__ping" in first:
            raise BenchError("the first list waited for the slow server")
        while True:
            with anyio.fail_after(SLOW_START + READ_TIMEOUT):
                await changed.wait()
            changed = anyio.Event()
            now = await client.list_tools(cache_mode="refresh")
            if "slow__ping" in {tool.name for tool in now.tools}:
                return {
                    "initialize_s": initialized,
                    "first_list_s": listed,
                    "first_list_tools": float(len(first)),
                    "slow_announced_s": time.perf_counter() - started,
                }


def run_first_answers() -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="plugman-bench-") as tmp:
        home = Path(tmp)
        (home / "slow.py").write_text(SLOW)
        write_config(home, notes=NOTES, slow=home / "slow.py")
        with (home / "servers.stderr").open("w") as errlog:
            return anyio.run(first_answers, home, errlog)


@dataclass
class FirstList:
    seconds: float  # from the spawn to the first tools/list answer
    tools: int
    of: int  # tools of every backend


async def first_list(home: Path, errlog: Any, *options: str, until: str = "") -> FirstList:
    """A gateway spawned in `home`: its first tools/list, timed; with `until`, the session then
    stays until that tool is listed (so the gateway remembers every server)."""
    from mcp import Client, StdioServerParameters, stdio_client

    env = {**os.environ, "PLUGMAN_HOME": str(home), "PLUGMAN_MANAGED_DIR": str(home / "managed")}
    argv = [*gateway_argv(home / "project"), *options]
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
    started = time.perf_counter()
    client = Client(stdio_client(params, errlog=errlog), mode="legacy", read_timeout_seconds=60)
    async with client:
        first = {tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools}
        took = time.perf_counter() - started
        names = first
        with anyio.fail_after(SLOW_LIST + READ_TIMEOUT):
            while until and until not in names:
                await anyio.sleep(0.2)
                names = {t.name for t in (await client.list_tools(cache_mode="refresh")).tools}
    return FirstList(took, len(first), len(names))


def run_first_lists() -> dict[str, FirstList]:
    """The three first lists (see the module docstring), each gateway in its own home."""
    found: dict[str, FirstList] = {}
    for label, options in (("today", ("--first-list-wait", "0")), ("first session", ())):
        with tempfile.TemporaryDirectory(prefix="plugman-bench-") as tmp:
            home = Path(tmp)
            (home / "project").mkdir()
            (home / "slow.py").write_text(SLOW.replace(f"{SLOW_START}", f"{SLOW_LIST}"))
            write_config(home, notes=NOTES, slow=home / "slow.py")
            with (home / "servers.stderr").open("w") as errlog:
                found[label] = anyio.run(first_list, home, errlog, *options)
                if label == "first session":
                    every = anyio.run(partial(first_list, home, errlog, until="slow__ping")).of
                    found["remembered"] = anyio.run(first_list, home, errlog)
    return {label: FirstList(f.seconds, f.tools, every) for label, f in found.items()}


def overhead_ms(paths: list[Lane]) -> dict[str, float]:
    """What the gateway adds over the direct path: p50, p95 and mean, in ms."""
    rows = {path.label: path.summary() for path in paths}
    keys = ("p50_ms", "p95_ms", "p99_ms", "mean_ms")
    return {key: rows["gateway"][key] - rows["direct"][key] for key in keys}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    load_before = os.getloadavg()
    try:
        paths = run_lanes(args)
        first = run_first_answers()
        lists = run_first_lists()
    except BenchError as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    load_after = os.getloadavg()
    report(args, paths, (load_before[0], load_after[0]), first, lists)
    return 0


def report(
    args: argparse.Namespace,
    paths: list[Lane],
    load: tuple[float, float],
    first: dict[str, float],
    lists: dict[str, FirstList],
) -> None:
    rows = {path.label: path.summary() for path in paths}
    overhead = overhead_ms(paths)
    print(
        f"gateway overhead: {args.calls} calls of notes `echo` per path (after {args.warmup} "
        f"warm-up), alternating blocks of {args.block}; {platform.python_implementation()} "
        f"{platform.python_version()}; load (1 min) before/after {load[0]:.2f}/{load[1]:.2f} "
        f"on {os.cpu_count()} CPUs\n"
    )
    keys = ("p50_ms", "p95_ms", "p99_ms", "mean_ms", "min_ms", "max_ms")
    header = f"{'path':<10} " + " ".join(f"{key.removesuffix('_ms') + ' ms':>8}" for key in keys)
    print(header)
    print("-" * len(header))
    for label, row in rows.items():
        print(f"{label:<10} " + " ".join(f"{row[key]:8.3f}" for key in keys))
    print(f"{'overhead':<10} " + " ".join(f"{overhead[key]:8.3f}" for key in keys[:4]))
    passed = overhead["p50_ms"] <= GOAL_P50_MS and overhead["p99_ms"] <= GOAL_P99_MS
    print(
        f"\ngoal: the gateway adds at most {GOAL_P50_MS:g} ms at p50 and {GOAL_P99_MS:g} ms at "
        f"p99: {'PASS' if passed else 'FAIL'} ({overhead['p50_ms']:.3f} / "
        f"{overhead['p99_ms']:.3f} ms)"
    )
    print(
        f"\nfirst answers, notes + a server {SLOW_START:g} s slow to start: initialize "
        f"{first['initialize_s']:.2f} s, first tools/list {first['first_list_s']:.2f} s "
        f"({first['first_list_tools']:.0f} tools), slow server announced "
        f"{first['slow_announced_s']:.2f} s"
    )
    print(f"\nfirst tools/list, notes + a server {SLOW_LIST:g} s slow to start:")
    for label, found in lists.items():
        print(f"  {label:<14} {found.seconds:5.2f} s, {found.tools} of {found.of} tools")
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
        "goal_p99_ms": GOAL_P99_MS,
        "first_answers": first,
        "first_lists": {label: vars(found) for label, found in lists.items()},
        "goal_met": passed,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    sys.exit(main())

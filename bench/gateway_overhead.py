"""Per-call latency that ``plugman mcp serve`` adds in front of an MCP server.

Four client sessions stay open side by side:

* direct: the sample notes server (``notes_server.py``) over stdio, tool ``echo``;
* gateway: ``plugman mcp serve`` over stdio with that same server as its only backend (a
  user-scope ``[mcp_servers.notes]`` entry under a throw-away ``PLUGMAN_HOME``), tool
  ``notes__echo``;
* http: the same gateway served with ``--transport http`` on loopback (issue 36: its added cost
  toward the stdio gateway's, +3 ms at p50), through the SDK's client;
* http, raw: the same HTTP gateway through a minimal keep-alive client (``RawHttp``): what the
  gateway itself adds, without the SDK client's own HTTP machinery.

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

Then the remembered first list (issue 36): after one session that saw the notes server up, the
time from spawning ``plugman mcp serve`` (over pipes, raw JSON-RPC) to its first ``tools/list``
answer, beside the floor (``python -c pass``) and the same gateway with its early answers turned
off (``PLUGMAN_GATEWAY_EARLY=0``: the full server, as before issue 36), interleaved round after
round (order reversed every other round), medians and the children's CPU time. Goal: floor +
150 ms.

Results go to ``bench/results/gateway-overhead.json``.

Usage: ``.venv/bin/python bench/gateway_overhead.py [--calls 1000] [--warmup 100] [--block 50]
[--quick]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack, contextmanager
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
GOAL_HTTP_P50_MS = 3.0  # issue 36: the HTTP gateway's added cost at p50
GOAL_EARLY_MS = 150.0  # issue 36: the remembered first list, over the floor
EARLY_ROUNDS = 10
QUICK_EARLY_ROUNDS = 5
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
    paths = [
        Lane("direct", "echo"),
        Lane("gateway", "notes__echo"),
        Lane("http", "notes__echo"),
        Lane("http, raw", "notes__echo"),
    ]
    async with AsyncExitStack() as stack:
        for path, params in zip(paths, (direct, through), strict=False):
            client = Client(
                stdio_client(params, errlog=errlog),
                mode="legacy",
                read_timeout_seconds=READ_TIMEOUT,
            )
            path.client = await stack.enter_async_context(client)
        url = stack.enter_context(http_gateway(project, env, errlog))
        client = Client(url, mode="legacy", read_timeout_seconds=READ_TIMEOUT)
        paths[2].client = await stack.enter_async_context(client)
        paths[3].client = RawHttp(url)
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


class RawHttp:
    """A minimal streamable-HTTP client on one keep-alive connection (http.client, blocking):
    the HTTP gateway's own cost per call, without the SDK client's (httpx2, its tasks)."""

    def __init__(self, url: str) -> None:
        import http.client
        from urllib.parse import urlsplit

        where = urlsplit(url)
        self.path = where.path
        self.connection = http.client.HTTPConnection(where.hostname or "", where.port)
        self.headers = {"Content-Type": "application/json", "Accept": ACCEPT}
        _, session = self._post(INITIALIZE)
        self.headers |= {"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
        self._post(LIST_REQUESTS[0])
        self.ident = 10

    def _post(self, message: dict[str, Any]) -> tuple[dict[str, Any], str]:
        self.connection.request("POST", self.path, json.dumps(message), self.headers)
        response = self.connection.getresponse()
        body = response.read()
        found = json.loads(body) if body and response.status == 200 else {}
        return found, response.getheader("mcp-session-id") or ""

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        from mcp.types import CallToolResult

        self.ident += 1
        params = {"name": name, "arguments": arguments}
        request = {"jsonrpc": "2.0", "id": self.ident, "method": "tools/call", "params": params}
        answer, _ = self._post(request)
        if "result" not in answer:
            raise BenchError(f"raw HTTP call failed: {answer!r}")
        return CallToolResult.model_validate(answer["result"])


ACCEPT = "application/json, text/event-stream"


@contextmanager
def http_gateway(project: Path, env: dict[str, str], errlog: Any) -> Iterator[str]:
    """`plugman mcp serve --transport http` on a free loopback port: its URL, once it listens."""
    argv = [*gateway_argv(project), "--transport", "http", "--port", "0"]
    process = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        if "listening on " not in line:
            raise BenchError(f"the HTTP gateway did not start: {line!r}")
        yield line.split("listening on ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(READ_TIMEOUT)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="timed calls per path")
    parser.add_argument("--warmup", type=int, default=100, help="untimed calls per path first")
    parser.add_argument("--block", type=int, default=50, help="calls per path before switching")
    parser.add_argument(
        "--rounds", type=int, default=EARLY_ROUNDS, help="rounds of the remembered first list"
    )
    parser.add_argument(
        "--only",
        choices=("calls", "early"),
        help="only the per-call lanes, or only the remembered first list",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_CALLS} calls, {QUICK_WARMUP} warm-up, {QUICK_EARLY_ROUNDS} rounds",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.calls, args.warmup = QUICK_CALLS, QUICK_WARMUP
        args.rounds = min(args.rounds, QUICK_EARLY_ROUNDS)
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


def overhead_ms(paths: list[Lane], label: str = "gateway") -> dict[str, float]:
    """What the gateway (`label`: gateway over stdio, http over HTTP) adds over the direct
    path: p50, p95, p99 and mean, in ms."""
    rows = {path.label: path.summary() for path in paths}
    keys = ("p50_ms", "p95_ms", "p99_ms", "mean_ms")
    return {key: rows[label][key] - rows["direct"][key] for key in keys}


def http_overhead_ms(paths: list[Lane], label: str = "http") -> dict[str, float]:
    """What the gateway over HTTP adds over the direct path (as overhead_ms), called through the
    SDK's client (`http`), or through a minimal one (`http, raw`: the gateway's own cost)."""
    return overhead_ms(paths, label)


@dataclass
class Started:
    """Medians over the rounds: seconds from the spawn to the answer, and the child's CPU for
    its whole session (the imports after the answer and the backend's start included)."""

    seconds: float
    cpu: float


FLOOR = "floor"
EARLY = "remembered, early"
FULL = "remembered, full server"


def run_remembered_first_list(rounds: int = EARLY_ROUNDS) -> dict[str, Started]:
    """The remembered first list beside the floor and the full server (module docstring)."""
    with tempfile.TemporaryDirectory(prefix="plugman-bench-") as tmp:
        home = Path(tmp)
        (home / "project").mkdir()
        write_config(home, notes=NOTES)
        env = {**os.environ, "PLUGMAN_HOME": str(home), "PLUGMAN_MANAGED_DIR": f"{home}/managed"}
        argv = gateway_argv(home / "project")
        with (home / "servers.stderr").open("w") as errlog:
            anyio.run(partial(first_list, home, errlog, until="notes__echo"))  # remembered
        variants = {
            FLOOR: ([sys.executable, "-c", "pass"], env),
            EARLY: (argv, env),
            FULL: (argv, {**env, "PLUGMAN_GATEWAY_EARLY": "0"}),
        }
        found: dict[str, list[tuple[float, float]]] = {label: [] for label in variants}
        for turn in range(rounds):
            order = list(variants) if turn % 2 == 0 else list(reversed(variants))
            for label in order:
                found[label].append(spawn_to_list(*variants[label], listing=label != FLOOR))
    return {
        label: Started(statistics.median(s for s, _ in runs), statistics.median(c for _, c in runs))
        for label, runs in found.items()
    }


INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
LIST_REQUESTS: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
]


def spawn_to_list(argv: list[str], env: dict[str, str], *, listing: bool) -> tuple[float, float]:
    """(seconds from the spawn to the first tools/list answer, or to the exit of a command that
    lists nothing; the child's CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdin is not None and process.stdout is not None
    if listing:
        process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        process.stdin.flush()
        json.loads(process.stdout.readline())
        process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in LIST_REQUESTS))
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        if not any(t["name"] == "notes__echo" for t in answer.get("result", {}).get("tools", [])):
            raise BenchError(f"the first list was not the remembered one: {answer!r}")
    else:
        process.wait()
    took = time.perf_counter() - started
    process.stdin.close()
    process.wait(READ_TIMEOUT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return took, cpu


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    load_before = os.getloadavg()
    try:
        paths = run_lanes(args) if args.only in (None, "calls") else []
        first = run_first_answers() if args.only is None else {}
        lists = run_first_lists() if args.only is None else {}
        early = run_remembered_first_list(args.rounds) if args.only in (None, "early") else {}
    except BenchError as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    load_after = os.getloadavg()
    report(args, paths, (load_before[0], load_after[0]), first, lists, early)
    return 0


def report(
    args: argparse.Namespace,
    paths: list[Lane],
    load: tuple[float, float],
    first: dict[str, float],
    lists: dict[str, FirstList],
    early: dict[str, Started] | None = None,
) -> None:
    print(
        f"gateway overhead: {platform.python_implementation()} {platform.python_version()}; "
        f"load (1 min) before/after {load[0]:.2f}/{load[1]:.2f} on {os.cpu_count()} CPUs\n"
    )
    passed = report_calls(args, paths) if paths else None
    if first:
        report_first(first, lists)
    if early:
        report_early(early)
    payload = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "calls": args.calls,
        "warmup": args.warmup,
        "block": args.block,
        "load_average_before_after": list(load),
        "paths": {path.label: path.summary() for path in paths},
        "overhead": overhead_ms(paths) if paths else {},
        "http_overhead": http_overhead_ms(paths) if paths else {},
        "http_raw_overhead": http_overhead_ms(paths, "http, raw") if paths else {},
        "goal_p50_ms": GOAL_P50_MS,
        "goal_p99_ms": GOAL_P99_MS,
        "goal_http_p50_ms": GOAL_HTTP_P50_MS,
        "first_answers": first,
        "first_lists": {label: vars(found) for label, found in lists.items()},
        "remembered_first_list": {label: vars(found) for label, found in (early or {}).items()},
        "goal_met": passed,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


def report_early(early: dict[str, Started]) -> None:
    floor = early[FLOOR].seconds * 1000
    print("\nremembered first tools/list (from the spawn; medians, interleaved rounds):")
    for label, found in early.items():
        over = f"(floor {found.seconds * 1000 - floor:+6.1f} ms)" if label != FLOOR else ""
        cpu = found.cpu * 1000
        print(f"  {label:<24} {found.seconds * 1000:7.1f} ms {over:<22} session cpu {cpu:6.0f} ms")
    added = early[EARLY].seconds * 1000 - floor
    verdict = "PASS" if added <= GOAL_EARLY_MS else "FAIL"
    print(f"goal: the remembered first list within floor + {GOAL_EARLY_MS:g} ms: {verdict}")


def report_calls(args: argparse.Namespace, paths: list[Lane]) -> bool:
    """The per-call table and its goals; whether the stdio goal was met."""
    rows = {path.label: path.summary() for path in paths}
    overhead, http = overhead_ms(paths), http_overhead_ms(paths)
    print(
        f"{args.calls} calls of notes `echo` per path (after {args.warmup} warm-up), "
        f"alternating blocks of {args.block}\n"
    )
    keys = ("p50_ms", "p95_ms", "p99_ms", "mean_ms", "min_ms", "max_ms")
    header = f"{'path':<14} " + " ".join(f"{key.removesuffix('_ms') + ' ms':>8}" for key in keys)
    print(header)
    print("-" * len(header))
    for label, row in rows.items():
        print(f"{label:<14} " + " ".join(f"{row[key]:8.3f}" for key in keys))
    raw = http_overhead_ms(paths, "http, raw")
    added = (("added (stdio)", overhead), ("added (http)", http), ("added (raw)", raw))
    for label, added_ms in added:
        print(f"{label:<14} " + " ".join(f"{added_ms[key]:8.3f}" for key in keys[:4]))
    passed = overhead["p50_ms"] <= GOAL_P50_MS and overhead["p99_ms"] <= GOAL_P99_MS
    print(
        f"\ngoal: the gateway adds at most {GOAL_P50_MS:g} ms at p50 and {GOAL_P99_MS:g} ms at "
        f"p99: {'PASS' if passed else 'FAIL'} ({overhead['p50_ms']:.3f} / "
        f"{overhead['p99_ms']:.3f} ms)"
    )
    for label, found in (("SDK client", http), ("raw client", raw)):
        verdict = "PASS" if found["p50_ms"] <= GOAL_HTTP_P50_MS else "FAIL"
        print(
            f"goal: over HTTP ({label}) it adds at most {GOAL_HTTP_P50_MS:g} ms at p50: "
            f"{verdict} ({found['p50_ms']:.3f} ms)"
        )
    return passed


def report_first(first: dict[str, float], lists: dict[str, FirstList]) -> None:
    print(
        f"\nfirst answers, notes + a server {SLOW_START:g} s slow to start: initialize "
        f"{first['initialize_s']:.2f} s, first tools/list {first['first_list_s']:.2f} s "
        f"({first['first_list_tools']:.0f} tools), slow server announced "
        f"{first['slow_announced_s']:.2f} s"
    )
    print(f"\nfirst tools/list, notes + a server {SLOW_LIST:g} s slow to start:")
    for label, found in lists.items():
        print(f"  {label:<14} {found.seconds:5.2f} s, {found.tools} of {found.of} tools")


if __name__ == "__main__":
    sys.exit(main())

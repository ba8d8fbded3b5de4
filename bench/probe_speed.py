"""Wall-clock speed of probing 10 stdio MCP servers at once against one at a time.

Ten copies of a server, under ten names, are probed with ``plugman.runtime.gateway.probe.probe``
(connect, list tools, resources and prompts, disconnect) with ``local_batch`` 1 (sequential), 3
(the default, as Claude Code) and 10 (all at once). The reference is one server probed alone
(the slowest of ``--runs`` runs); an untimed warm-up probe imports ``mcp`` first. Every run must
connect all ten servers, or the bench stops.

Two servers:
- the sample notes server (``sample-plugins/plugins/notes-server``). Its start-up is CPU work:
  about 1 s of one core importing ``mcp``. Ten of them need about 10 CPU-seconds, so on N cores
  no concurrency can beat 10/N s; the table shows that floor (the servers' measured CPU time
  divided by the cores) next to the wall time.
- a minimal stdlib-only server that sleeps 1 s before serving: start-up that waits rather than
  computes, as ``npx``/``uvx`` do on a cold cache. This isolates plugman's own overhead.

Goal: all ten at once within 1.5x of the slowest single server.

Usage: ``.venv/bin/python bench/probe_speed.py [--runs N] [--quick] [--save]``
(``--save`` writes ``bench/results/probe-speed.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from plugman.runtime.gateway.probe import probe

REPO = Path(__file__).resolve().parents[1]
NOTES = REPO / "sample-plugins" / "plugins" / "notes-server" / "server" / "notes_server.py"
COPIES = 10
TIMEOUT = 120.0
GOAL = 1.5
BATCHES = (
    (1, "sequential (batch 1)"),
    (3, "batch 3 (Claude Code's)"),
    (COPIES, "default (batch 10)"),
)
TINY_TITLE = "stdlib server, 1 s start-up sleep"
TINY = """
import json, sys, time
time.sleep(1.0)
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "tiny", "version": "0"}}
    else:
        result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(servers: dict[str, dict[str, Any]], batch: int, log_dir: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds the servers used)."""

    async def main() -> list[Any]:
        return await probe(servers, timeout=TIMEOUT, local_batch=batch, log_dir=log_dir)

    cpu, started = children_cpu(), time.perf_counter()
    results = anyio.run(main)
    elapsed, cpu = time.perf_counter() - started, children_cpu() - cpu
    broken = [f"{r.name}: {r.reason}" for r in results if r.state != "connected"]
    if broken:
        raise SystemExit("a server failed to connect:\n" + "\n".join(broken))
    return elapsed, cpu


def scenario(title: str, entry: dict[str, Any], runs: int, log_dir: Path) -> dict[str, Any]:
    many = {f"server-{i}": entry for i in range(COPIES)}
    single = max(timed({"server": entry}, 1, log_dir)[0] for _ in range(runs))
    rows: dict[str, float] = {"single server": single}
    cpu = 0.0
    for batch, label in BATCHES:
        best = min((timed(many, batch, log_dir) for _ in range(runs)), key=lambda t: t[0])
        rows[label], cpu = best[0], best[1]
    floor = max(single, cpu / (os.cpu_count() or 1))
    return {"server": title, "seconds": rows, "servers_cpu_s": cpu, "cpu_floor_s": floor}


def table(result: dict[str, Any]) -> str:
    rows = result["seconds"]
    single = rows["single server"]
    lines = [
        f"{result['server']}: {COPIES} copies",
        f"  {'mode':22} {'seconds':>8} {'x single':>9}",
    ]
    lines += [f"  {mode:22} {secs:8.2f} {secs / single:9.2f}" for mode, secs in rows.items()]
    all_at_once = rows[BATCHES[-1][1]]
    ratio = all_at_once / single
    floor = result["cpu_floor_s"]
    lines.append(
        f"  CPU floor for {COPIES} at once: {floor:.2f} s ({result['servers_cpu_s']:.1f} "
        f"CPU-s of servers / {os.cpu_count()} cores) = {floor / single:.2f}x single"
    )
    verdict = "met" if ratio <= GOAL else "missed"
    lines.append(f"  goal: all at once within {GOAL}x of one server: {verdict} ({ratio:.2f}x)")
    return "\n".join(lines)


def run_scenarios(runs: int, notes_server: bool = True) -> list[dict[str, Any]]:
    """Both scenarios (the stdlib server only when ``notes_server`` is false), in a temp dir."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "tiny.py").write_text(TINY)
        notes = {"command": sys.executable, "args": [str(NOTES)]}
        tiny = {"command": sys.executable, "args": [str(folder / "tiny.py")]}
        timed({"warm-up": notes}, 1, folder)  # imports mcp in this process, untimed
        results = [scenario("sample notes server", notes, runs, folder)] if notes_server else []
        results.append(scenario(TINY_TITLE, tiny, runs, folder))
        return results


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per mode (best is kept)")
    parser.add_argument("--save", action="store_true", help="write bench/results/probe-speed.json")
    parser.add_argument("--quick", action="store_true", help="1 run, the stdlib server only")
    args = parser.parse_args()
    if args.quick:
        args.runs = 1
    results = run_scenarios(args.runs, notes_server=not args.quick)
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, best of {args.runs}")
    for result in results:
        print(table(result))
    if args.save:
        out = REPO / "bench" / "results" / "probe-speed.json"
        body = {"cpus": os.cpu_count(), "runs": args.runs, "scenarios": results}
        out.write_text(json.dumps(body, indent=2) + "\n")
        print(f"saved {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()

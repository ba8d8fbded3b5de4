"""What the gateway's rate limits cost per call (issue 37; plugman.runtime.gateway.ratelimit).

A redis-server on a free loopback port (`--save "" --appendonly no`), then:

* in-process, interleaved in blocks: a Redis `PING` (one round trip: the floor), the limiter's
  check with a per-caller limit (one moving-window Lua script), with a per-caller and a per-tool
  limit (two), and the per-caller check counted in memory; plus the request inspection's
  parsing of a `tools/call` body (`inbound.parsed`);
* end to end: three `plugman mcp serve --transport http` gateways with the notes sample server
  (no limits; `--rate-limit` and `--tool-rate-limit` counted in that Redis; the same in memory),
  a minimal keep-alive client (bench/gateway_overhead.py's `RawHttp`) calling `notes__echo` on
  each in turn, block by block.

Limits are far above what is called, so every check is a full check that allows. Medians and
p99 in ms. Results go to ``bench/results/limit-check.json``.

Usage: ``.venv/bin/python bench/limit_check.py [--calls 2000] [--http-calls 500]``
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gateway_overhead import NOTES, TEXT, RawHttp, gateway_argv, percentile, write_config

RESULTS = Path(__file__).resolve().parent / "results" / "limit-check.json"
HIGH = "1000000/minute"
BLOCK = 50


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    port = free_port()
    argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    argv += ["--appendonly", "no", "--dir", str(folder)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > end or proc.poll() is not None:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(20)


Lanes = dict[str, Callable[[], Awaitable[Any]]]


async def timed(lanes: Lanes, calls: int) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {name: [] for name in lanes}
    for run in lanes.values():  # warm-up: connections, scripts loaded
        for _ in range(50):
            await run()
    done = 0
    while done < calls:
        for name, run in lanes.items():
            for _ in range(BLOCK):
                started = time.perf_counter()
                await run()
                found[name].append((time.perf_counter() - started) * 1000.0)
        done += BLOCK
    return found


async def in_process(redis_url: str, calls: int) -> dict[str, list[float]]:
    import redis.asyncio

    from plugman.runtime.gateway.inbound import Inbound, parsed
    from plugman.runtime.gateway.principal import Principal
    from plugman.runtime.gateway.ratelimit import Limiter, Rules

    who = Principal("alice@example.com", "https://idp.example")
    asked = Inbound("tools/call", "notes__echo", 1)
    client = redis.asyncio.Redis.from_url(redis_url)
    user = Limiter(Rules(HIGH, None, redis_url))
    both = Limiter(Rules(HIGH, HIGH, redis_url))
    memory = Limiter(Rules(HIGH, None, None))
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 12,
            "method": "tools/call",
            "params": {"name": "notes__echo", "arguments": {"text": TEXT}},
        }
    ).encode()
    headers = [(b"mcp-method", b"tools/call"), (b"mcp-name", b"notes__echo")]

    async def parse() -> None:
        parsed(body, headers)

    async def ping() -> None:
        await client.ping()

    lanes: Lanes = {
        "redis PING": ping,
        "check, per caller (Redis)": lambda: user.check(who, asked),
        "check, per caller and tool (Redis)": lambda: both.check(who, asked),
        "check, per caller (memory)": lambda: memory.check(who, asked),
        "inspection (parse a tools/call)": parse,
    }
    try:
        return await timed(lanes, calls)
    finally:
        await client.aclose()


@contextmanager
def gateway(project: Path, env: dict[str, str], *options: str) -> Iterator[str]:
    argv = [*gateway_argv(project), "--transport", "http", "--port", "0", *options]
    proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        if "listening on " not in line:
            raise RuntimeError(f"the HTTP gateway did not start: {line!r}")
        yield line.split("listening on ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait(30)


def end_to_end(redis_url: str, home: Path, calls: int) -> dict[str, list[float]]:
    write_config(home, notes=NOTES)
    project = home / "project"
    project.mkdir()
    env = {**os.environ, "PLUGMAN_HOME": str(home), "PLUGMAN_MANAGED_DIR": str(home / "managed")}
    limits = ("--rate-limit", HIGH, "--tool-rate-limit", HIGH)
    with ExitStack() as stack:
        urls = {
            "http, no limits": stack.enter_context(gateway(project, env)),
            "http, limits in Redis": stack.enter_context(
                gateway(project, {**env, "PLUGMAN_REDIS_URL": redis_url}, *limits)
            ),
            "http, limits in memory": stack.enter_context(gateway(project, env, *limits)),
        }

        def runner(client: RawHttp) -> Callable[[], Awaitable[Any]]:
            async def run() -> None:
                result = await client.call_tool("notes__echo", {"text": TEXT})
                if result.is_error:
                    raise RuntimeError(f"call failed: {result!r}")

            return run

        # connected once every gateway listens: uvicorn closes a connection idle for 5 s
        lanes = {name: runner(RawHttp(url)) for name, url in urls.items()}
        return anyio.run(timed, lanes, calls)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--http-calls", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, redis_server(Path(folder)) as url:
        found = anyio.run(in_process, url, args.calls)
        home = Path(folder) / "home"
        found |= end_to_end(url, home, args.http_calls)
    table = {}
    print("| lane | p50 ms | p99 ms |\n|---|---|---|")
    for name, ms in found.items():
        ordered = sorted(ms)
        row = {"p50": percentile(ordered, 50), "p99": percentile(ordered, 99), "n": len(ms)}
        table[name] = row
        print(f"| {name} | {row['p50']:.3f} | {row['p99']:.3f} |")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(table, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

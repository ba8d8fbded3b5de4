"""The gateway as a fleet (issue 37): what the distributed path adds over one replica, and how
many concurrent clients one replica serves.

The fleet is the tests' (``tests/integration/fleet.py``) in an organization's configuration:
identity from an OIDC issuer (``tests/support/oidc_issuer.py``, on loopback, RS256 JWTs) and
both rate limits (``--rate-limit`` and ``--tool-rate-limit``, ``LIMIT``: high enough never to
refuse here, so every check is a full check that allows). Every replica is a ``plugman mcp serve
--transport http --auth oidc`` (stateless) on loopback with its own copy of the ``who`` stdio
backend:

* ``one replica`` (the reference, ``ReplicaSpec(solo=True)``): alone, not behind the balancer,
  its limits counted in its own memory (one replica needs no Redis);
* ``fleet``: three replicas behind HAProxy 2.6 (round robin, health checks every 200 ms, retry on
  connection failure only), their limits counted in one shared redis-server.

Both lanes send the same JWT (minted once, valid for an hour: a client reuses its token until it
expires), so the added latency is what the distributed path adds: the balancer's hop and the
limits' round trips to Redis.

* **Added latency** (goal ≤ +3 ms p50, ≤ +5 ms p99): ``who__echo`` calls straight to the lone
  replica (``one replica``) and through HAProxy to the three (``fleet``), each lane on one
  keep-alive connection sending 2026-07-28 requests (one self-contained POST each: no session,
  ``_meta`` and the ``Mcp-Method`` / ``Mcp-Name`` headers, what the SDK's client sends). A raw
  client (``http.client``) rather than the SDK's: the SDK client's own work per call (~10 ms of
  CPU on this machine) would be most of each figure and all of its noise, and both lanes pay it
  alike. After an untimed warm-up, the lanes alternate in blocks of ``--block`` calls, so a load
  spike on the shared 2-core machine hits both alike; every answer is checked.
* **Clients per replica** (goal ≥ 1,000 concurrent): ``--clients`` clients against one replica
  of the fleet (``r1``: OIDC, limits in Redis; straight to it, not through HAProxy) at once, each
  sending the JWT, each on its own TCP connection (opened first, then all released together), each
  listing the tools and calling ``who__echo`` ``--calls-each`` times (2026-07-28 requests on
  asyncio streams: a real connection per client at the least client-side cost, so the 2-core
  machine's CPU goes to the replica rather than to 1,000 HTTP client objects). Reported:
  requests answered right and failed, p50 / p99 per request (queueing included), the wall time
  and the replica's RSS (its own process: now and peak, and its backend's). All the calls of a
  replica go to its one stdio backend, one after another: when that queue is longer than the
  gateway's backend ping timeout (10 s), the gateway takes the backend for dead and drops its
  session, and the calls in it fail ("the connection was lost during the call"). On this
  machine at a load of 10, 2,000 clients with 2 calls each got there (about 40 % answered).

Results go to ``bench/results/gateway-fleet.json``. Needs ``haproxy`` and ``redis-server`` on
PATH.

Usage: ``.venv/bin/python bench/gateway_fleet.py [--calls 1000] [--warmup 100] [--block 50]
[--clients 1000] [--calls-each 1] [--quick]``
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.append(str(REPO_ROOT))  # after PYTHONPATH: plugman still comes from the tree

from tests.integration.fleet import MODERN, Auth, Fleet, ReplicaSpec, fleet  # noqa: E402
from tests.support.oidc_issuer import Issuer  # noqa: E402

RESULTS = REPO_ROOT / "bench" / "results" / "gateway-fleet.json"
GOAL_P50_MS = 3.0
GOAL_P99_MS = 5.0
GOAL_CLIENTS = 1000
QUICK_CALLS = 300
QUICK_WARMUP = 30
REPLICAS = 3
SOLO = "solo"
LIMIT = "1000000/minute"  # per caller and per caller and tool: never refuses in a run
LIMITS = ("--rate-limit", LIMIT, "--tool-rate-limit", LIMIT)
AUDIENCE = "https://gateway.example/mcp"
TOKEN_LIFE = 3600  # seconds: outlives a full run
TEXT = "hello from the fleet benchmark"
ACCEPT = "application/json, text/event-stream"
CLIENT_TIMEOUT = 120.0


class BenchError(RuntimeError):
    """A call did not do what it should."""


def percentile(ordered: list[float], pct: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    rank = max(1, round(pct / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def request(method: str, params: dict[str, Any], ident: int) -> tuple[bytes, dict[str, str]]:
    """A 2026-07-28 request's body and headers (without the token)."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {"jsonrpc": "2.0", "id": ident, "method": method, "params": {**params, "_meta": meta}}
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "Mcp-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    if "name" in params:
        headers["Mcp-Name"] = str(params["name"])
    return json.dumps(body).encode(), headers


ECHO = {"name": "who__echo", "arguments": {"text": TEXT}}


def echoed(answer: dict[str, Any]) -> bool:
    content = answer.get("result", {}).get("content", [])
    return not answer.get("result", {}).get("isError") and [c.get("text") for c in content] == [
        TEXT
    ]


def listed(answer: dict[str, Any]) -> bool:
    return "who__echo" in {tool["name"] for tool in answer.get("result", {}).get("tools", [])}


# --- added latency -------------------------------------------------------------------------


@dataclass
class Lane:
    label: str
    url: str
    headers: dict[str, str]
    ms: list[float] = field(default_factory=list)
    connection: http.client.HTTPConnection | None = None

    def call(self, ident: int) -> float:
        if self.connection is None:
            port = int(self.url.split(":")[2].split("/")[0])
            self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        body, headers = request("tools/call", ECHO, ident)
        started = time.perf_counter()
        self.connection.request("POST", "/mcp", body, {**headers, **self.headers})
        response = self.connection.getresponse()
        data = response.read()
        elapsed = (time.perf_counter() - started) * 1000.0
        if response.status != 200 or not echoed(json.loads(data)):
            raise BenchError(f"{self.label}: {response.status} {data[:200]!r}")
        return elapsed

    def summary(self) -> dict[str, float]:
        ordered = sorted(self.ms)
        return {
            "p50_ms": percentile(ordered, 50),
            "p99_ms": percentile(ordered, 99),
            "mean_ms": statistics.fmean(ordered),
            "max_ms": ordered[-1],
        }


def added_latency(running: Fleet, calls: int, warmup: int, block: int) -> dict[str, Any]:
    """Both lanes, interleaved in blocks: their summaries and what the fleet's path adds."""
    token = dict(running.auth.headers())
    lanes = [
        Lane("one replica", running.replica(SOLO).url, token),
        Lane("fleet", running.url, token),
    ]
    ident = 0
    for lane in lanes:
        for _ in range(warmup):
            ident += 1
            lane.call(ident)
    done = 0
    while done < calls:
        size = min(block, calls - done)
        for lane in lanes if (done // block) % 2 == 0 else reversed(lanes):
            for _ in range(size):
                ident += 1
                lane.ms.append(lane.call(ident))
        done += size
    rows = {lane.label: lane.summary() for lane in lanes}
    added = {key: rows["fleet"][key] - rows["one replica"][key] for key in ("p50_ms", "p99_ms")}
    return {"lanes": rows, "added": added}


# --- clients per replica -------------------------------------------------------------------


@dataclass
class Crowd:
    clients: int
    connected: int = 0  # clients past their connect (or its failure)
    requests: int = 0
    ok: int = 0
    failed: int = 0
    wall_s: float = 0.0
    ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        ordered = sorted(self.ms) or [0.0]
        return {
            "clients": self.clients,
            "requests": self.requests,
            "ok": self.ok,
            "failed": self.failed,
            "wall_s": self.wall_s,
            "p50_ms": percentile(ordered, 50),
            "p99_ms": percentile(ordered, 99),
            "max_ms": ordered[-1],
            "errors": sorted(set(self.errors))[:5],
        }


async def exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, message: bytes
) -> dict[str, Any]:
    """One request on a keep-alive connection: the JSON answer (raises on anything but 200)."""
    writer.write(message)
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    body = await reader.readexactly(length)
    if status != 200:
        raise BenchError(f"HTTP {status}: {body[:120]!r}")
    found: dict[str, Any] = json.loads(body)
    return found


def raw(port: int, token: dict[str, str], method: str, params: dict[str, Any], ident: int) -> bytes:
    body, headers = request(method, params, ident)
    lines = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", f"Content-Length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in {**headers, **token}.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def one_client(
    port: int, token: dict[str, str], go: asyncio.Event, crowd: Crowd, calls_each: int
) -> None:
    """Connect, wait for everyone, then list and call on this client's own connection."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError as exc:
        crowd.failed += 1 + calls_each
        crowd.errors.append(f"connect: {exc}")
        return
    finally:
        crowd.connected += 1
    await go.wait()
    steps = [("tools/list", {}, listed)] + [("tools/call", ECHO, echoed)] * calls_each
    try:
        for ident, (method, params, check) in enumerate(steps, 1):
            crowd.requests += 1
            started = time.perf_counter()
            try:
                answer = await exchange(reader, writer, raw(port, token, method, params, ident))
            except (OSError, asyncio.IncompleteReadError, BenchError, ValueError) as exc:
                crowd.failed += len(steps) - ident + 1
                crowd.errors.append(f"{method}: {type(exc).__name__}: {exc}"[:160])
                return
            crowd.ms.append((time.perf_counter() - started) * 1000.0)
            if check(answer):
                crowd.ok += 1
            else:
                crowd.failed += 1
                crowd.errors.append(f"{method}: wrong answer {str(answer)[:120]}")
    finally:
        writer.close()


async def crowd_on(port: int, token: dict[str, str], clients: int, calls_each: int) -> Crowd:
    crowd = Crowd(clients)
    go = asyncio.Event()
    tasks = [
        asyncio.create_task(one_client(port, token, go, crowd, calls_each)) for _ in range(clients)
    ]
    deadline = time.monotonic() + CLIENT_TIMEOUT
    while crowd.connected < clients and time.monotonic() < deadline:
        await asyncio.sleep(0.01)  # every client connected before the clock starts
    started = time.perf_counter()
    go.set()
    await asyncio.wait_for(asyncio.gather(*tasks), CLIENT_TIMEOUT)
    crowd.wall_s = time.perf_counter() - started
    return crowd


def rss_kb(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak) of a process, in kB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0])
    return found


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(word) for word in path.read_text().split()] if path.exists() else []


def clients_per_replica(running: Fleet, clients: int, calls_each: int) -> dict[str, Any]:
    replica = running.replica("r1")
    assert replica.proc is not None
    before = rss_kb(replica.proc.pid)
    crowd = asyncio.run(crowd_on(replica.port, dict(running.auth.headers()), clients, calls_each))
    after = rss_kb(replica.proc.pid)
    backend = sum(rss_kb(pid).get("VmRSS", 0) for pid in children(replica.proc.pid))
    return {
        **crowd.summary(),
        "calls_each": calls_each,
        "rss_before_kb": before.get("VmRSS", 0),
        "rss_after_kb": after.get("VmRSS", 0),
        "rss_peak_kb": after.get("VmHWM", 0),
        "backend_rss_kb": backend,
    }


# --- driver --------------------------------------------------------------------------------


@dataclass
class Measured:
    latency: dict[str, Any]
    crowd: dict[str, Any]
    start_s: float
    load: tuple[float, float] = (0.0, 0.0)

    @property
    def latency_met(self) -> bool:
        added = self.latency["added"]
        return bool(added["p50_ms"] <= GOAL_P50_MS and added["p99_ms"] <= GOAL_P99_MS)

    @property
    def crowd_met(self) -> bool:
        return bool(self.crowd["clients"] >= GOAL_CLIENTS and self.crowd["failed"] == 0)


def missing() -> str:
    """Why the fleet cannot run here ("" when it can)."""
    absent = [tool for tool in ("haproxy", "redis-server") if not shutil.which(tool)]
    return f"{' and '.join(absent)} not on PATH" if absent else ""


def oidc_auth(issuer: Issuer) -> Auth:
    """`--auth oidc` against `issuer`; every request carries one token, minted here."""
    now = int(time.time())
    token = issuer.token(aud=AUDIENCE, iat=now, exp=now + TOKEN_LIFE)
    options = ("--auth", "oidc", "--issuer", issuer.issuer, "--audience", AUDIENCE)
    return Auth(options, {}, lambda: {"Authorization": f"Bearer {token}"})


def replica_specs() -> list[ReplicaSpec]:
    """The lone reference replica, then the fleet's (limits in the shared Redis)."""
    fleet_specs = [ReplicaSpec(f"r{n}", LIMITS) for n in range(1, REPLICAS + 1)]
    return [ReplicaSpec(SOLO, LIMITS, solo=True), *fleet_specs]


def measure(args: argparse.Namespace) -> Measured:
    """Start the issuer and the fleet in a temp folder, run both parts, stop everything."""
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="plugman-bench-fleet-") as tmp, Issuer() as issuer:
        started = time.perf_counter()
        folder = Path(tmp) / "fleet"
        auth = oidc_auth(issuer)
        with fleet(folder, replica_specs(), auth, share_redis=True) as running:
            start_s = time.perf_counter() - started
            latency = added_latency(running, args.calls, args.warmup, args.block)
            crowd = clients_per_replica(running, args.clients, args.calls_each)
    return Measured(latency, crowd, start_s, (load, os.getloadavg()[0]))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="timed calls per lane")
    parser.add_argument("--warmup", type=int, default=100, help="untimed calls per lane first")
    parser.add_argument("--block", type=int, default=50, help="calls per lane before switching")
    parser.add_argument("--clients", type=int, default=GOAL_CLIENTS, help="concurrent clients")
    parser.add_argument("--calls-each", type=int, default=1, help="calls per client (+1 list)")
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK_CALLS} calls, {QUICK_WARMUP} warm-up"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.calls, args.warmup = QUICK_CALLS, QUICK_WARMUP
    if min(args.calls, args.block, args.clients, args.calls_each) < 1 or args.warmup < 0:
        parser.error("--calls, --block, --clients and --calls-each must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if why := missing():
        print(f"FAILED: {why}", file=sys.stderr)
        return 1
    try:
        found = measure(args)
    except BenchError as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    report(args, found)
    return 0


def report(args: argparse.Namespace, found: Measured) -> None:
    print(
        f"gateway fleet: {platform.python_implementation()} {platform.python_version()}; load "
        f"(1 min) {found.load[0]:.2f} -> {found.load[1]:.2f} on {os.cpu_count()} CPUs; "
        f"one replica + {REPLICAS} replicas, Redis and HAProxy up in {found.start_s:.1f} s; "
        f"--auth oidc, --rate-limit and --tool-rate-limit {LIMIT} (fleet: in Redis)\n"
    )
    print(f"{args.calls} `who__echo` calls per lane (after {args.warmup}), blocks of {args.block}")
    for label, row in found.latency["lanes"].items():
        print(f"  {label:<11} " + "  ".join(f"{k} {v:7.2f}" for k, v in row.items()))
    added = found.latency["added"]
    print(
        f"  added       p50 {added['p50_ms']:+.2f} ms, p99 {added['p99_ms']:+.2f} ms (goal ≤ "
        f"+{GOAL_P50_MS:g} / +{GOAL_P99_MS:g}): {'PASS' if found.latency_met else 'FAIL'}"
    )
    crowd = found.crowd
    print(
        f"\n{crowd['clients']} concurrent clients on one fleet replica (OIDC, limits in Redis), "
        f"each 1 list + "
        f"{crowd['calls_each']} call: {crowd['ok']} ok, {crowd['failed']} failed of "
        f"{crowd['requests']} requests in {crowd['wall_s']:.1f} s; per request p50 "
        f"{crowd['p50_ms']:.0f} ms, p99 {crowd['p99_ms']:.0f} ms; replica RSS "
        f"{crowd['rss_before_kb'] // 1024} -> {crowd['rss_after_kb'] // 1024} MB (peak "
        f"{crowd['rss_peak_kb'] // 1024} MB), backend {crowd['backend_rss_kb'] // 1024} MB: "
        f"{'PASS' if found.crowd_met else 'FAIL'}"
    )
    for error in crowd["errors"]:
        print(f"  e.g. {error}")
    payload = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "args": vars(args),
        **asdict(found),
        "goal_p50_ms": GOAL_P50_MS,
        "goal_p99_ms": GOAL_P99_MS,
        "goal_clients": GOAL_CLIENTS,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    sys.exit(main())

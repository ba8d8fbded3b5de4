"""What `plugman mcp serve --auth oidc` costs per request, beside `--auth token`.

1. In process: `Verifier.check` on one access token with the issuer's keys cached (RS256 and
   ES256), `--calls` times each: the signature check and the claim checks, no network.
2. Over HTTP on loopback: two `--stateless` gateways with no backend, one with `--auth token`
   and one with `--auth oidc` in front of a real issuer on 127.0.0.1
   (tests/support/oidc_issuer.py), each sent the same `initialize` POST over one keep-alive
   connection, alternating in blocks of `--block` (the order reversed every other round) so a load
   spike hits both alike; every answer
   is checked (200). The difference of the medians is what OIDC adds over the shared token.
   The issuer's JWKS fetch count before and after shows no fetch per request. Each gateway's
   CPU time per request (from /proc) is given too: on a loaded machine, wall-clock medians of
   two identical gateways differ by more than the gate costs, CPU time much less.

Results go to `bench/results/oidc-verify.json`.

Usage: `.venv/bin/python bench/oidc_verify.py [--calls 3000] [--requests 1000] [--block 50]`
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from plugman.runtime.gateway import oidc  # noqa: E402
from tests.support.oidc_issuer import Issuer  # noqa: E402

AUDIENCE = "https://gateway.example/mcp"
TOKEN = "b" * 43
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000  # noqa: E731
    return {"p50_ms": round(pick(0.5), 3), "p99_ms": round(pick(0.99), 3), "n": len(ordered)}


def in_process(algorithm: str, calls: int) -> dict[str, float]:
    with Issuer(algorithm=algorithm) as issuer:
        keys = oidc.parse_keys({"keys": [issuer.current.jwk()]})
        checker = oidc.Verifier(oidc.Settings(issuer.issuer, AUDIENCE), "unused", keys)
        token = issuer.token(aud=AUDIENCE, groups=["dev", "ops"])
        for _ in range(100):
            checker.check(token)
        samples = []
        for _ in range(calls):
            started = time.perf_counter()
            checker.check(token)
            samples.append(time.perf_counter() - started)
    return percentiles(samples)


@contextmanager
def gateway(home: Path, *options: str) -> Iterator[tuple[str, int]]:
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PLUGMAN_HOME": str(home), "PLUGMAN_GATEWAY_TOKEN": TOKEN}
    argv = [sys.executable, "-m", "plugman", "--project", str(home), "mcp", "serve"]
    proc = subprocess.Popen(
        [*argv, "--transport", "http", "--port", "0", "--stateless", *options],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline().strip()
        assert line.startswith("listening on "), line
        yield line.removeprefix("listening on "), proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def cpu_seconds(pid: int) -> float:
    """The user and system CPU time process `pid` has used (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def over_http(requests: int, block: int) -> dict[str, Any]:
    import httpx2

    headers = {"accept": "application/json, text/event-stream"}
    with tempfile.TemporaryDirectory() as folder, Issuer() as issuer:
        home = Path(folder)
        jwt = issuer.token(aud=AUDIENCE, exp=int(time.time()) + 3600)
        oidc_options = ("--auth", "oidc", "--issuer", issuer.url, "--audience", AUDIENCE)
        with (
            gateway(home / "token", "--auth", "token") as (token_url, token_pid),
            gateway(home / "oidc", *oidc_options) as (oidc_url, oidc_pid),
            httpx2.Client(timeout=30) as client,
        ):
            lanes = {"token": (token_url, TOKEN), "oidc": (oidc_url, jwt)}
            pids = {"token": token_pid, "oidc": oidc_pid}
            samples: dict[str, list[float]] = {name: [] for name in lanes}
            cpu: dict[str, float] = dict.fromkeys(lanes, 0.0)
            fetched = issuer.jwks_fetches
            for round_ in range(-2, requests // block):  # two untimed blocks first
                order = list(lanes.items())
                for name, (url, bearer) in order if round_ % 2 else reversed(order):
                    sent = {**headers, "authorization": f"Bearer {bearer}"}
                    used = cpu_seconds(pids[name])
                    for _ in range(block):
                        started = time.perf_counter()
                        answer = client.post(url, json=INITIALIZE, headers=sent)
                        took = time.perf_counter() - started
                        assert answer.status_code == 200, (name, answer.status_code)
                        if round_ >= 0:
                            samples[name].append(took)
                    if round_ >= 0:
                        cpu[name] += cpu_seconds(pids[name]) - used
            result: dict[str, Any] = {name: percentiles(s) for name, s in samples.items()}
            for name, seconds in cpu.items():
                result[name]["cpu_ms_per_request"] = round(seconds * 1000 / len(samples[name]), 3)
            result["jwks_fetches_during"] = issuer.jwks_fetches - fetched
    result["added_p50_ms"] = round(result["oidc"]["p50_ms"] - result["token"]["p50_ms"], 3)
    result["added_p99_ms"] = round(result["oidc"]["p99_ms"] - result["token"]["p99_ms"], 3)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--block", type=int, default=50)
    given = parser.parse_args()
    result = {
        "check_rs256": in_process("RS256", given.calls),
        "check_es256": in_process("ES256", given.calls),
        "http": over_http(given.requests, given.block),
        "cpu_count": os.cpu_count(),
        "load_1m": os.getloadavg()[0],
    }
    out = REPO / "bench" / "results" / "oidc-verify.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

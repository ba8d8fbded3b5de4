"""Observability through the fleet (tests/integration/fleet.py): `--stateless` replicas behind
HAProxy, whose health check is each replica's `/readyz`.

- The trace of one call through the balancer: each replica exports to one OTLP/HTTP receiver
  (tests/integration/test_gateway_observe.py's); the replica that served the call exported its
  SERVER span under the client's `traceparent` and, under it, the CLIENT span of its request to
  its backend; its call log (and no other replica's) has the trace id.
- A rolling update, clients calling all the while. One replica gets SIGTERM, as Kubernetes
  sends it when it replaces a pod: its `/readyz` turns 503 at once, HAProxy stops sending it
  calls within a check or two, the calls it is running finish, and it exits 0 after
  `--drain-delay`. HAProxy takes it out of the rotation while it still runs (its readiness, not
  its exit, did it); not one call fails, and the calls made after it exited all ran on the
  other replica.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.integration.fleet import ReplicaSpec, client, fleet, rpc
from tests.integration.test_gateway_observe import PARENT, TRACE, receiving

pytestmark = pytest.mark.slow

DRAIN = ("--drain-delay", "1", "--drain-timeout", "20")
CALLERS = 4
HOLD = 0.3  # seconds each call runs on its backend: calls are in flight at the SIGTERM


def test_a_rolling_update_fails_no_call(tmp_path: Path) -> None:
    specs = [ReplicaSpec(name, DRAIN) for name in ("r1", "r2")]
    answers: list[tuple[str, int, Any]] = []
    done = threading.Event()
    with fleet(tmp_path / "fleet", specs, redis=False) as found:
        headers = found.auth.headers

        def caller(number: int) -> None:
            sent = 0
            while not done.is_set() and sent < 200:
                text = f"c{number}-{sent}"
                params = {"name": "who__hold", "arguments": {"text": text, "seconds": HOLD}}
                status, answer = rpc(found.url, "tools/call", params, headers(), timeout=30)
                answers.append((text, status, answer.get("result")))
                sent += 1

        threads = [threading.Thread(target=caller, args=(n,), daemon=True) for n in range(CALLERS)]
        for thread in threads:
            thread.start()
        time.sleep(1.5)  # calls on both replicas
        draining = found.replica("r1")
        assert draining.proc is not None
        sent_at = len(answers)
        draining.proc.send_signal(signal.SIGTERM)  # the replica only, as Kubernetes does
        readiness = draining.url.removesuffix("/mcp") + "/readyz"
        end = time.monotonic() + 5
        while "r1" in found.balancer.up():
            assert time.monotonic() < end, "HAProxy kept the draining replica in rotation"
            time.sleep(0.05)
        # out of the rotation while it still runs and answers: it was its readiness, not its exit
        assert draining.proc.poll() is None
        said = httpx2.get(readiness, timeout=5)
        assert (said.status_code, said.text) == (503, "draining")
        assert draining.proc.wait(timeout=30) == 0
        exited_at = len(answers)
        time.sleep(1.0)  # calls after the exit
        done.set()
        for thread in threads:
            thread.join(timeout=30)
        assert not any(thread.is_alive() for thread in threads)
        ran = found.records()
    failed = [
        (text, status, result)
        for text, status, result in answers
        if status != 200
        or result is None
        or result.get("isError")
        or result["content"][0]["text"] != text
    ]
    assert failed == [], f"{len(failed)} of {len(answers)} calls failed: {failed[:3]}"
    assert len(answers) > exited_at > sent_at > 0
    where = {record.arguments["text"]: record.replica for record in ran}
    after = [text for text, _, _ in answers[exited_at + CALLERS :]]
    assert after and {where[text] for text in after} == {"r2"}
    assert {where[text] for text, _, _ in answers[:sent_at]} == {"r1", "r2"}


def test_the_trace_of_one_call_spans_the_replica_and_its_backend(tmp_path: Path) -> None:
    with receiving() as receiver:
        otel = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "100"}
        specs = [ReplicaSpec(name, ("--otel",), otel) for name in ("r1", "r2")]
        with fleet(tmp_path / "fleet", specs, redis=False) as found:

            async def call() -> None:
                with anyio.fail_after(60):
                    async with client(found.url, found.auth.headers) as session:
                        given = {"traceparent": f"00-{TRACE}-{PARENT}-01"}
                        arguments = {"text": "traced", "seconds": 0}
                        result = await session.call_tool("who__hold", arguments, meta=given)
                        assert not result.is_error

            anyio.run(call)
            spans = receiver.spans_of(TRACE)
            served = {record.replica for record in found.records()}
            homes = {replica.name: replica.home for replica in found.replicas}
    assert len(served) == 1, served
    (replica,) = served
    server = [s for s in spans if s.name == "tools/call who__hold"]
    assert len(server) == 1 and server[0].parent_span_id.hex() == PARENT
    forwarded = [s for s in spans if s.parent_span_id == server[0].span_id]
    assert [s.kind for s in forwarded] == [forwarded[0].SPAN_KIND_CLIENT], spans
    logged = (homes[replica] / "state" / "logs" / "calls.jsonl").read_text().splitlines()
    assert [json.loads(line)["trace"] for line in logged] == [TRACE]
    assert [json.loads(line)["replica"] for line in logged] == [replica]
    others = [home / "state/logs/calls.jsonl" for home in homes.values() if home != homes[replica]]
    assert [path.read_text() for path in others] == [""]  # the other replica logged no call

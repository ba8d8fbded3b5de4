"""The gateway's observability, for real: subprocess gateways over HTTP, the traced test server
(tests/servers/traced_server.py) as their stdio backend, the mcp SDK's client, and an OTLP/HTTP
receiver in this process that decodes the exported protobuf (opentelemetry.proto).

- `--otel`: the replica's span for a call has the client's `traceparent` (`_meta`, or the HTTP
  header) as its parent; the backend receives, in the forwarded request's `_meta`, a
  `traceparent` of the same trace whose parent is the replica's span; metrics count the call by
  server, tool and outcome.
- The call log: one JSON line per call in <state>/logs/calls.jsonl and, with `--log-stderr`, on
  stderr: replica, sub, server, tool, ms, outcome, trace.
- `/healthz` and `/readyz`: 503 `starting` while a backend is still starting, 200 `ready` once
  each has finished its first attempt, 503 `draining` after SIGTERM while `/healthz` stays 200.
- SIGTERM with calls in flight: every call in flight succeeds, and the replica exits 0.
- Over stdio (no --otel, no auth): a line per call too, with each outcome (ok, timeout,
  refused by a PreToolUse hook, unknown), no `sub` and no `trace`.
"""

from __future__ import annotations

import gzip
import json
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx2

from tests.integration.http_gateway import Gateway, environment, http_gateway
from tests.integration.test_gateway import (
    START_TIMEOUT,
    gateway,
    text,
)

REPO = Path(__file__).resolve().parents[2]
TRACED = REPO / "tests" / "servers" / "traced_server.py"
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
HEADER_TRACE = "0af7651916cd43dd8448eb211c80319c"
HEADER_PARENT = "b7ad6b7169203331"


def configure(home: Path, hook: str | None = None, **env: str) -> None:
    """User scope: the traced server over stdio, as `traced`, with `env` in its environment;
    a PreToolUse hook blocking the tools `hook` matches."""
    lines = [
        "[mcp_servers.traced]",
        f"command = {json.dumps(sys.executable)}",
        f"args = [{json.dumps(str(TRACED))}]",
    ]
    if env:
        pairs = ", ".join(f"{key} = {json.dumps(value)}" for key, value in env.items())
        lines.append(f"env = {{ {pairs} }}")
    if hook is not None:
        command = "echo blocked-by-test >&2; exit 2"
        group = f'{{ matcher = "{hook}", hooks = [{{ type = "command", command = "{command}" }}] }}'
        lines += ["[hooks]", f"PreToolUse = [{group}]"]
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "plugman.toml").write_text("\n".join(lines) + "\n")


class Receiver:
    """An OTLP/HTTP collector on 127.0.0.1: the spans and metric points it was sent."""

    def __init__(self) -> None:
        self.spans: list[Any] = []
        self.metrics: list[Any] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                if self.headers.get("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                receiver.take(self.path, body)
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return None

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)

    def take(self, path: str, body: bytes) -> None:
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
            ExportMetricsServiceRequest,
        )
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        if path == "/v1/traces":
            traces = ExportTraceServiceRequest.FromString(body)
            found = [s for r in traces.resource_spans for ss in r.scope_spans for s in ss.spans]
            with self.lock:
                self.spans += found
        elif path == "/v1/metrics":
            exported = ExportMetricsServiceRequest.FromString(body)
            found = [
                m for r in exported.resource_metrics for sm in r.scope_metrics for m in sm.metrics
            ]
            with self.lock:
                self.metrics += found

    def spans_of(self, trace: str, deadline: float = 30) -> list[Any]:
        """The spans of `trace` (hex), once its SERVER and CLIENT spans have come."""
        end = time.monotonic() + deadline
        while True:
            with self.lock:
                found = [s for s in self.spans if s.trace_id.hex() == trace]
            if len(found) >= 2 or time.monotonic() > end:
                return found
            time.sleep(0.1)


@contextmanager
def receiving() -> Iterator[Receiver]:
    receiver = Receiver()
    receiver.thread.start()
    try:
        yield receiver
    finally:
        receiver.http.shutdown()
        receiver.http.server_close()
        receiver.thread.join(timeout=10)


@contextmanager
def replica(
    tmp_path: Path, home: Path, *options: str, env: dict[str, str] | None = None
) -> Iterator[Gateway]:
    """A gateway over HTTP on a free port; stopped (SIGTERM, bounded: a drain may take a
    while) and checked on exit, its stderr then in `.err`."""
    running = environment(home, **(env or {}))
    with http_gateway(tmp_path / "project", running, *options, stop_within=60) as found:
        yield found


def call_lines(home: Path) -> list[dict[str, Any]]:
    path = home / "state" / "logs" / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


async def wait_for_tools(client: Any, wanted: set[str]) -> None:
    end = anyio.current_time() + START_TIMEOUT
    while not wanted <= {t.name for t in (await client.list_tools(cache_mode="refresh")).tools}:
        assert anyio.current_time() < end, "the traced backend did not come up"
        await anyio.sleep(0.2)


def test_one_call_traced_from_client_through_replica_to_backend_and_logged(
    tmp_path: Path, isolated_home: Path
) -> None:
    configure(isolated_home)
    with receiving() as receiver:
        otel = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
            "OTEL_BSP_SCHEDULE_DELAY": "100",
            "OTEL_METRIC_EXPORT_INTERVAL": "500",
            "OTEL_SERVICE_NAME": "gw-under-test",
        }
        options = ("--otel", "--replica", "gw-observe", "--log-stderr")
        with replica(tmp_path, isolated_home, *options, env=otel) as found:
            received: dict[str, Any] = {}

            async def session() -> None:
                from mcp import Client
                from mcp.client.streamable_http import streamable_http_client

                with anyio.fail_after(120):
                    async with Client(found.url) as client:
                        await wait_for_tools(client, {"traced__meta"})
                        given = {"traceparent": f"00-{TRACE}-{PARENT}-01"}
                        result = await client.call_tool("traced__meta", {}, meta=given)
                        received.update(json.loads(text(result)))
                        missing = await client.call_tool("traced__nothing\n{}", {})
                        assert missing.is_error
                    header = {"traceparent": f"00-{HEADER_TRACE}-{HEADER_PARENT}-01"}
                    web = httpx2.AsyncClient(headers=header)
                    transport = streamable_http_client(found.url, http_client=web)
                    async with web, Client(transport) as client:
                        assert text(await client.call_tool("traced__echo", {"text": "hi"})) == "hi"

            anyio.run(session)
        spans = receiver.spans_of(TRACE)  # the replica flushed what was left as it stopped
        by_header = receiver.spans_of(HEADER_TRACE)
    err = found.err

    # the backend got the replica's span context in `_meta`, in the client's trace
    version, trace, parent, flags = received["traceparent"].split("-")
    assert (version, trace, flags) == ("00", TRACE, "01"), received
    by_id = {s.span_id.hex(): s for s in spans}
    server = [s for s in spans if s.name == "tools/call traced__meta"]
    assert len(server) == 1, [s.name for s in spans]
    assert server[0].parent_span_id.hex() == PARENT  # the client's span
    assert server[0].kind == server[0].SPAN_KIND_SERVER
    attributes = {a.key: a.value.string_value for a in server[0].attributes}
    assert attributes["plugman.server"] == "traced"
    assert attributes["plugman.outcome"] == "ok"
    assert parent in by_id, "the backend's parent is no span of the replica"
    forwarded = by_id[parent]
    assert forwarded.kind == forwarded.SPAN_KIND_CLIENT
    assert forwarded.parent_span_id == server[0].span_id  # replica SERVER -> CLIENT -> backend
    # a client that only sends the HTTP header is traced too
    echoed = [s for s in by_header if s.name == "tools/call traced__echo"]
    assert [s.parent_span_id.hex() for s in echoed] == [HEADER_PARENT]
    # metrics: the call counted by server, tool and outcome; its duration recorded
    names = {m.name for m in receiver.metrics}
    assert {"plugman.gateway.calls", "plugman.gateway.call.duration"} <= names
    counted = {
        tuple(sorted((a.key, a.value.string_value) for a in point.attributes))
        for m in receiver.metrics
        if m.name == "plugman.gateway.calls"
        for point in m.sum.data_points
    }
    assert (("gen_ai.tool.name", "meta"), ("mcp.server", "traced"), ("plugman.outcome", "ok")) in (
        counted
    )
    assert (("gen_ai.tool.name", ""), ("mcp.server", ""), ("plugman.outcome", "unknown")) in (
        counted
    ), "an unknown tool's name must not become a metric label"

    # the call log: one line per call, in the file and on stderr
    lines = call_lines(isolated_home)
    assert [(line["server"], line["tool"], line["outcome"]) for line in lines] == [
        ("traced", "meta", "ok"),
        ("", "traced__nothing\n{}", "unknown"),
        ("traced", "echo", "ok"),
    ]
    first = lines[0]
    assert set(first) == {"time", "replica", "sub", "server", "tool", "ms", "outcome", "trace"}
    assert first["replica"] == "gw-observe" and first["sub"] is None
    assert first["trace"] == TRACE and lines[2]["trace"] == HEADER_TRACE
    assert 0 < first["ms"] < 30_000
    assert first["time"].endswith("Z") and first["time"][:4].isdigit()
    logged = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert logged == lines


def test_readiness_start_ready_and_drain_with_calls_in_flight(
    tmp_path: Path, isolated_home: Path
) -> None:
    configure(isolated_home, TRACED_START_DELAY="3")
    options = ("--drain-delay", "1.5", "--drain-timeout", "20")
    with replica(tmp_path, isolated_home, *options) as found:
        with httpx2.Client(base_url=found.base, timeout=10) as web:
            early = web.get("/readyz")
            assert (early.status_code, early.text) == (503, "starting")
            assert web.get("/healthz").status_code == 200
            end = time.monotonic() + START_TIMEOUT
            while web.get("/readyz").status_code != 200:
                assert time.monotonic() < end, "never ready"
                time.sleep(0.1)
            assert web.get("/readyz").text == "ready"
        outcomes: list[str] = []
        during: list[tuple[int, str]] = []

        async def calls() -> None:
            from mcp import Client

            async def one(client: Any, seconds: float) -> None:
                result = await client.call_tool("traced__slow", {"seconds": seconds})
                outcomes.append("error" if result.is_error else text(result))

            async def terminate_then_probe() -> None:
                await anyio.sleep(0.5)  # the calls are in flight
                found.proc.send_signal(signal.SIGTERM)
                await anyio.sleep(0.3)
                async with httpx2.AsyncClient(base_url=found.base, timeout=5) as web:
                    for path in ("/readyz", "/healthz"):
                        answer = await web.get(path)
                        during.append((answer.status_code, answer.text))

            with anyio.fail_after(60):
                async with Client(found.url) as client:
                    await wait_for_tools(client, {"traced__slow"})
                    async with anyio.create_task_group() as group:
                        for _ in range(6):
                            group.start_soon(one, client, 2.5)
                        group.start_soon(terminate_then_probe)

        anyio.run(calls)
        assert during == [(503, "draining"), (200, "ok")]
        assert outcomes == ["done"] * 6, outcomes
        assert found.proc.wait(timeout=60) == 0
    assert [line["outcome"] for line in call_lines(isolated_home)] == ["ok"] * 6


def test_over_stdio_each_outcome_is_one_line(tmp_path: Path, isolated_home: Path) -> None:
    configure(isolated_home, hook="mcp__traced__meta")

    async def session() -> None:
        with anyio.fail_after(120):
            options = ("--call-timeout", "0.5", "--replica", "laptop")
            async with gateway(tmp_path, *options) as client:
                await wait_for_tools(client, {"traced__echo"})
                assert text(await client.call_tool("traced__echo", {"text": "hi"})) == "hi"
                assert (await client.call_tool("traced__slow", {"seconds": 3})).is_error
                assert (await client.call_tool("traced__meta", {})).is_error
                assert (await client.call_tool("nothing__here", {})).is_error

    anyio.run(session)
    lines = call_lines(isolated_home)
    seen = [(line["server"], line["tool"], line["outcome"]) for line in lines]
    assert seen == [
        ("traced", "echo", "ok"),
        ("traced", "slow", "timeout"),
        ("traced", "meta", "refused"),
        ("", "nothing__here", "unknown"),
    ]
    assert {line["replica"] for line in lines} == {"laptop"}
    assert all(line["sub"] is None and "trace" not in line for line in lines)
    assert 400 < lines[1]["ms"] < 10_000

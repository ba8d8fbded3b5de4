"""Rate limits shared by gateway replicas through Redis, for real: a redis-server on a free
loopback port, two `plugman mcp serve --transport http --auth token --stateless` subprocesses
counting in it (one with `--redis-failure closed`, one with the default, open), the notes
sample server as their backend, 2026-07-28 requests over real HTTP (httpx2) and the SDK's own
client.

- A caller allowed N requests a minute gets N answers, alternating between the replicas, then
  429 (with `Retry-After` and a JSON-RPC error) on either replica.
- A tool allowed K calls a minute gets K, then 429 on either replica, while another tool of the
  same caller still answers; the SDK's client sees the refusal as an error.
- Redis stopped: the closed replica answers 503 with `Retry-After`, the open one serves the
  call and logs one warning however many calls it serves; Redis started again on the same
  port: both count again (K calls, then 429), neither restarted.
- Counted in Redis, both limits cost one round trip per request (one script), and give the
  verdicts, request by request, that the in-memory limiter gives.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.integration.test_gateway import START_TIMEOUT, configure, free_port, text
from tests.integration.test_gateway_auth import serving, token_of

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
PER_USER = 30
PER_TOOL = 3


@dataclass
class Redis:
    port: int
    folder: Path
    password: str = ""
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        argv = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        argv += ["--save", "", "--appendonly", "no", "--dir", str(self.folder)]
        argv += ["--requirepass", self.password] if self.password else []
        log = (self.folder / "redis.log").open("ab")
        self.proc = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        log.close()
        end = time.monotonic() + 20
        while self.cli("ping") != "PONG":
            assert self.proc.poll() is None, (self.folder / "redis.log").read_text()
            assert time.monotonic() < end, "redis-server did not start"
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=20)
            self.proc = None

    def cli(self, *args: str) -> str:
        done = subprocess.run(
            ["redis-cli", "-p", str(self.port), "--raw", *self._auth, *args],
            capture_output=True,
            text=True,
            timeout=20,
        )
        return done.stdout.strip()

    @property
    def _auth(self) -> list[str]:
        return ["-a", self.password, "--no-auth-warning"] if self.password else []

    def stored(self) -> list[str]:
        return sorted(line for line in self.cli("--scan").splitlines() if line)


@contextmanager
def redis_server(folder: Path, password: str = "") -> Iterator[Redis]:
    folder.mkdir(parents=True, exist_ok=True)
    server = Redis(free_port(), folder, password)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def post(url: str, token: str, body: Any, headers: dict[str, str] | None = None) -> Any:
    """One POST of `body` (bytes as they are, else as JSON) with the 2026-07-28 headers."""
    import httpx2

    given = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "authorization": f"Bearer {token}",
        "mcp-protocol-version": MODERN,
        **(headers or {}),
    }
    content = body if isinstance(body, bytes) else httpx2.Request("POST", url, json=body).content
    return httpx2.post(url, content=content, headers=given, timeout=30)


def request(method: str, params: dict[str, Any] | None = None, ident: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "method": method,
        "params": {**(params or {}), "_meta": META},
    }


def call(url: str, token: str, tool: str, arguments: dict[str, Any]) -> Any:
    """A 2026-07-28 `tools/call`, its routing headers agreeing with its body."""
    from mcp.shared.inbound import encode_header_value

    body = request("tools/call", {"name": tool, "arguments": arguments})
    routing = {"mcp-method": "tools/call", "mcp-name": encode_header_value(tool)}
    return post(url, token, body, routing)


def listing(url: str, token: str) -> Any:
    return post(url, token, request("tools/list"), {"mcp-method": "tools/list"})


def answer_of(response: Any) -> str:
    assert response.status_code == 200, (response.status_code, response.text)
    result = response.json()["result"]
    assert not result.get("isError"), result
    return str(result["content"][0]["text"])


def refused(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text)
    assert 1 <= int(response.headers["retry-after"]) <= 60, response.headers
    error: dict[str, Any] = response.json()["error"]
    return error


def ready(url: str, token: str) -> int:
    """Requests made until the notes backend's tools are listed."""
    made = 0
    end = time.monotonic() + START_TIMEOUT
    while True:
        made += 1
        found = listing(url, token)
        names = {tool["name"] for tool in found.json()["result"]["tools"]}
        if "notes__add" in names:
            return made
        assert time.monotonic() < end, found.text
        time.sleep(0.5)


@dataclass
class Fleet:
    redis: Redis
    closed: str  # the URL of the replica with --redis-failure closed
    opened: str  # the one with the default, open
    token: str
    home: Path

    @property
    def urls(self) -> list[str]:
        return [self.closed, self.opened]


@pytest.fixture
def fleet(tmp_path: Path, isolated_home: Path) -> Iterator[Fleet]:
    configure(isolated_home, None, {})
    limits = ("--rate-limit", f"{PER_USER}/minute", "--tool-rate-limit", f"{PER_TOOL}/minute")
    options = ("--auth", "token", "--stateless", *limits)
    with ExitStack() as stack:
        redis = stack.enter_context(redis_server(tmp_path / "redis"))
        env = {"PLUGMAN_REDIS_URL": redis.url}
        closed, _ = stack.enter_context(
            serving(tmp_path, isolated_home, *options, "--redis-failure", "closed", env=env)
        )
        opened, _ = stack.enter_context(serving(tmp_path, isolated_home, *options, env=env))
        token = token_of(isolated_home)
        for url in (closed, opened):
            ready(url, token)
        assert redis.cli("flushall") == "OK"
        yield Fleet(redis, closed, opened, token, isolated_home)


def test_a_caller_gets_n_requests_a_minute_across_replicas(fleet: Fleet) -> None:
    answered = 0
    for turn in range(PER_USER + 5):
        found = listing(fleet.urls[turn % 2], fleet.token)
        if found.status_code != 200:
            break
        answered += 1
    assert answered == PER_USER
    for url in fleet.urls:
        error = refused(listing(url, fleet.token), 429)
        assert error["message"] == f"rate limit exceeded: {PER_USER}/minute", error
    keys = fleet.redis.stored()
    assert len(keys) == 1 and keys[0].startswith("plugman:rl:user/"), keys
    logged = (fleet.home / "state" / "logs" / "gateway.log").read_text()
    assert f"rate limited: {PER_USER}/minute 'token' of 'plugman'" in logged


def test_each_tool_has_its_own_limit_across_replicas(fleet: Fleet) -> None:
    for turn in range(PER_TOOL):
        added = call(fleet.urls[turn % 2], fleet.token, "notes__add", {"a": turn, "b": 1})
        assert answer_of(added) == str(turn + 1)
    for url in fleet.urls:
        error = refused(call(url, fleet.token, "notes__add", {"a": 1, "b": 1}), 429)
        assert error["message"] == f"rate limit exceeded for 'notes__add': {PER_TOOL}/minute"
    for turn in range(PER_TOOL - 1):
        said = f"still here {turn}"
        assert (
            answer_of(call(fleet.urls[turn % 2], fleet.token, "notes__echo", {"text": said}))
            == said
        )
    assert listing(fleet.closed, fleet.token).status_code == 200  # no per-tool limit

    async def session() -> None:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared.exceptions import MCPError

        with anyio.fail_after(60):
            web = httpx2.AsyncClient(headers={"Authorization": f"Bearer {fleet.token}"})
            transport = streamable_http_client(fleet.opened, http_client=web)
            async with web, Client(transport) as client:
                echoed = await client.call_tool("notes__echo", {"text": "last one"})
                assert text(echoed) == "last one"
                with pytest.raises(MCPError, match="rate limit exceeded for 'notes__echo'") as got:
                    await client.call_tool("notes__echo", {"text": "one too many"})
                assert got.value.error.code == -32029, got.value.error

    anyio.run(session)


def test_redis_down_then_back(fleet: Fleet) -> None:
    fleet.redis.stop()
    for _ in range(3):
        refused(call(fleet.closed, fleet.token, "notes__add", {"a": 1, "b": 2}), 503)
    started = time.monotonic()
    for turn in range(PER_TOOL + 3):
        assert answer_of(call(fleet.opened, fleet.token, "notes__add", {"a": turn, "b": 2}))
    assert time.monotonic() - started < 10, "a dead Redis stalled the calls"
    logs = fleet.home / "state" / "logs" / "gateway.log"
    warned = [line for line in logs.read_text().splitlines() if "unreachable" in line]
    # one line per replica (each warns at most once per 30 s)
    assert len(warned) == 2, warned
    assert any("serving requests unlimited" in line for line in warned), warned
    assert any("refusing requests (503)" in line for line in warned), warned

    fleet.redis.start()
    time.sleep(1.2)  # the pause after a failure
    for turn in range(PER_TOOL):
        url = fleet.urls[turn % 2]
        assert answer_of(call(url, fleet.token, "notes__add", {"a": turn, "b": 3})) == str(turn + 3)
    for url in fleet.urls:
        refused(call(url, fleet.token, "notes__add", {"a": 1, "b": 1}), 429)
    assert "answers again" in logs.read_text()


def test_limits_without_redis_are_per_replica(tmp_path: Path, isolated_home: Path) -> None:
    configure(isolated_home, None, {})
    options = ("--auth", "token", "--tool-rate-limit", "2/minute")
    with serving(tmp_path, isolated_home, *options) as (url, _):
        token = token_of(isolated_home)
        ready(url, token)
        for turn in range(2):
            assert answer_of(call(url, token, "notes__add", {"a": turn, "b": 0})) == str(turn)
        refused(call(url, token, "notes__add", {"a": 1, "b": 1}), 429)
    logged = (isolated_home / "state" / "logs" / "gateway.log").read_text()
    assert "counted in this process's memory" in logged


def test_a_redis_that_never_answers_costs_one_short_timeout() -> None:
    """A listener that accepts connections (its backlog) and never answers: the first check
    waits the 0.5 s socket timeout, the next ones (for a second) not at all."""
    import socket

    from plugman.runtime.gateway.inbound import Inbound
    from plugman.runtime.gateway.principal import Principal
    from plugman.runtime.gateway.ratelimit import PAUSE, TIMEOUT, Rules, limiter

    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen(16)
        url = f"redis://127.0.0.1:{mute.getsockname()[1]}/0"
        found = limiter(Rules("5/minute", None, url, "closed"))
        assert found is not None
        who = Principal("alice", "https://idp.example")

        async def checks() -> list[tuple[float, int | None]]:
            timed = []
            for _ in range(5):
                started = time.monotonic()
                verdict = await found.check(who, Inbound("tools/list", None, 1))
                timed.append((time.monotonic() - started, verdict and verdict.status))
            return timed

        timed = anyio.run(checks)
    assert [status for _, status in timed] == [503] * 5, timed
    assert TIMEOUT * 0.8 <= timed[0][0] < TIMEOUT * 4, timed
    assert all(seconds < 0.05 for seconds, _ in timed[1:]), timed
    assert sum(seconds for seconds, _ in timed) < PAUSE + TIMEOUT * 4


def test_redis_counts_as_memory_does_in_one_round_trip_per_request(tmp_path: Path) -> None:
    """Both limits counted in Redis (one script per request, whatever the limits checked) give,
    request by request, the verdicts the in-memory limiter gives: the caller's window counted
    before the tool's, and a request the caller's limit refuses not counted toward its tool."""
    from plugman.runtime.gateway.inbound import Inbound
    from plugman.runtime.gateway.principal import Principal
    from plugman.runtime.gateway.ratelimit import Limiter, Rules, tool_key

    who = Principal("alice", "https://idp.example")
    asked = [Inbound("tools/call", "a", 1), Inbound("tools/call", "a", 2)]
    asked += [Inbound("tools/list", None, 3), Inbound("tools/call", "b", 4)]
    asked += [Inbound("tools/call", "c", 5), Inbound("tools/list", None, 6)]

    async def verdicts(found: Limiter, between: Any = None) -> list[tuple[int, int, str] | None]:
        said = []
        for turn, inbound in enumerate(asked):
            verdict = await found.check(who, inbound)
            said.append(verdict and (verdict.status, verdict.retry_after, verdict.message))
            if turn == 0 and between is not None:
                between()  # after the first request (which loads the script)
        return said

    with redis_server(tmp_path / "redis") as redis:
        in_memory = anyio.run(verdicts, Limiter(Rules("4/minute", "1/minute")))
        shared = Limiter(Rules("4/minute", "1/minute", redis.url))
        in_redis = anyio.run(verdicts, shared, lambda: redis.cli("config", "resetstat"))
        stats = redis.cli("info", "commandstats").splitlines()
        keys = redis.stored()
    per_user, per_tool = "rate limit exceeded: 4/minute", "rate limit exceeded for 'a': 1/minute"
    assert [v and (v[0], v[2]) for v in in_memory] == [
        None,
        (429, per_tool),
        None,
        None,
        (429, per_user),
        (429, per_user),
    ]
    assert in_redis == in_memory
    counted = {
        line.split(":")[0]: dict(pair.split("=") for pair in line.split(":")[1].split(","))
        for line in stats
        if line.startswith("cmdstat_")
    }
    scripts = counted["cmdstat_evalsha"]
    # after the first request: one script per request, and per refusal one more (the window's
    # stats for Retry-After; loaded on first use: a NOSCRIPT answer, then EVALSHA again)
    refusals = sum(1 for verdict in in_redis[1:] if verdict is not None)
    assert int(scripts["calls"]) - int(scripts["failed_calls"]) == 5 + refusals, counted
    tools = {key.split("/")[2] for key in keys if key.startswith("plugman:rl:tool/")}
    assert tools == {tool_key("a"), tool_key("b")}, keys  # "c" was refused by the caller's limit
    assert len(keys) == 3, keys

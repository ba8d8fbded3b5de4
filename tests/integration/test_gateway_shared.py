"""Gateway replicas sharing Redis, for real: a real redis-server (with a password, given only in
PLUGMAN_REDIS_URL) and two `plugman mcp serve --transport http --auth token` replicas on their
own ports, one config, the SDK's client and raw HTTP as clients.

- (a) A backend whose tool list changes on replica A: a client connected to replica B is told
  (`tools/list_changed`), and the clients of A are told once (no loop, no double).
- (b) A 2025-era session on A whose GET stream broke resumes with `Last-Event-ID` on B: B
  answers the event it missed from Redis, and only that one.
- (c) With `--shared-oauth`: a backend OAuth login made on replica A's machine is read by
  replica B, which has none of its own; the value in Redis is sealed, no token in it.
- Redis down (not started yet, then stopped): replicas start and serve calls, each replica
  tells its own clients; once Redis is up, list changes cross replicas again, without a
  restart. The Redis password is in no log or output.

Every redis-server, replica and server started is stopped by pid; every wait is bounded.
"""

from __future__ import annotations

import base64
import os
import secrets
import shutil
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.integration.http_gateway import http_gateway
from tests.integration.test_gateway import (
    GROWING,
    START_TIMEOUT,
    configure,
    free_port,
    text,
)
from tests.integration.test_gateway_auth import post
from tests.integration.test_oauth import Setup, setup  # noqa: F401 (the fixture)

pytestmark = pytest.mark.slow

TOKEN = "shared-test-token-" + "k" * 24  # the replicas' bearer token (PLUGMAN_GATEWAY_TOKEN)
PASSWORD = "redis-pass-" + secrets.token_hex(8)
WAIT = 20.0  # seconds for a notification to cross replicas on a loaded 2-core box


@contextmanager
def redis_server(tmp_path: Path, port: int | None = None) -> Iterator[str]:
    """A redis-server on `port` (else a free one) on loopback, with a password; its URL."""
    import redis

    port = port or free_port()
    folder = tmp_path / "redis"
    folder.mkdir(exist_ok=True)
    argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    argv += ["--appendonly", "no", "--dir", str(folder), "--requirepass", PASSWORD]
    with (folder / "redis.log").open("wb") as log:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    url = f"redis://:{PASSWORD}@127.0.0.1:{port}/0"
    try:
        client = redis.Redis.from_url(url, socket_timeout=1)
        end = time.monotonic() + START_TIMEOUT
        while True:
            assert proc.poll() is None, (folder / "redis.log").read_text()
            assert time.monotonic() < end, "redis-server did not answer in time"
            try:
                client.ping()
                break
            except redis.RedisError:
                time.sleep(0.05)
        client.close()
        yield url
    finally:
        stop(proc)


def stop(proc: subprocess.Popen[Any]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=15)


def replica_env(home: Path, redis_url: str, **more: str) -> dict[str, str]:
    env = {**os.environ, "PLUGMAN_HOME": str(home), "PLUGMAN_SECRETS": "file"}
    env.update(PLUGMAN_GATEWAY_TOKEN=TOKEN, PLUGMAN_REDIS_URL=redis_url)
    env["PLUGMAN_GATEWAY_BACKOFF"] = "0.5"
    return {**env, **more}


@contextmanager
def replica(project: Path, env: dict[str, str], said: list[str], *options: str) -> Iterator[str]:
    """`plugman mcp serve --transport http --auth token --stateful` on a free port (sessions
    kept, as a balancer hashing on Mcp-Session-Id needs them): its URL; what it said goes to
    `said`; stopped (and checked) on exit."""
    stateful = ("--auth", "token", "--stateful", *options)
    with http_gateway(project, env, *stateful, said=said) as found:
        yield found.url


@contextmanager
def growing_pair(tmp_path: Path, home: Path, said: list[str]) -> Iterator[tuple[str, str, str]]:
    """The `growing` server behind two replicas of `replica` sharing a fresh Redis: the Redis
    URL and the two replicas' URLs; what they said goes to `said`."""
    (tmp_path / "growing.py").write_text(GROWING)
    configure(home, None, {}, {"growing": tmp_path / "growing.py"})
    with redis_server(tmp_path) as url:
        env = replica_env(home, url)
        project = tmp_path / "project"
        with replica(project, env, said) as first, replica(project, env, said) as second:
            yield url, first, second


@asynccontextmanager
async def client(url: str, seen: list[Any] | None = None) -> AsyncIterator[Any]:
    """The SDK's 2025-era client with the bearer token; what the server sends it, in `seen`."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def on_message(message: Any) -> None:
        if seen is not None:
            seen.append(message)

    web = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    transport = streamable_http_client(url, http_client=web)
    async with (
        web,
        Client(
            transport, mode="legacy", read_timeout_seconds=30, message_handler=on_message
        ) as session,
    ):
        yield session


async def listed(session: Any, wanted: str, deadline: float = START_TIMEOUT) -> set[str]:
    end = time.monotonic() + deadline
    while True:
        names = {tool.name for tool in (await session.list_tools(cache_mode="refresh")).tools}
        if wanted in names or time.monotonic() > end:
            return names
        await anyio.sleep(0.2)


def changes(seen: list[Any]) -> int:
    from mcp import types

    return sum(isinstance(m, types.ToolListChangedNotification) for m in seen)


async def told(seen: list[Any], deadline: float = WAIT) -> bool:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if changes(seen):
            return True
        await anyio.sleep(0.1)
    return False


async def quiet(seen: list[Any], still: float = 1.0, deadline: float = WAIT) -> None:
    """Until no notification has come for `still` seconds: the replica's own news of the
    backend coming up may reach a client just after its first list shows the tools."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        count = len(seen)
        await anyio.sleep(still)
        if len(seen) == count:
            return
    raise AssertionError(f"still told of changes after {deadline} s: {seen}")


def logs_of(home: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in (home / "state").rglob("*.log"))


def test_a_change_on_one_replica_reaches_the_clients_of_the_other(
    tmp_path: Path, isolated_home: Path
) -> None:
    said: list[str] = []
    with growing_pair(tmp_path, isolated_home, said) as (_, first, second):
        seen_a: list[Any] = []
        seen_b: list[Any] = []

        async def main() -> None:
            with anyio.fail_after(180):
                async with client(first, seen_a) as on_a, client(second, seen_b) as on_b:
                    assert "growing__grow" in await listed(on_a, "growing__grow")
                    assert "growing__grow" in await listed(on_b, "growing__grow")
                    await anyio.sleep(1.5)  # changes of the start are told before this
                    seen_a.clear()
                    seen_b.clear()
                    grown = await on_a.call_tool("growing__grow", {"name": "sprout"})
                    assert text(grown) == "ok"
                    assert await told(seen_b), "replica B's client was not told"
                    assert await told(seen_a), "replica A's own client was not told"
                    await anyio.sleep(3)  # what a loop or a double would send meanwhile
                    assert (changes(seen_a), changes(seen_b)) == (1, 1)

        anyio.run(main)
    logs = logs_of(isolated_home) + "\n".join(said)
    assert "tools changed on another replica" in logs
    assert PASSWORD not in logs, "the Redis password reached a log or an output"


async def sse_event(response: Any) -> tuple[str, str]:
    """(id, data) of the next SSE event with data on an open response."""
    event_id, data = "", ""
    async for line in response.aiter_lines():
        if line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data = line[5:].strip()
        elif line == "" and data:
            return event_id, data
    raise AssertionError("the stream ended without an event")


def initialize(url: str, joined: bool = True) -> tuple[str, dict[str, str]]:
    """A raw 2025-11-25 session on `url`: its id, and the headers its requests carry; `joined`:
    it sent `notifications/initialized` (the gateway tells it of changes from then on)."""
    import httpx2

    headers = {"Authorization": f"Bearer {TOKEN}"}
    opened = post(url, headers)
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    accept = {"accept": "application/json, text/event-stream"}
    headers |= {**accept, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    if joined:
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert httpx2.post(url, json=note, headers=headers, timeout=30).status_code == 202
    return session, headers


def test_a_broken_get_stream_resumes_on_the_other_replica(
    tmp_path: Path, isolated_home: Path
) -> None:
    """...and only GET streams are kept in Redis: no call's answer (a tool result) is."""
    import redis

    (tmp_path / "growing.py").write_text(GROWING)
    configure(isolated_home, None, {}, {"growing": tmp_path / "growing.py"})
    said: list[str] = []
    with redis_server(tmp_path) as url:
        env = replica_env(isolated_home, url)
        project = tmp_path / "project"
        with replica(project, env, said) as first, replica(project, env, said) as second:

            async def main() -> tuple[str, str]:
                import httpx2

                session, headers = initialize(first)
                with anyio.fail_after(180):
                    async with client(first) as grower, httpx2.AsyncClient(timeout=30) as web:
                        assert "growing__grow" in await listed(grower, "growing__grow")
                        async with web.stream("GET", first, headers=headers) as stream:
                            assert stream.status_code == 200
                            await grower.call_tool("growing__grow", {"name": "one"})
                            seen_id, seen = await sse_event(stream)
                        assert "notifications/tools/list_changed" in seen and seen_id
                        # the stream is broken; a change is missed meanwhile
                        await grower.call_tool("growing__grow", {"name": "two"})
                        await listed(grower, "growing__two", 30)
                        await anyio.sleep(0.5)
                        resumed = headers | {"last-event-id": seen_id}
                        answer = await web.get(second, headers=resumed)
                assert answer.status_code == 200, answer.text
                assert answer.headers["content-type"].startswith("text/event-stream")
                assert answer.headers["mcp-session-id"] == session
                return seen_id, str(answer.text)

            seen_id, body = anyio.run(main)
        kept = redis.Redis.from_url(url).keys("plugman:events:*")
    get_stream = base64.urlsafe_b64encode(b"_GET_stream").decode().rstrip("=")
    assert kept and all(key.decode().endswith(":" + get_stream) for key in kept), kept
    events = [block for block in body.split("\n\n") if "data:" in block]
    assert any("notifications/tools/list_changed" in event for event in events), body
    ids = [line[4:] for line in body.splitlines() if line.startswith("id: ")]
    assert len(ids) == len(events) and seen_id not in ids, body  # only what was missed


KEY = base64.b64encode(b"k" * 32).decode()


def test_a_login_made_on_one_replica_is_read_by_the_other(
    setup: Setup,  # noqa: F811 (the fixture)
    tmp_path: Path,
) -> None:
    import redis

    setup.login()
    other_home = tmp_path / "other-home"
    (other_home / "config").mkdir(parents=True)
    shutil.copy(setup.home / "config" / "plugman.toml", other_home / "config" / "plugman.toml")
    said: list[str] = []
    with redis_server(tmp_path) as url:
        shared = {"PLUGMAN_GATEWAY_KEY": KEY, "HOME": setup.env["HOME"]}
        env_a = replica_env(setup.home, url, **shared)
        env_b = replica_env(other_home, url, **shared)

        async def calls(at: str) -> str:
            with anyio.fail_after(120):
                async with client(at) as session:
                    assert "prot__add" in await listed(session, "prot__add")
                    return text(await session.call_tool("prot__add", {"a": 2, "b": 3}))

        with replica(setup.project, env_a, said, "--shared-oauth") as first:
            assert anyio.run(calls, first) == "5"
            with replica(tmp_path / "other-project", env_b, said, "--shared-oauth") as second:
                assert anyio.run(calls, second) == "5"
        kept = redis.Redis.from_url(url).get(f"plugman:oauth:{setup.url}")
    assert kept is not None and kept.startswith(b"pm1."), kept
    issued = setup.tokens()
    assert issued and not [t for t in issued if t.encode() in kept], "a token in Redis in clear"
    own = other_home / "config" / "secrets.json"
    assert not own.exists() or not any(t in own.read_text() for t in issued), (
        "replica B kept the login in its own store"
    )
    setup.outputs += [*said, logs_of(setup.home), logs_of(other_home)]
    setup.assert_no_token_leaked()
    assert PASSWORD not in "\n".join(setup.outputs)


def test_replicas_serve_without_redis_and_share_again_once_it_is_back(
    tmp_path: Path, isolated_home: Path
) -> None:
    (tmp_path / "growing.py").write_text(GROWING)
    configure(isolated_home, None, {}, {"growing": tmp_path / "growing.py"})
    said: list[str] = []
    port = free_port()
    env = replica_env(isolated_home, f"redis://:{PASSWORD}@127.0.0.1:{port}/0")
    project = tmp_path / "project"
    with replica(project, env, said) as first, replica(project, env, said) as second:
        seen_a: list[Any] = []
        seen_b: list[Any] = []

        async def calls(on_a: Any, on_b: Any, grown: str) -> None:
            for session in (on_a, on_b):
                assert text(await session.call_tool("notes__add", {"a": 2, "b": 2})) == "4"
            seen_a.clear()
            assert text(await on_a.call_tool("growing__grow", {"name": grown})) == "ok"
            assert await told(seen_a), "replica A's own client was not told"

        async def main() -> bool:
            with anyio.fail_after(240):
                async with client(first, seen_a) as on_a, client(second, seen_b) as on_b:
                    assert "growing__grow" in await listed(on_a, "growing__grow")
                    assert "growing__grow" in await listed(on_b, "growing__grow")
                    await calls(on_a, on_b, "before")  # Redis not there yet
                    with redis_server(tmp_path, port):
                        crossed = False
                        for attempt in range(12):  # the listener tries again every 5 s
                            seen_b.clear()
                            await on_a.call_tool("growing__grow", {"name": f"up{attempt}"})
                            if crossed := await told(seen_b, 3):
                                break
                    await calls(on_a, on_b, "after")  # Redis gone again
                    return crossed

        assert anyio.run(main), "list changes did not cross replicas once Redis was up"
    logs = logs_of(isolated_home) + "\n".join(said)
    assert "not answering" in logs and "answering again: events" in logs, logs
    assert PASSWORD not in logs, "the Redis password reached a log or an output"


def test_one_refresh_at_a_time_across_replicas(tmp_path: Path) -> None:
    """The Redis lock a refresh takes: a second replica waits for the first one's release; a
    holder that never releases (killed) is outlived by the lock's expiry, not waited for ever."""
    import threading

    from plugman.runtime.oauth import sealed

    ring = sealed.Keyring.from_env({"PLUGMAN_GATEWAY_KEY": KEY})
    with redis_server(tmp_path) as url:
        first, second = (sealed.SharedLogins(url, ring, None) for _ in range(2))
        order: list[str] = []
        held = first.lock("oauth:https://a.example/mcp", None).__enter__()
        assert held.held == "redis"

        def other() -> None:
            with second.lock("oauth:https://a.example/mcp", None) as lock:
                order.append(f"second:{lock.held}")

        waiter = threading.Thread(target=other)
        waiter.start()
        time.sleep(0.5)
        order.append("first released")
        held.__exit__(None, None, None)
        waiter.join(timeout=10)
        assert order == ["first released", "second:redis"]
        lost = first.lock("oauth:https://b.example/mcp", None).__enter__()  # never released
        first.client.pexpire(lost.key, 300)  # as LOCK_TTL would, sooner
        started = time.monotonic()
        with second.lock("oauth:https://b.example/mcp", None) as taken:
            assert taken.held == "redis" and time.monotonic() - started < 5
        first.client.close()
        second.client.close()

"""Attacks on what gateway replicas share in Redis: whoever can write to Redis (or reach a
replica) tries to make a replica act on what it did not say, or to read what is not theirs.

- Pub/sub: forged fan-out messages (not JSON, an unknown kind, no origin, oversized) make no
  client hear anything, are logged once, and a replica keeps serving; a well-formed one (the
  only thing a Redis writer can do) tells clients to list again, nothing more.
- Resume: another session's id, a Last-Event-ID that is not ours, one from another session, a
  garbage event stored in the session's stream, no bearer token, another caller than the
  session's owner: refused (404, 401) or skipped, never another session's events.
- Sealed OAuth logins, against a real Redis: a record moved to another server's key, sealed
  under another key, truncated, altered, or garbage of any type at the key: refused with a
  clear error (the backend is then as without a login), never used, never a crash; no key, or
  a key that is not 32 bytes: `--shared-oauth` refused before anything starts.
- Redis holding garbage where events live (a string where a stream is): no crash, no replay.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from plugman.core.errors import PlugmanError, UsageError
from plugman.core.secrets import FileStore
from plugman.runtime.gateway.events import Events, Resume, SessionEvents, session_manager
from plugman.runtime.gateway.principal import SCOPE_KEY, Principal
from plugman.runtime.gateway.shared import CHANNEL, Link
from plugman.runtime.oauth.sealed import Keyring, SharedLogins
from tests.integration.http_gateway import refused_start
from tests.integration.test_gateway import configure, plugman_argv, text
from tests.integration.test_gateway_shared import (
    TOKEN,
    changes,
    client,
    growing_pair,
    initialize,
    listed,
    logs_of,
    quiet,
    redis_server,
    replica,
    replica_env,
    sse_event,
    told,
)

KEY_A = base64.b64encode(b"a" * 32).decode()
KEY_B = base64.b64encode(b"b" * 32).decode()
LOGIN = json.dumps({"tokens": {"access_token": "at-secret", "token_type": "Bearer"}})


@pytest.mark.slow
def test_forged_fanout_messages_are_ignored_and_logged_once(
    tmp_path: Path, isolated_home: Path
) -> None:
    import redis

    configure(isolated_home, None, {})
    said: list[str] = []
    with redis_server(tmp_path) as url:
        writer = redis.Redis.from_url(url)
        env = replica_env(isolated_home, url)
        with replica(tmp_path / "project", env, said) as served:
            seen: list[Any] = []

            async def main() -> None:
                with anyio.fail_after(120):
                    async with client(served, seen) as session:
                        assert "notes__add" in await listed(session, "notes__add")
                        await quiet(seen)
                        seen.clear()
                        forged = [
                            b"not json",
                            json.dumps({"origin": "x", "kind": "evil"}),
                            json.dumps({"kind": "tools"}),
                            json.dumps({"origin": 1, "kind": "tools"}),
                            json.dumps(["tools"]),
                            json.dumps({"origin": "x", "kind": "tools", "pad": "p" * 500}),
                        ]
                        for message in forged:
                            writer.publish(CHANNEL, message)
                        assert not await told(seen, 3), "a forged message reached a client"
                        added = await session.call_tool("notes__add", {"a": 1, "b": 2})
                        assert text(added) == "3", "the replica stopped serving"
                        writer.publish(CHANNEL, json.dumps({"origin": "x", "kind": "tools"}))
                        assert await told(seen), "a well-formed message was not heard"
                        assert changes(seen) == 1

            anyio.run(main)
        writer.close()
    logs = logs_of(isolated_home)
    assert logs.count("ignoring a message on plugman:list-changed") == 1, logs


@pytest.mark.slow
def test_a_resume_reaches_only_its_own_sessions_events(tmp_path: Path, isolated_home: Path) -> None:
    import httpx2
    import redis

    said: list[str] = []
    with growing_pair(tmp_path, isolated_home, said) as (url, first, second):
        session, headers = initialize(first)
        _, others = initialize(first, joined=False)  # a session with no events of its own

        async def event_id() -> str:
            with anyio.fail_after(120):
                async with client(first) as grower, httpx2.AsyncClient(timeout=30) as web:
                    assert "growing__grow" in await listed(grower, "growing__grow")
                    async with web.stream("GET", first, headers=headers) as stream:
                        await grower.call_tool("growing__grow", {"name": "one"})
                        found, _ = await sse_event(stream)
                    await grower.call_tool("growing__grow", {"name": "two"})
                    await listed(grower, "growing__two", 30)
                    await anyio.sleep(0.5)
                    return found

        seen = anyio.run(event_id)
        stranger = "f" * 32
        attempts = {
            "another session's id": headers | {"mcp-session-id": stranger},
            "a session id that is not one": headers | {"mcp-session-id": "../" + session},
            "an event id that is not ours": headers | {"last-event-id": "1-0"},
            "an event id naming no stream": headers | {"last-event-id": "!!!.1-0"},
            "this event id in another session": others | {"last-event-id": seen},
        }
        for what, given in attempts.items():
            given = given if "last-event-id" in given else given | {"last-event-id": seen}
            answer = httpx2.get(second, headers=given, timeout=30)
            assert answer.status_code in (404, 200), (what, answer.status_code)
            assert "list_changed" not in answer.text, f"{what}: replayed {answer.text}"
        bare = {k: v for k, v in headers.items() if k != "Authorization"}
        refused = httpx2.get(second, headers=bare | {"last-event-id": seen}, timeout=30)
        assert refused.status_code == 401

        writer = redis.Redis.from_url(url)
        stream_key = f"plugman:events:{session}:{seen.split('.')[0]}"
        writer.xadd(stream_key, {b"m": b'{"jsonrpc": "2.0", "method": 7}'})
        writer.xadd(stream_key, {b"junk": b"x"})
        resumed = httpx2.get(second, headers=headers | {"last-event-id": seen}, timeout=30)
        assert resumed.status_code == 200, resumed.text
        blocks = [b for b in resumed.text.split("\n\n") if "data:" in b]
        assert any("tools/list_changed" in b for b in blocks), resumed.text
        assert all("list_changed" in b for b in blocks), resumed.text  # garbage skipped
        assert '"method": 7' not in resumed.text and "junk" not in resumed.text
        writer.delete(stream_key)
        writer.set(stream_key, "a string where a stream was")
        garbage = httpx2.get(second, headers=headers | {"last-event-id": seen}, timeout=30)
        assert garbage.status_code == 404, garbage.text
        writer.close()
        alive = httpx2.get(second, headers=headers | {"last-event-id": seen}, timeout=30)
        assert alive.status_code == 404  # still serving, nothing replayed
    assert TOKEN not in logs_of(isolated_home)


def test_a_resume_by_another_caller_than_the_owner_is_refused(tmp_path: Path) -> None:
    """The session's owner is its opener's Principal; a resume from another is a 404 even with
    the right session id and event id (in-process ASGI, a real Redis)."""
    from mcp_types import JSONRPCNotification

    alice = Principal("alice", "https://idp.example")
    mallory = Principal("mallory", "https://idp.example")
    with redis_server(tmp_path) as url:

        async def main() -> list[tuple[int, bytes]]:
            events = Events(Link(url))
            store = SessionEvents(events, "a" * 32, alice.key)
            first = await store.store_event("_GET_stream", None)
            note = JSONRPCNotification(jsonrpc="2.0", method="notifications/tools/list_changed")
            await store.store_event("_GET_stream", note)
            manager = session_manager(events, app=None, json_response=True, stateless=False)
            resume = Resume(None, manager, events)
            answers = []
            for caller in (mallory, alice):
                scope = {
                    "type": "http",
                    "method": "GET",
                    "path": "/mcp",
                    "headers": [
                        (b"host", b"127.0.0.1:1"),
                        (b"accept", b"text/event-stream"),
                        (b"mcp-session-id", b"a" * 32),
                        (b"last-event-id", first.encode()),
                    ],
                    SCOPE_KEY: caller,
                }
                sent: list[Any] = []

                async def send(message: Any, into: list[Any] = sent) -> None:
                    into.append(message)

                async def receive() -> Any:
                    return {"type": "http.request", "body": b""}

                await resume(scope, receive, send)
                answers.append((sent[0]["status"], sent[1]["body"]))
            await events.link.close()
            return answers

        (refused, _), (served, body) = anyio.run(main)
    assert (refused, served) == (404, 200)
    assert b"tools/list_changed" in body


def logins(url: str, key: str = KEY_A) -> SharedLogins:
    return SharedLogins(url, Keyring.from_env({"PLUGMAN_GATEWAY_KEY": key}), None)


def test_sealed_logins_refuse_what_was_moved_rekeyed_cut_or_forged(tmp_path: Path) -> None:
    with redis_server(tmp_path) as url:
        ours = logins(url)
        ours.set("oauth:https://a.example/mcp", LOGIN)
        raw = ours.client.get("plugman:oauth:https://a.example/mcp")
        assert raw.startswith(b"pm1.") and b"at-secret" not in raw
        assert ours.get("oauth:https://a.example/mcp") == LOGIN

        def refused(record: bytes | str, slot: str = "oauth:https://b.example/mcp") -> str:
            ours.client.set("plugman:" + slot, record)
            with pytest.raises(PlugmanError) as caught:
                ours.get(slot)
            assert "at-secret" not in str(caught.value)
            return caught.value.message

        assert "does not decrypt" in refused(raw)  # server A's login in server B's slot
        other = logins(url, KEY_B)
        other.set("oauth:https://b.example/mcp", LOGIN)
        rekeyed = other.client.get("plugman:oauth:https://b.example/mcp")
        assert "sealed under key id" in refused(rekeyed)
        assert "truncated" in refused(raw[:33])  # 20 base64 characters: 15 bytes
        assert "does not decrypt" in refused(raw[:-4] + b"AAAA")
        for garbage in (b"", b"plaintext", LOGIN, b"pm1.zz.!!!", b"\xff\xfe", b"pm1..."):
            refused(garbage)
        ours.client.delete("plugman:oauth:https://b.example/mcp")
        ours.client.rpush("plugman:oauth:https://b.example/mcp", "a list")  # the wrong type
        assert ours.get("oauth:https://b.example/mcp") is None  # Redis refused: as no login
        rotated = logins(url, f"{KEY_B},{KEY_A}")  # a new key first, the old one still read
        assert rotated.get("oauth:https://a.example/mcp") == LOGIN
        local = FileStore(tmp_path / "secrets.json")  # a replica with its own login
        local.set("oauth:https://c.example/mcp", LOGIN)
        mine = SharedLogins(url, Keyring.from_env({"PLUGMAN_GATEWAY_KEY": KEY_A}), local)
        mine.client.set("plugman:oauth:https://c.example/mcp", raw)  # moved over it
        assert mine.get("oauth:https://c.example/mcp") == LOGIN  # its own, not the moved one
        resealed = mine.client.get("plugman:oauth:https://c.example/mcp")
        assert resealed != raw and ours.get("oauth:https://c.example/mcp") == LOGIN
        mine.client.close()
        ours.client.close()
        other.client.close()
        rotated.client.close()


def test_shared_oauth_without_a_usable_key_is_refused(tmp_path: Path, isolated_home: Path) -> None:
    for env in ({}, {"PLUGMAN_GATEWAY_KEY": "short"}, {"PLUGMAN_GATEWAY_KEY": "a" * 44}):
        with pytest.raises(UsageError):
            Keyring.from_env(env)
    configure(isolated_home, None, {})
    project = tmp_path / "project"
    project.mkdir()
    env = replica_env(isolated_home, "redis://:hunter2hunter2@127.0.0.1:1/0")
    env.pop("PLUGMAN_GATEWAY_KEY", None)
    done = refused_start(project, env, "--auth", "token", "--shared-oauth", timeout=120)
    assert done.returncode == 2, done
    assert "PLUGMAN_GATEWAY_KEY" in done.stderr
    assert "hunter2hunter2" not in done.stderr + done.stdout
    assert "Traceback" not in done.stderr
    stdio = subprocess.run(
        [*plugman_argv("--project", str(project), "mcp", "serve", "--shared-oauth")],
        env={**os.environ, "PLUGMAN_HOME": str(isolated_home)},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert stdio.returncode == 2 and "--transport http" in stdio.stderr, stdio

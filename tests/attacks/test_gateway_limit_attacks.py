"""Attacks on the gateway's rate limits and on the request inspection in front of them
(plugman.runtime.gateway.inbound and .ratelimit), end to end over real HTTP: a real
`plugman mcp serve --transport http --auth token` counting in a real redis-server.

- Routing headers (SEP-2243) that name one tool while the body calls another: a balancer
  limiting or routing on `Mcp-Name` counts the wrong tool. Invariant: 400 on both eras' paths
  (the SDK checks only its 2026-07-28 path), the body's tool not called and not counted; a
  header the SDK's own encoding makes equal to the body is accepted.
- Several calls in one body trying to count once: a batch, or an object with `params` given
  twice (which one does the limiter count, which one does the SDK call?). Invariant: 400,
  nothing called, nothing counted.
- A body over the SDK's 4 MiB limit, declared or chunked: 413 before anything is parsed, and
  the replica serves the next call.
- A Redis password (in `PLUGMAN_REDIS_URL`, as it should be given) reaches no output, log
  line, file or backend's environment, and the limits counted with it work.
- Tool names and subjects with `:`, `*`, `/`, newlines: each is hashed into its key, so they
  neither share a counter with another tool or caller nor shape a Redis key, and a subject is
  logged escaped, on one line.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.integration.test_gateway import configure
from tests.integration.test_gateway_auth import ENVY, serving, token_of
from tests.integration.test_gateway_limits import (
    Redis,
    answer_of,
    call,
    post,
    ready,
    redis_server,
    refused,
    request,
)

PER_TOOL = 2
KEY = re.compile(r"^plugman:rl:(user/[0-9a-f]{32}|tool/[0-9a-f]{32}/[0-9a-f]{32})/\d+/\d+/\w+$")


@dataclass
class Replica:
    url: str
    token: str
    redis: Redis


@pytest.fixture
def replica(tmp_path: Path, isolated_home: Path) -> Iterator[Replica]:
    configure(isolated_home, None, {})
    options = ("--auth", "token", "--stateless", "--tool-rate-limit", f"{PER_TOOL}/minute")
    with ExitStack() as stack:
        redis = stack.enter_context(redis_server(tmp_path / "redis"))
        options += ("--rate-limit", "200/minute", "--redis-failure", "closed")
        url, _ = stack.enter_context(
            serving(tmp_path, isolated_home, *options, env={"PLUGMAN_REDIS_URL": redis.url})
        )
        token = token_of(isolated_home)
        ready(url, token)
        assert redis.cli("flushall") == "OK"
        yield Replica(url, token, redis)


def still_limited_at(replica: Replica, tool: str = "notes__add") -> None:
    """`tool` answers PER_TOOL calls, then 429: nothing before counted against it."""
    for turn in range(PER_TOOL):
        assert answer_of(call(replica.url, replica.token, tool, {"a": turn, "b": 1})) == str(
            turn + 1
        )
    refused(call(replica.url, replica.token, tool, {"a": 0, "b": 0}), 429)


def mismatch(found: Any) -> None:
    assert found.status_code == 400, (found.status_code, found.text)
    assert found.json()["error"]["code"] == -32020, found.text


def legacy(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}


def test_routing_headers_must_name_what_the_body_calls(replica: Replica) -> None:
    url, token = replica.url, replica.token
    add = {"name": "notes__add", "arguments": {"a": 1, "b": 2}}
    modern = request("tools/call", add)
    mismatch(post(url, token, modern, {"mcp-method": "tools/call", "mcp-name": "notes__echo"}))
    mismatch(post(url, token, modern, {"mcp-method": "tools/list"}))
    mismatch(post(url, token, modern, {"mcp-method": "tools/call"}))  # no Mcp-Name
    listed = request("tools/list")
    mismatch(post(url, token, listed, {"mcp-method": "tools/list", "mcp-name": "notes__add"}))
    other = "=?base64?" + base64.b64encode(b"notes__echo").decode() + "?="
    mismatch(post(url, token, modern, {"mcp-method": "tools/call", "mcp-name": other}))
    twice = [("mcp-method", "tools/call"), ("mcp-name", "notes__add"), ("mcp-name", "notes__echo")]
    mismatch(_post_raw(url, token, json.dumps(modern).encode(), twice, modern=True))

    # the 2025-era path: the SDK serves it whatever routing headers it carries
    old = legacy("tools/call", add)
    plain = _post_raw(url, token, json.dumps(old).encode(), [], modern=False)
    assert plain.status_code == 200 and plain.json()["result"]["content"][0]["text"] == "3"
    routed = [("mcp-method", "tools/call"), ("mcp-name", "notes__echo")]
    mismatch(_post_raw(url, token, json.dumps(old).encode(), routed, modern=False))
    routed = [("mcp-method", "prompts/get"), ("mcp-name", "notes__add")]
    mismatch(_post_raw(url, token, json.dumps(old).encode(), routed, modern=False))

    # the same name in the SDK's encoding is the same name
    same = "=?base64?" + base64.b64encode(b"notes__add").decode() + "?="
    found = post(url, token, modern, {"mcp-method": "tools/call", "mcp-name": same})
    assert answer_of(found) == "3"
    # two calls served (the plain legacy one and this), none of the refused ones counted
    refused(call(url, token, "notes__add", {"a": 2, "b": 2}), 429)


def test_several_calls_in_one_body_are_refused_uncounted(replica: Replica) -> None:
    url, token = replica.url, replica.token
    calls = [
        legacy("tools/call", {"name": "notes__add", "arguments": {"a": n, "b": 0}})
        for n in range(5)
    ]
    for modern in (True, False):
        found = _post_raw(url, token, json.dumps(calls).encode(), [], modern=modern)
        assert found.status_code == 400, found.text
        assert found.json()["error"]["code"] == -32600
    twice = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
        b'"params": {"name": "notes__echo", "arguments": {"text": "x"}}, '
        b'"params": {"name": "notes__add", "arguments": {"a": 1, "b": 1}}}'
    )
    echo = [("mcp-method", "tools/call"), ("mcp-name", "notes__echo")]
    for modern in (True, False):
        found = _post_raw(url, token, twice, echo if modern else [], modern=modern)
        assert found.status_code == 400, found.text
        assert found.json()["error"]["code"] == -32700
    one = json.dumps(calls[0]).encode()
    found = _post_raw(url, token, one + one, [], modern=False)
    assert found.status_code == 400 and found.json()["error"]["code"] == -32700
    still_limited_at(replica)
    assert all(KEY.match(key) for key in replica.redis.stored()), replica.redis.stored()


def test_a_huge_body_is_refused_before_it_is_read_whole(replica: Replica) -> None:
    import httpx2

    url, token = replica.url, replica.token
    huge = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"pad": "'
    huge += b"x" * (5 * 1024 * 1024) + b'"}}'
    assert _post_raw(url, token, huge, [], modern=False).status_code == 413

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(huge), 65536):
            yield huge[start : start + 65536]

    headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}
    headers["accept"] = "application/json, text/event-stream"
    try:
        status = httpx2.post(url, content=chunks(), headers=headers, timeout=30).status_code
    except httpx2.TransportError:  # answered 413 and closed while the client still sent
        status = 413
    assert status == 413
    still_limited_at(replica)


@pytest.mark.parametrize("name", ["notes__add:*", "*", "notes__add\nINJECTED", "notes__add/2/1"])
def test_tool_names_do_not_shape_keys_or_share_counters(replica: Replica, name: str) -> None:
    for _ in range(PER_TOOL + 2):
        found = call(replica.url, replica.token, name, {"a": 1, "b": 1})
        if found.status_code == 429:
            break
        assert found.status_code == 200, found.text
        assert found.json()["result"]["isError"], found.text  # no such tool
    else:
        raise AssertionError(f"{name!r} was never limited")
    still_limited_at(replica)  # notes__add's own counter untouched
    keys = replica.redis.stored()
    assert len(keys) == 3 and all(KEY.match(key) for key in keys), keys
    assert not [key for key in keys if "notes" in key or "INJECTED" in key or "*" in key]


def test_subjects_do_not_shape_keys_or_share_counters(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from plugman.runtime.gateway.inbound import Inbound
    from plugman.runtime.gateway.principal import Principal
    from plugman.runtime.gateway.ratelimit import Rules, limiter

    hostile = [
        Principal("a:b", "https://idp.example"),
        Principal("a", "b:https://idp.example"),
        Principal("*", "https://idp.example"),
        Principal("alice\nrate limited: 1/minute 'bob'", "https://idp.example"),
        Principal("alice", "https://idp.example"),
    ]
    asked = Inbound("tools/call", "notes__add", 1)
    with redis_server(tmp_path / "redis") as redis:
        rules = Rules("1/minute", "1/minute", redis.url, "closed")
        found = limiter(rules)
        assert found is not None

        async def each() -> list[tuple[int | None, int | None]]:
            verdicts = []
            for who in hostile:
                first = await found.check(who, asked)
                second = await found.check(who, asked)
                verdicts.append((first and first.status, second and second.status))
            return verdicts

        with caplog.at_level(logging.WARNING, logger="plugman.gateway"):
            verdicts = anyio.run(each)
        keys = redis.stored()
    # each caller its own counters: one request allowed, then refused
    assert all(verdict == (None, 429) for verdict in verdicts), verdicts
    assert len(keys) == 2 * len(hostile) and all(KEY.match(key) for key in keys), keys
    lines = [record.getMessage() for record in caplog.records]
    assert lines and all("\n" not in line for line in lines), lines


def test_a_redis_password_reaches_no_output_log_or_backend(
    tmp_path: Path, isolated_home: Path
) -> None:
    script = tmp_path / "envy.py"
    script.write_text(ENVY)
    configure(isolated_home, None, {}, {"envy": script})
    password = "redis-pass-" + "q7" * 12
    with redis_server(tmp_path / "redis", password) as redis:
        env = {"PLUGMAN_REDIS_URL": f"redis://:{password}@127.0.0.1:{redis.port}/0"}
        options = ("--auth", "token", "--tool-rate-limit", "1/minute")
        with serving(tmp_path, isolated_home, *options, env=env) as (url, said):
            token = token_of(isolated_home)
            ready(url, token)
            asked = {"name": "PLUGMAN_REDIS_URL"}
            assert answer_of(call(url, token, "envy__has", asked)) == "no"
            refused(call(url, token, "envy__has", asked), 429)
            keys = redis.stored()
    assert len(keys) == 1 and KEY.match(keys[0]), keys
    assert not [line for line in said if password in line]
    holding = [
        str(path)
        for folder in (isolated_home, tmp_path / "project")
        for path in folder.rglob("*")
        if path.is_file() and password.encode() in path.read_bytes()
    ]
    assert holding == []
    logged = (isolated_home / "state" / "logs" / "gateway.log").read_text()
    assert f"counted in redis://:***@127.0.0.1:{redis.port}/0" in logged, logged


def _post_raw(
    url: str, token: str, body: bytes, headers: list[tuple[str, str]], *, modern: bool
) -> Any:
    import httpx2

    given = [
        ("authorization", f"Bearer {token}"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        *headers,
    ]
    if modern:
        given.append(("mcp-protocol-version", "2026-07-28"))
    return httpx2.post(url, content=body, headers=given, timeout=30)

"""plugman.runtime.gateway.inbound's reading of one request (the pure part; the ASGI layer runs
for real in tests/integration/test_gateway_limits.py and
tests/attacks/test_gateway_limit_attacks.py), and the rate limiter's keys and rules
(plugman.runtime.gateway.ratelimit)."""

from __future__ import annotations

import base64
import json

import pytest

from plugman.core.errors import UsageError
from plugman.runtime.gateway.inbound import Inbound, Refusal, parsed
from plugman.runtime.gateway.ratelimit import Rules, limiter, tool_key

CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "a__b"}}


def body(value: object) -> bytes:
    return json.dumps(value).encode()


def test_what_a_request_asks_for() -> None:
    assert parsed(body(CALL), []) == Inbound("tools/call", "a__b", 3)
    listing = {"jsonrpc": "2.0", "id": "x", "method": "tools/list"}
    assert parsed(body(listing), [(b"mcp-method", b"tools/list")]) == Inbound(
        "tools/list", None, "x"
    )
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert parsed(body(note), []) == Inbound("notifications/initialized")
    assert parsed(body({"jsonrpc": "2.0", "id": 4, "result": {}}), []) == Inbound(id=4)
    assert parsed(body({**CALL, "id": True}), []) == Inbound("tools/call", "a__b", None)
    prompt = {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "p"}}
    assert parsed(body(prompt), [(b"mcp-name", b"p")]) == Inbound("prompts/get", None, 1)


@pytest.mark.parametrize(
    ("raw", "headers", "code"),
    [
        (b"\xff\xfe{}", [], -32700),
        (body(CALL).decode().encode("utf-16"), [], -32700),
        (b'{"id": 1, "id": 2, "method": "tools/list"}', [], -32700),
        (body([CALL, CALL]), [], -32600),
        (b'"tools/call"', [], -32600),
        (body(CALL), [(b"mcp-method", b"tools/list")], -32020),
        (body(CALL), [(b"mcp-method", b"tools/call")], -32020),
        (body(CALL), [(b"mcp-name", b"a__c")], -32020),
        (body(CALL), [(b"mcp-name", b"a__b"), (b"mcp-name", b"a__b")], -32020),
        (body(CALL), [(b"mcp-name", b"=?base64?YV9fYw==?=")], -32020),
        (body(CALL), [(b"mcp-name", b"=?base64?not base64?=")], -32020),
        (body({**CALL, "method": "tools/list"}), [(b"mcp-name", b"a__b")], -32020),
    ],
)
def test_refused(raw: bytes, headers: list[tuple[bytes, bytes]], code: int) -> None:
    found = parsed(raw, headers)
    assert isinstance(found, Refusal) and found.status == 400 and found.code == code, found


def test_the_sdk_encoding_of_a_name_is_the_name() -> None:
    encoded = b"=?base64?" + base64.b64encode(b"a__b") + b"?="
    headers = [(b"mcp-method", b"tools/call"), (b"mcp-name", encoded)]
    assert parsed(body(CALL), headers) == Inbound("tools/call", "a__b", 3)


def test_tool_keys_are_hashes() -> None:
    names = ["a:b", "a:*", "a\nb", "a/1/1/minute", "A:B"]
    keys = [tool_key(name) for name in names]
    assert len(set(keys)) == len(names)
    assert all(len(key) == 32 and set(key) <= set("0123456789abcdef") for key in keys)


def test_rules_that_cannot_be_used() -> None:
    assert limiter(Rules()) is None
    with pytest.raises(UsageError, match="--rate-limit: 'lots' is not a rate limit"):
        limiter(Rules("lots"))
    with pytest.raises(UsageError, match="unknown --redis-failure 'maybe'"):
        limiter(Rules("1/second", failure="maybe"))
    with pytest.raises(UsageError, match=r"'http://:\*\*\*@h:1' is not a Redis URL") as raised:
        limiter(Rules("1/second", redis_url="http://:hunter2hunter2@h:1"))
    assert "hunter2" not in str(raised.value)

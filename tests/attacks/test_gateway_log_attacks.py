"""Attacks on the gateway's call log, traces and health endpoints
(plugman.runtime.gateway.observe, .telemetry, web.HealthGate), over real HTTP.

- A secret in reach of the replica (the bearer token clients send, a Redis URL's password in
  PLUGMAN_REDIS_URL, a secret in a call's arguments or in its result) appears in no call-log
  line, no log, no stderr line and no exported span.
- A tool name holding newlines, quotes, a JSON object, U+2028 or 10,000 characters cannot add
  or forge a line of the call log: one call, one line, that parses, with the replica's own
  fields. A `sub` built the same way cannot either: signed into real JWT access tokens by an
  issuer (tests.support.oidc_issuer) behind `--auth oidc`, and none of those tokens is logged.
- `/healthz` and `/readyz` answer without the token and say nothing of the config (no server
  name, no address, no version); a path that only resembles them (`/healthz/../mcp`,
  `/HEALTHZ`, `/readyz/`) is not a way around the token.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import anyio
import httpx2

from plugman.runtime.gateway.observe import MAX_FIELD, Call, CallLog
from tests.integration.test_gateway import text
from tests.integration.test_gateway_observe import (
    configure,
    receiving,
    replica,
    wait_for_tools,
)
from tests.integration.test_gateway_oidc import AUDIENCE, oidc
from tests.support.oidc_issuer import Issuer

TOKEN = "tok-" + "q7" * 20
REDIS_PASSWORD = "r3dis-pa55-" + "w" * 12
ARGUMENT = "argument-secret-" + "k" * 12
FORGED = [
    'x"}\n{"replica": "evil", "outcome": "ok"}',
    "x\r\n{}\n",
    "x\u2028\u2029\x00\x1b[2J",
    '\\"}\n' * 2500,  # 10,000 characters
]

# A 10,000-character sub makes a header past what HTTP servers take (h11: 16 KiB): 1,000 here
SUBS = [*FORGED[:3], '\\"}\n' * 250]


def everything_logged(home: Path) -> str:
    logs = home / "state" / "logs"
    return "\n".join(p.read_text(errors="replace") for p in sorted(logs.iterdir()) if p.is_file())


def test_no_token_password_arguments_or_result_in_logs_or_spans(
    tmp_path: Path, isolated_home: Path
) -> None:
    configure(isolated_home)
    env = {
        "PLUGMAN_GATEWAY_TOKEN": TOKEN,
        "PLUGMAN_REDIS_URL": f"redis://default:{REDIS_PASSWORD}@127.0.0.1:1/0",
    }
    with receiving() as receiver:
        env |= {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "100"}
        options = ("--auth", "token", "--otel", "--log-stderr")
        with replica(tmp_path, isolated_home, *options, env=env) as found:

            async def session() -> None:
                from mcp import Client
                from mcp.client.streamable_http import streamable_http_client

                with anyio.fail_after(120):
                    web = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
                    transport = streamable_http_client(found.url, http_client=web)
                    async with web, Client(transport) as client:
                        await wait_for_tools(client, {"traced__echo"})
                        echoed = await client.call_tool("traced__echo", {"text": ARGUMENT})
                        assert text(echoed) == ARGUMENT  # the result holds it too
                        await client.call_tool("traced__missing", {"text": TOKEN})

            anyio.run(session)
        spans = b"".join(s.SerializeToString() for s in receiver.spans)
    assert spans, "no span was exported"
    logged = everything_logged(isolated_home)
    lines = [json.loads(line) for line in (isolated_home / "state/logs/calls.jsonl").open()]
    assert [line["outcome"] for line in lines] == ["ok", "unknown"]
    for secret in (TOKEN, REDIS_PASSWORD, ARGUMENT):
        assert secret not in found.err, f"{secret[:6]}... on stderr"
        assert secret.encode() not in spans, f"{secret[:6]}... in a span"
        assert secret not in logged, f"{secret[:6]}... in a log"


def test_a_forged_tool_name_cannot_add_or_forge_a_call_log_line(
    tmp_path: Path, isolated_home: Path
) -> None:
    configure(isolated_home)
    with replica(tmp_path, isolated_home, "--replica", "gw-real", "--log-stderr") as found:

        async def session() -> None:
            from mcp import Client

            with anyio.fail_after(120):
                async with Client(found.url) as client:
                    await wait_for_tools(client, {"traced__echo"})
                    for name in FORGED:
                        assert (await client.call_tool(name, {})).is_error

        anyio.run(session)
    raw = (isolated_home / "state" / "logs" / "calls.jsonl").read_text()
    lines = raw.split("\n")
    assert lines[-1] == "" and len(lines) == len(FORGED) + 1, "a call added a line"
    parsed = [json.loads(line) for line in lines[:-1]]
    assert [line["tool"] for line in parsed] == [name[:MAX_FIELD] for name in FORGED]
    assert {line["replica"] for line in parsed} == {"gw-real"}
    assert {line["outcome"] for line in parsed} == {"unknown"}
    assert all(line.isascii() for line in lines)  # U+2028 escaped: no reader splits there
    on_stderr = [line for line in found.err.split("\n") if line.startswith("{")]
    assert [json.loads(line) for line in on_stderr] == parsed


def test_a_forged_sub_in_a_signed_token_cannot_add_or_forge_a_line(
    tmp_path: Path, isolated_home: Path
) -> None:
    configure(isolated_home)
    with Issuer() as issuer:
        tokens = [issuer.token(aud=AUDIENCE, sub=sub) for sub in SUBS]
        options = ("--replica", "gw-real", "--log-stderr", *oidc(issuer))
        with replica(tmp_path, isolated_home, *options) as found:

            async def session(token: str) -> None:
                from mcp import Client
                from mcp.client.streamable_http import streamable_http_client

                with anyio.fail_after(120):
                    web = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
                    transport = streamable_http_client(found.url, http_client=web)
                    async with web, Client(transport) as client:
                        await wait_for_tools(client, {"traced__echo"})
                        said = await client.call_tool("traced__echo", {"text": "hi"})
                        assert text(said) == "hi"

            for token in tokens:
                anyio.run(session, token)
    raw = (isolated_home / "state" / "logs" / "calls.jsonl").read_text()
    lines = raw.split("\n")
    assert lines[-1] == "" and len(lines) == len(SUBS) + 1, "a sub added a line"
    parsed = [json.loads(line) for line in lines[:-1]]
    assert [line["sub"] for line in parsed] == [sub[:MAX_FIELD] for sub in SUBS]
    assert {(line["replica"], line["outcome"]) for line in parsed} == {("gw-real", "ok")}
    logged = everything_logged(isolated_home) + found.err
    assert not [token for token in tokens if token in logged], "a token was logged"


class Sink:
    def __init__(self) -> None:
        self.written: list[str] = []

    def write(self, text: str) -> int:
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        return None


def test_a_forged_sub_cannot_add_or_forge_a_call_log_line() -> None:
    """The `sub` comes from a verified token, but the identity provider lets users pick names:
    the same escaping holds for it (the auth layer is another module; this is the log's part)."""
    sink = Sink()
    log = CallLog("gw-real", (sink,))  # type: ignore[arg-type]  # a TextIO's write and flush
    for sub in FORGED:
        log.record(Call(sub, "notes", "add", 0.001, "ok"))
    joined = "".join(sink.written)
    assert joined.count("\n") == len(FORGED) and joined.isascii()
    parsed = [json.loads(line) for line in joined.splitlines()]
    assert [line["sub"] for line in parsed] == [sub[:MAX_FIELD] for sub in FORGED]
    assert {line["replica"] for line in parsed} == {"gw-real"}


def raw_get(base: str, path: str, host: str | None = None) -> tuple[int, bytes, bytes]:
    """GET `path` exactly as written (no client normalizes it): (status, head, body)."""
    address = base.removeprefix("http://")
    name, port = address.rsplit(":", 1)
    request = f"GET {path} HTTP/1.1\r\nHost: {host or address}\r\nConnection: close\r\n\r\n"
    with socket.create_connection((name, int(port)), timeout=10) as sock:
        sock.sendall(request.encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), head, body


def test_health_endpoints_reveal_nothing_and_open_no_door(
    tmp_path: Path, isolated_home: Path
) -> None:
    configure(isolated_home)
    env: dict[str, Any] = {"PLUGMAN_GATEWAY_TOKEN": TOKEN}
    with replica(tmp_path, isolated_home, "--auth", "token", env=env) as found:
        port = found.base.rsplit(":", 1)[1]
        with httpx2.Client(base_url=found.base, timeout=10) as web:
            for path in ("/healthz", "/readyz"):
                answer = web.get(path)
                assert answer.status_code in (200, 503)
                assert answer.text in ("ok", "ready", "starting", "draining")
                named = {k.lower() for k in answer.headers}
                assert named <= {"content-type", "content-length", "cache-control"}, named
        for path in ("/healthz", "/readyz"):
            status, head, body = raw_get(found.base, path, host="evil.example")
            for said in (b"traced", b"127.0.0.1", port.encode(), b"plugman", TOKEN.encode()):
                assert said not in head + body, (path, said)
            assert status in (200, 503)
        for path in ("/healthz/../mcp", "/readyz/../mcp", "/HEALTHZ", "/readyz/", "/healthz%2f"):
            status, _, body = raw_get(found.base, path)
            assert status == 401, (path, status, body)
        assert raw_get(found.base, "/mcp")[0] == 401

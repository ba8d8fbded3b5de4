"""Issue 37's organization scenarios on the whole fleet (tests/integration/fleet.py): redis-server,
a real issuer of JWT access tokens (tests/support/oidc_issuer.py), three `plugman mcp serve
--transport http --auth oidc` replicas sharing Redis, and HAProxy 2.6 in front, all on 127.0.0.1.

- Limits: a user allowed N calls a minute gets 429 on call N+1, through the balancer and then on
  every replica directly (the count is Redis's, not a replica's); another user is untouched;
  Redis restarted mid-test gives the configured answer (`--redis-failure closed`: 503 while it
  is down, never a crash), and the limits hold again once it is back, no replica restarted.
- Access: the organization's managed `gatewayAccess` lets group `eng` use one server only; a
  caller in `eng` lists only that server's tools on every replica and is refused the other's
  (answered as an unknown tool), while group `ops` uses both.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.integration.fleet import BACKEND_NAME, Auth, ReplicaSpec, fleet, rpc
from tests.support.oidc_issuer import Issuer

pytestmark = pytest.mark.slow  # a whole fleet: redis, issuer, three replicas, HAProxy

AUDIENCE = "https://gateway.example/mcp"
LIMIT = 12


def oidc(issuer: Issuer) -> Auth:
    options = ("--auth", "oidc", "--issuer", issuer.issuer, "--audience", AUDIENCE)
    return Auth(options, {}, lambda: {"Authorization": f"Bearer {issuer.token(aud=AUDIENCE)}"})


def bearer(issuer: Issuer, subject: str, *groups: str) -> dict[str, str]:
    token = issuer.token(aud=AUDIENCE, sub=subject, groups=list(groups))
    return {"Authorization": f"Bearer {token}"}


def echo(url: str, headers: dict[str, str], text: str, server: str = BACKEND_NAME) -> int:
    status, answer = rpc(
        url, "tools/call", {"name": f"{server}__echo", "arguments": {"text": text}}, headers
    )
    if status == 200:
        assert answer["result"]["content"][0]["text"] == text, answer
    return status


def test_a_user_limit_holds_on_every_replica_and_redis_restarting_answers_503(
    tmp_path: Path,
) -> None:
    limits = ("--rate-limit", f"{LIMIT}/minute", "--redis-failure", "closed")
    specs = [ReplicaSpec(f"r{n}", limits) for n in (1, 2, 3)]
    with Issuer() as issuer, fleet(tmp_path / "fleet", specs, oidc(issuer), share_redis=True) as up:
        pids = {r.name: r.proc.pid for r in up.replicas if r.proc}
        carol = bearer(issuer, f"carol-{uuid.uuid4().hex[:6]}")
        served = [echo(up.url, carol, f"call {n}") for n in range(LIMIT)]
        assert served == [200] * LIMIT
        assert {record.replica for record in up.records()} == {"r1", "r2", "r3"}
        assert echo(up.url, carol, "one too many") == 429
        for replica in up.replicas:  # the count is shared: over the limit on every replica
            status, answer = rpc(replica.url, "tools/list", {}, carol)
            assert status == 429, (replica.name, answer)
        dave = bearer(issuer, "dave")
        assert [echo(up.url, dave, f"dave {n}") for n in range(3)] == [200] * 3

        assert up.redis is not None
        up.redis.stop()
        erin = bearer(issuer, "erin")
        down = [rpc(r.url, "tools/list", {}, erin)[0] for r in up.replicas]
        assert down == [503, 503, 503], down  # closed: refused while the count is unknown
        up.redis.start()
        deadline = time.monotonic() + 10
        probe = bearer(issuer, "probe")
        for replica in up.replicas:  # 503 until each replica asks Redis again (~1 s pause)
            while (status := rpc(replica.url, "tools/list", {}, probe)[0]) == 503:
                assert time.monotonic() < deadline, f"{replica.name} never recovered"
                time.sleep(0.05)
            assert status == 200, (replica.name, status)
        back = [echo(up.url, erin, f"erin {n}") for n in range(LIMIT)]
        assert back == [200] * LIMIT, back
        assert echo(up.url, erin, "over again") == 429  # the limit holds again
        assert {r.name: r.proc.pid for r in up.replicas if r.proc} == pids, "a replica restarted"
    assert up.swept == []
    for replica in up.replicas:
        assert "Traceback" not in replica.log.read_text(errors="replace")


SECOND = "vault"
RULES = f"""gatewayAccess = [
  {{ groups = ["eng"], servers = ["{BACKEND_NAME}"] }},
  {{ groups = ["ops"], servers = ["*"] }},
]
"""


def test_a_group_allowed_one_server_sees_and_calls_only_that_server(tmp_path: Path) -> None:
    backend = tmp_path / "fleet" / "who.py"  # the harness writes it; a second server runs it too
    more = f"[mcp_servers.{SECOND}]\ncommand = {json.dumps(sys.executable)}\n"
    more += f"args = [{json.dumps(str(backend))}]\n"
    specs = [ReplicaSpec(f"r{n}", config=more, managed=RULES) for n in (1, 2, 3)]
    with Issuer() as issuer:
        ops = bearer(issuer, "olga", "ops")
        auth = Auth(oidc(issuer).options, {}, lambda: ops)  # readiness: ops sees `who`
        with fleet(tmp_path / "fleet", specs, auth, redis=False) as up:
            eng = bearer(issuer, "eve", "eng")
            for replica in up.replicas:
                status, answer = rpc(replica.url, "tools/list", {}, eng)
                names = {tool["name"] for tool in answer["result"]["tools"]}
                assert status == 200 and names == {f"{BACKEND_NAME}__{t}" for t in TOOLS}, names
                status, answer = rpc(replica.url, "tools/list", {}, ops)
                names = {tool["name"] for tool in answer["result"]["tools"]}
                assert {f"{SECOND}__echo", f"{BACKEND_NAME}__echo"} <= names, names
            for n in range(6):
                assert echo(up.url, eng, f"eng {n}") == 200
                status, answer = rpc(
                    up.url,
                    "tools/call",
                    {"name": f"{SECOND}__echo", "arguments": {"text": "secret"}},
                    eng,
                )
                text = json.dumps(answer)
                assert "Unknown tool" in text and "secret" not in text, answer
                assert echo(up.url, ops, f"ops {n}", SECOND) == 200
            ran = [r for r in up.records() if r.arguments.get("text") == "secret"]
            assert ran == [], "a refused call reached the backend"
        assert up.swept == []


TOOLS = ("echo", "add", "hold")

"""Issue 37's identity scenario on the fleet (tests/integration/fleet.py): three `plugman mcp
serve --transport http --stateless --auth oidc` replicas behind HAProxy 2.6, in front of a real
issuer of JWT access tokens on 127.0.0.1 (tests/support/oidc_issuer.py).

- Calls with the issuer's tokens for the audience go through round robin to every replica.
- A token for another audience and an expired token: 401 from every replica.
- The issuer rotates its signing key: a token signed by the new key gets 200 from every replica,
  none restarted (same pids), each fetching the keys once; the withdrawn key's token gets 401.
- Afterwards: nothing left running, no traceback, no token in any file of the fleet's.
"""

from __future__ import annotations

import time
from pathlib import Path

from tests.integration.fleet import BACKEND_NAME, Auth, fleet, rpc
from tests.support.oidc_issuer import Issuer

AUDIENCE = "https://gateway.example/mcp"


def oidc_auth(issuer: Issuer, audience: str = AUDIENCE) -> Auth:
    """`--auth oidc` against `issuer`; each request carries the current key's token."""
    options = ("--auth", "oidc", "--issuer", issuer.issuer, "--audience", audience)
    return Auth(options, {}, lambda: {"Authorization": f"Bearer {issuer.token(aud=audience)}"})


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def echo(url: str, token: str, text: str) -> int:
    status, answer = rpc(
        url,
        "tools/call",
        {"name": f"{BACKEND_NAME}__echo", "arguments": {"text": text}},
        bearer(token),
    )
    if status == 200:
        content = answer["result"]["content"]
        assert content[0]["text"] == text, answer
    return status


def test_audience_expiry_and_a_rotated_key_on_every_replica(tmp_path: Path) -> None:
    with Issuer() as issuer, fleet(tmp_path / "fleet", auth=oidc_auth(issuer), redis=False) as up:
        pids = {replica.name: replica.proc.pid for replica in up.replicas if replica.proc}
        good = issuer.token(aud=AUDIENCE)
        assert [echo(up.url, good, f"call {n}") for n in range(9)] == [200] * 9
        assert {record.replica for record in up.records()} == {"r1", "r2", "r3"}
        now = int(time.time())
        wrong = issuer.token(aud="https://other.example/mcp")
        expired = issuer.token(aud=AUDIENCE, exp=now - 120, iat=now - 600)
        for replica in up.replicas:
            assert echo(replica.url, wrong, "wrong audience") == 401, replica.name
            assert echo(replica.url, expired, "expired") == 401, replica.name
        old = issuer.current
        fetched = issuer.jwks_fetches
        issuer.rotate()
        rotated = issuer.token(aud=AUDIENCE)
        for replica in up.replicas:
            assert echo(replica.url, rotated, f"rotated on {replica.name}") == 200, replica.name
        assert issuer.jwks_fetches == fetched + len(up.replicas)
        assert [echo(up.url, rotated, f"after {n}") for n in range(6)] == [200] * 6
        for replica in up.replicas:
            assert echo(replica.url, issuer.token(key=old, aud=AUDIENCE), "old") == 401
        assert issuer.jwks_fetches == fetched + len(up.replicas)
        assert {r.name: r.proc.pid for r in up.replicas if r.proc} == pids, "a replica restarted"
        assert all(replica.proc and replica.proc.poll() is None for replica in up.replicas)
        tokens = [good, wrong, expired, rotated]
    assert up.swept == [], f"left running: {up.swept}"
    for replica in up.replicas:
        said = replica.log.read_text(errors="replace")
        assert "Traceback" not in said, said
    files = [path for path in up.run.rglob("*") if path.is_file()]
    for token in tokens:
        signature = token.rsplit(".", 1)[1].encode()
        assert not [path for path in files if signature in path.read_bytes()]

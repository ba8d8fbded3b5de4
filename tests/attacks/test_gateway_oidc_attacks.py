"""Attacks on `plugman mcp serve --auth oidc`, end to end over real HTTP: a subprocess gateway
in front of a real issuer of JWT access tokens on 127.0.0.1 (tests.support.oidc_issuer).

Each forged or misdirected token gets 401 `error="invalid_token"` while a good one gets 200
from the same gateway: alg `none`; HS256 signed with the issuer's public key as the HMAC secret
(alg confusion); a token from another issuer naming the real key's `kid`, with the real `iss`
or its own; `iss` spelled with a trailing `/`; an `aud` list without ours (one spelled with a
trailing `/`); no `exp`; no `sub`; `nbf` or `iat` in the future; expired beyond the leeway; a
`jku` header pointing at the attacker's keys (never fetched); a header algorithm of another key
type; a good token in the query string, or beside a second `Authorization` header. Tokens
naming random `kid`s make at most one JWKS fetch per cooldown at the issuer. An `http://`
issuer off loopback is refused at start. No token is in any output, log or file.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import uuid
from pathlib import Path

import jwt

from plugman.runtime.gateway.oidc import COOLDOWN
from tests.integration.http_gateway import refused_start
from tests.integration.test_gateway import configure
from tests.integration.test_gateway_auth import environment, post, serving
from tests.support.oidc_issuer import Issuer

AUDIENCE = "https://gateway.example/mcp"


def oidc(issuer: Issuer) -> tuple[str, ...]:
    return ("--auth", "oidc", "--issuer", issuer.issuer, "--audience", AUDIENCE)


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hs256(header: dict[str, object], claims: dict[str, object], secret: bytes) -> str:
    signing = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}"
    mac = hmac.new(secret, signing.encode(), hashlib.sha256).digest()
    return f"{signing}.{b64(mac)}"


def reheaded(token: str, header: object) -> str:
    """`token` with another header (and its signature kept)."""
    _, claims, signature = token.split(".")
    return f"{b64(json.dumps(header).encode())}.{claims}.{signature}"


def forged(issuer: Issuer, attacker: Issuer) -> dict[str, str]:
    """Name: a token the gateway must refuse."""
    now = int(time.time())
    claims = {"iss": issuer.issuer, "sub": "mallory", "aud": AUDIENCE, "iat": now, "exp": now + 300}
    kid = issuer.current.kid
    return {
        "alg none": jwt.encode(claims, None, algorithm="none", headers={"kid": kid}),
        "HS256 with the public key": hs256(
            {"alg": "HS256", "typ": "JWT", "kid": kid}, claims, issuer.public_pem()
        ),
        "another issuer, same kid, our iss": attacker.token(
            aud=AUDIENCE, iss=issuer.issuer, headers={"kid": kid}
        ),
        "another issuer, same kid, its iss": attacker.token(aud=AUDIENCE, headers={"kid": kid}),
        "iss with a trailing slash": issuer.token(aud=AUDIENCE, iss=issuer.issuer + "/"),
        "aud list without ours": issuer.token(aud=["https://other.example/mcp", AUDIENCE + "/"]),
        "aud spelled in another case": issuer.token(aud=AUDIENCE.upper()),
        "no exp": issuer.token(aud=AUDIENCE, exp=None),
        "no sub": issuer.token(aud=AUDIENCE, sub=None),
        "empty sub": issuer.token(aud=AUDIENCE, sub=""),
        "nbf in the future": issuer.token(aud=AUDIENCE, nbf=now + 3600),
        "iat in the future": issuer.token(aud=AUDIENCE, iat=now + 3600),
        "expired beyond the leeway": issuer.token(aud=AUDIENCE, exp=now - 120, iat=now - 600),
        "jku to the attacker's keys": attacker.token(
            aud=AUDIENCE, iss=issuer.issuer, headers={"jku": f"{attacker.url}/jwks"}
        ),
        "ES256 named in the header of an RSA key's token": reheaded(
            issuer.token(aud=AUDIENCE), {"alg": "ES256", "kid": kid}
        ),
        "a signature cut off": issuer.token(aud=AUDIENCE).rsplit(".", 1)[0] + ".",
        "not a JWT": "x" * 40,
        "a header that is not an object": reheaded(issuer.token(aud=AUDIENCE), ["RS256"]),
        "a fourth segment": issuer.token(aud=AUDIENCE) + ".e30",
    }


def test_forged_and_misdirected_tokens_are_refused(
    tmp_path: Path, isolated_home: Path, secret_scan: list[str]
) -> None:
    import httpx2

    configure(isolated_home, None, {})
    with (
        Issuer() as issuer,
        Issuer() as attacker,
        serving(tmp_path, isolated_home, *oidc(issuer)) as (url, said),
    ):
        tokens = forged(issuer, attacker)
        for name, token in tokens.items():
            refused = post(url, bearer(token))
            assert refused.status_code == 401, name
            assert refused.headers["www-authenticate"].startswith(
                'Bearer error="invalid_token", resource_metadata='
            ), name
            assert token not in refused.text
        good = issuer.token(aud=AUDIENCE, groups=["dev"])
        tokens["good"] = good
        assert post(url, bearer(good)).status_code == 200
        assert post(f"{url}?access_token={good}").status_code == 401
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        doubled = httpx2.post(
            url,
            json=body,
            headers=[("authorization", "Bearer x"), ("authorization", f"Bearer {good}")],
            timeout=30,
        )
        assert doubled.status_code == 401
        assert attacker.jwks_fetches == 0, "the gateway fetched keys a token pointed to"
    log = (isolated_home / "state" / "logs" / "gateway.log").read_text()
    for reason in (
        "the token's algorithm is not an asymmetric one",
        "the token's signature does not verify",
        "the token's iss is not the issuer",
        "the token's aud does not include this gateway's audience",
        "the token has no exp claim",
        "the token is not valid yet",
        "the token has expired",
        "the token's algorithm is not its key's",
    ):
        assert reason in log, reason
    secret_scan.extend(said)
    written = [
        path for folder in (isolated_home, tmp_path) for path in folder.rglob("*") if path.is_file()
    ]
    for name, token in tokens.items():
        signature = token.rsplit(".", 1)[-1] or token
        assert not [line for line in said if signature in line], name
        assert not [p for p in written if signature.encode() in p.read_bytes()], name


def test_random_kids_do_not_make_every_request_fetch_the_keys(
    tmp_path: Path, isolated_home: Path
) -> None:
    import httpx2

    configure(isolated_home, None, {})
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with (
        Issuer() as issuer,
        serving(tmp_path, isolated_home, *oidc(issuer)) as (url, _),
        httpx2.Client(timeout=30) as client,
    ):
        before = issuer.jwks_fetches
        started = time.monotonic()
        for _ in range(200):
            token = issuer.token(aud=AUDIENCE, headers={"kid": uuid.uuid4().hex})
            assert client.post(url, json=body, headers=bearer(token)).status_code == 401
        elapsed = time.monotonic() - started
        fetched = issuer.jwks_fetches - before
        assert 1 <= fetched <= 1 + int(elapsed / COOLDOWN), (fetched, elapsed)
        assert post(url, bearer(issuer.token(aud=AUDIENCE))).status_code == 200


def test_an_http_issuer_off_loopback_is_refused_at_start(
    tmp_path: Path, isolated_home: Path
) -> None:
    for issuer in ("http://192.0.2.7", "http://idp.example/realms/x", "ftp://127.0.0.1"):
        options = ("--auth", "oidc", "--issuer", issuer, "--audience", AUDIENCE)
        done = refused_start(tmp_path, environment(isolated_home), *options)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"error: --issuer: refusing '{issuer}'"), done.stderr
        assert "hint: use the provider's https:// URL" in done.stderr
        assert "Traceback" not in done.stderr
    assert not (isolated_home / "state").exists(), "it started something (logs, state)"


def test_a_jwks_uri_over_http_off_loopback_is_refused_at_start(
    tmp_path: Path, isolated_home: Path
) -> None:
    class Pointing(Issuer):
        def document(self) -> dict[str, object]:
            return {**super().document(), "jwks_uri": "http://keys.example/jwks"}

    with Pointing() as issuer:
        done = refused_start(tmp_path, environment(isolated_home), *oidc(issuer))
    assert done.returncode == 2, done.stderr
    assert "jwks_uri: refusing 'http://keys.example/jwks'" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr

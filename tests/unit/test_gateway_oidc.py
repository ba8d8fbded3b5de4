"""The OIDC verifier and gate (plugman.runtime.gateway.oidc, .gate) in process: which JWKS
entries become keys, which URLs are safe, groups from claims, the Principal each gate puts in
the ASGI scope, the keys fetched again once old, and refusals logged without flooding. (Over
real HTTP with a subprocess gateway: tests/integration/test_gateway_oidc.py and
tests/attacks/test_gateway_oidc_attacks.py.)"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from plugman.core.errors import UsageError
from plugman.runtime.gateway import gate, oidc
from plugman.runtime.gateway.principal import SCOPE_KEY, Principal, in_scope
from plugman.runtime.gateway.web import TOKEN_HOLDER, BearerGate
from tests.support.oidc_issuer import Issuer

AUDIENCE = "https://gateway.example/mcp"


def verifier(issuer: Issuer, **more: Any) -> oidc.Verifier:
    keys = oidc.parse_keys({"keys": [key.jwk() for key in issuer.published]})
    given = oidc.Settings(issuer.issuer, AUDIENCE, **more)
    return oidc.Verifier(given, f"{issuer.url}/jwks", keys)


def test_only_public_signing_keys_of_asymmetric_types_are_kept() -> None:
    issuer = Issuer()
    rsa = issuer.current.jwk()
    entries = [
        rsa,
        {"kty": "oct", "kid": "hmac", "k": "c2VjcmV0"},
        {**rsa, "kid": "enc", "use": "enc"},
        {**rsa, "kid": "hs", "alg": "HS256"},
        {**rsa, "kid": "private", "d": "AQAB"},
        {**rsa, "kid": "broken", "n": "!!"},
        {**rsa, "kid": None},
        "not a key",
    ]
    keys = oidc.parse_keys({"keys": entries})
    assert list(keys) == [issuer.current.kid]
    assert keys[issuer.current.kid].algorithms == {"RS256"}
    plain = {k: v for k, v in rsa.items() if k != "alg"}
    assert oidc.parse_keys({"keys": [plain]})[rsa["kid"]].algorithms == oidc.BY_TYPE["RSA"]
    ec = Issuer(algorithm="ES256").current.jwk()
    assert oidc.parse_keys({"keys": [ec]})[ec["kid"]].algorithms == {"ES256"}


@pytest.mark.parametrize(
    "url",
    [
        "https://idp.example",
        "http://127.0.0.1:8080",
        "http://127.9.9.9",
        "http://[::1]:9000/x",
        "http://localhost/realms/a",
    ],
)
def test_https_or_loopback_urls_are_accepted(url: str) -> None:
    oidc.secure_url(url, "--issuer")


@pytest.mark.parametrize(
    "url",
    [
        "http://idp.example",
        "http://10.0.0.1",
        "http://localhost.evil.example",
        "https://",
        "file:///etc/passwd",
        "idp.example",
    ],
)
def test_other_urls_are_refused(url: str) -> None:
    with pytest.raises(UsageError, match="could be replaced on the way"):
        oidc.secure_url(url, "--issuer")


@pytest.mark.parametrize(
    ("value", "groups"),
    [
        (["dev", "ops"], ("dev", "ops")),
        ("dev  ops", ("dev", "ops")),
        (["dev", 7], ()),
        ({"dev": True}, ()),
        (7, ()),
        (None, ()),
    ],
)
def test_groups_from_a_list_or_a_spaced_string_only(value: object, groups: tuple[str, ...]) -> None:
    assert oidc.groups({"groups": value}, "groups") == groups


def test_an_es256_token_makes_a_principal_with_groups_from_the_named_claim() -> None:
    with Issuer(algorithm="ES256") as issuer:
        checker = verifier(issuer, groups_claim="roles")
        token = issuer.token(aud=[AUDIENCE, "other"], sub="bob", roles="admin dev", groups=["x"])
        found = checker.check(token)
    assert found == Principal("bob", issuer.issuer, ("admin", "dev"))


@pytest.mark.parametrize(
    ("audience", "url"),
    [
        (AUDIENCE, "https://gateway.example/.well-known/oauth-protected-resource/mcp"),
        (
            "https://gw.example:8443/",
            "https://gw.example:8443/.well-known/oauth-protected-resource",
        ),
        ("api://plugman", None),
    ],
)
def test_the_metadata_url_follows_rfc_9728(audience: str, url: str | None) -> None:
    assert gate.metadata_url(audience) == url


async def _through(app: Any, headers: list[tuple[bytes, bytes]]) -> tuple[int, dict[str, Any]]:
    seen: dict[str, Any] = {}

    async def inner(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.update(scope)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": headers,
        "client": ("127.0.0.1", 5),
        "scheme": "http",
    }
    await app(inner)(scope, receive, send)
    return sent[0]["status"], seen


def test_each_gate_puts_its_principal_in_the_scope() -> None:
    with Issuer() as issuer:
        checker = verifier(issuer)
        token = issuer.token(aud=AUDIENCE, sub="carol", groups=["dev"])
        header = [(b"authorization", f"Bearer {token}".encode())]
        status, scope = anyio.run(_through, lambda app: gate.OidcGate(app, checker), header)
    assert status == 200
    assert in_scope(scope) == Principal("carol", issuer.issuer, ("dev",))
    secret = "s" * 40
    header = [(b"authorization", f"Bearer {secret}".encode())]
    status, scope = anyio.run(_through, lambda app: BearerGate(app, secret), header)
    assert status == 200 and scope[SCOPE_KEY] == TOKEN_HOLDER
    assert Principal("token", "plugman") == TOKEN_HOLDER


def test_keys_an_hour_old_are_fetched_again(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    with Issuer() as issuer:
        keys = oidc.parse_keys({"keys": [issuer.current.jwk()]})
        checker = oidc.Verifier(
            oidc.Settings(issuer.issuer, AUDIENCE), f"{issuer.url}/jwks", keys, lambda: now[0]
        )
        old = issuer.token(aud=AUDIENCE)
        assert anyio.run(checker.verify, old).subject == "alice"
        issuer.rotate()  # the old key withdrawn
        assert anyio.run(checker.verify, old).subject == "alice"  # held for an hour
        assert issuer.jwks_fetches == 0
        now[0] += oidc.MAX_AGE + 1
        with pytest.raises(oidc.RefusedError):
            anyio.run(checker.verify, old)
        assert issuer.jwks_fetches == 1
        assert anyio.run(checker.verify, issuer.token(aud=AUDIENCE)).subject == "alice"
        assert issuer.jwks_fetches == 1
        new = issuer.token(aud=AUDIENCE)
    now[0] += oidc.MAX_AGE + 1  # the issuer is gone: the keys held still check tokens
    assert anyio.run(checker.verify, new).subject == "alice"
    now[0] += oidc.COOLDOWN + 1  # ... and the next fetch waits RETRY_AFTER, not COOLDOWN
    assert anyio.run(checker.verify, new).subject == "alice"
    assert checker.tried == now[0] - oidc.COOLDOWN - 1
    now[0] += oidc.RETRY_AFTER
    assert anyio.run(checker.verify, new).subject == "alice"
    assert checker.tried == now[0]


def test_refusals_are_logged_in_bursts(caplog: pytest.LogCaptureFixture) -> None:
    with Issuer() as issuer:
        checker = verifier(issuer)
        guard = gate.OidcGate(lambda *_: None, checker)
        caplog.set_level(logging.WARNING, "plugman.gateway")
        scope = {"method": "POST", "path": "/mcp\nforged line", "client": ("10.0.0.9", 1)}
        for _ in range(gate.LOG_BURST + 30):
            guard._log(scope, "the token has expired")
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == gate.LOG_BURST
    assert lines[0] == "refused POST '/mcp\\nforged line' from 10.0.0.9: the token has expired"
    guard.window -= gate.LOG_WINDOW + 1
    guard._log(scope, "the token has expired")
    assert caplog.records[-2].getMessage() == "30 more requests refused"


def test_a_token_without_kid_is_checked_with_the_only_key_and_refused_among_several() -> None:
    import jwt

    with Issuer() as issuer:
        token = issuer.token(aud=AUDIENCE)
        header = jwt.get_unverified_header(token)
        bare = jwt.encode(
            jwt.decode(token, options={"verify_signature": False}),
            issuer.current.private,
            algorithm="RS256",
            headers={k: v for k, v in header.items() if k not in ("kid", "alg")},
        )
        assert "kid" not in jwt.get_unverified_header(bare)
        assert verifier(issuer).check(bare).subject == "alice"
        issuer.rotate(keep=True)
        with pytest.raises(oidc.RefusedError, match="publishes several"):
            verifier(issuer).check(bare)

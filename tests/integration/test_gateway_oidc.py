"""`plugman mcp serve --transport http --auth oidc --issuer URL --audience URL`, for real: a
subprocess gateway (the sample notes server as its backend) in front of a real issuer of JWT
access tokens on 127.0.0.1 (tests.support.oidc_issuer), reached by the mcp SDK's client and
plain HTTP.

- On an address that is not loopback, a token the issuer signed for the audience lists and
  calls; a token for another audience, an expired one and none at all get 401, with
  `WWW-Authenticate: Bearer ... resource_metadata=...`.
- The issuer rotates its signing key: a token signed by the new key is accepted at once,
  without a restart (one JWKS fetch); one signed by the withdrawn key is refused.
- The RFC 9728 metadata is served without a token at both well-known paths.
- A third-party provider (oidc-provider-mock, over its own discovery and JWKS, whose tokens
  carry no `kid`): its RS256 ID token, whose `aud` is the client id, is accepted when that is the
  audience; its access token, opaque, is refused.
- The verified token's groups (from `--groups-claim`) are what gatewayAccess rules match: a
  group allowed one server lists only its tools and is refused the other's.
- `--issuer`/`--audience` without `--auth oidc`, and `--auth oidc` without them: exit 2; a
  provider that cannot be discovered, or names another issuer: exit 1; never a traceback.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.integration.http_gateway import refused_start
from tests.integration.test_gateway import configure, text
from tests.integration.test_gateway_auth import (
    TOOLS,
    environment,
    lists_and_adds,
    outside_address,
    post,
    serving,
)
from tests.support.oidc_issuer import Issuer

AUDIENCE = "https://gateway.example/mcp"
METADATA = "https://gateway.example/.well-known/oauth-protected-resource/mcp"


def oidc(issuer: Issuer, audience: str = AUDIENCE) -> tuple[str, ...]:
    return ("--auth", "oidc", "--issuer", issuer.issuer, "--audience", audience)


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def test_tokens_from_the_issuer_list_and_call_and_others_get_401(
    tmp_path: Path, isolated_home: Path, secret_scan: list[str]
) -> None:
    configure(isolated_home, None, {})
    listen, reach = outside_address()
    with (
        Issuer() as issuer,
        serving(tmp_path, isolated_home, "--host", listen, *oidc(issuer)) as (url, said),
    ):
        url = url.replace(listen, reach, 1)
        good = issuer.token(aud=AUDIENCE, groups=["dev"])
        assert post(url, bearer(good)).status_code == 200

        lists_and_adds(url, good, "auto")
        wrong = issuer.token(aud="https://other.example/mcp")
        expired = issuer.token(aud=AUDIENCE, exp=1_000_000_000, iat=999_999_000)
        for token in (wrong, expired):
            refused = post(url, bearer(token))
            assert refused.status_code == 401
            challenge = refused.headers["www-authenticate"]
            assert challenge == f'Bearer error="invalid_token", resource_metadata="{METADATA}"'
        missing = post(url)
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"] == f'Bearer resource_metadata="{METADATA}"'

        old = issuer.current
        fetches = issuer.jwks_fetches
        issuer.rotate()
        assert post(url, bearer(issuer.token(aud=AUDIENCE))).status_code == 200
        assert issuer.jwks_fetches == fetches + 1
        lists_and_adds(url, issuer.token(aud=AUDIENCE), "auto")
        assert post(url, bearer(issuer.token(key=old, aud=AUDIENCE))).status_code == 401
    log = (isolated_home / "state" / "logs" / "gateway.log").read_text()
    assert f"clients must send an access token from {issuer.url} for {AUDIENCE}" in log
    assert "the token's aud does not include this gateway's audience" in log
    assert "the token has expired" in log
    secret_scan.extend(said)
    for token in (good, wrong, expired):
        assert not [line for line in said if token in line]
        assert token not in log


def test_the_resource_metadata_is_served_without_a_token(
    tmp_path: Path, isolated_home: Path
) -> None:
    import httpx2

    configure(isolated_home, None, {})
    with Issuer() as issuer, serving(tmp_path, isolated_home, *oidc(issuer)) as (url, _):
        base = url.removesuffix("/mcp")
        for path in ("/.well-known/oauth-protected-resource", METADATA.split(".example")[1]):
            got = httpx2.get(base + path, timeout=30)
            assert got.status_code == 200, path
            assert got.json() == {
                "resource": AUDIENCE,
                "authorization_servers": [issuer.url],
                "bearer_methods_supported": ["header"],
            }
        assert httpx2.post(base + "/.well-known/oauth-protected-resource").status_code == 405


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (("--auth", "token", "--issuer", "https://idp.example"), "apply only to --auth oidc"),
        (("--audience", AUDIENCE), "apply only to --auth oidc"),
        (("--groups-claim", "roles"), "apply only to --auth oidc"),
        (("--auth", "oidc", "--audience", AUDIENCE), "--auth oidc needs --issuer and"),
        (("--auth", "oidc", "--issuer", "https://idp.example"), "--auth oidc needs --issuer and"),
    ],
)
def test_oidc_options_only_together(
    tmp_path: Path, isolated_home: Path, options: tuple[str, ...], said: str
) -> None:
    done = refused_start(tmp_path, environment(isolated_home), *options)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr
    assert not (isolated_home / "state").exists(), "it started something (logs, state)"


def test_a_provider_that_cannot_be_discovered_stops_the_start(
    tmp_path: Path, isolated_home: Path
) -> None:
    configure(isolated_home, None, {})
    with Issuer(issuer="placeholder") as elsewhere:
        gone = elsewhere.url
    with Issuer(discovery=False) as fallback, serving(tmp_path, isolated_home, *oidc(fallback)):
        assert fallback.discovery_fetches == 1  # RFC 8414's document, after OIDC's 404

    class Keyless(Issuer):
        def document(self) -> dict[str, object]:
            return {**super().document(), "jwks_uri": f"{gone}/jwks"}

    with Issuer(issuer="{url}/") as named, Keyless() as keyless:
        cases = [
            (gone, f"cannot discover the OIDC provider {gone}"),
            ("http://127.0.0.1:99999", "cannot discover the OIDC provider http://127.0.0.1:99999"),
            (named.url, f"names the issuer '{named.url}/', not '{named.url}'"),
            (keyless.url, f"cannot fetch the signing keys of {keyless.url}: {gone}/jwks"),
        ]
        for url, said in cases:
            options = ("--auth", "oidc", "--issuer", url, "--audience", "a")
            done = refused_start(tmp_path, environment(isolated_home), *options)
            assert done.returncode == 1, done.stderr
            assert said in done.stderr, done.stderr
            assert "hint: " in done.stderr and "Traceback" not in done.stderr
            assert "listening" not in done.stderr


def test_a_third_party_provider_is_discovered_and_its_jwts_checked(
    tmp_path: Path, isolated_home: Path
) -> None:
    import httpx2
    from oidc_provider_mock import run_server_in_thread

    configure(isolated_home, None, {})
    client = {"client_id": "plugman-gateway", "redirect_uri": "http://127.0.0.1/cb"}
    with run_server_in_thread() as provider:
        issuer = f"http://localhost:{provider.server_port}"
        found = httpx2.get(f"{issuer}/.well-known/openid-configuration", timeout=30).json()
        query = {**client, "response_type": "code", "scope": "openid", "state": "s"}
        code = httpx2.post(found["authorization_endpoint"], params=query, data={"sub": "dana"})
        given = code.headers["location"].split("code=")[1].split("&")[0]
        form = {**client, "grant_type": "authorization_code", "code": given, "client_secret": "x"}
        tokens = httpx2.post(found["token_endpoint"], data=form, timeout=30).json()
        options = ("--auth", "oidc", "--issuer", issuer, "--audience", client["client_id"])
        with serving(tmp_path, isolated_home, *options) as (url, _):
            assert post(url, bearer(tokens["id_token"])).status_code == 200
            assert post(url, bearer(tokens["access_token"])).status_code == 401
    log = (isolated_home / "state" / "logs" / "gateway.log").read_text()
    assert "the token is not a JWT" in log


ACCESS = """
gatewayAccess = [
  { groups = ["admin"], servers = ["*"] },
  { groups = ["eng"], servers = ["notes"] },
]
"""


def test_the_tokens_groups_decide_what_gateway_access_grants(
    tmp_path: Path, isolated_home: Path
) -> None:
    from tests.integration.gateway_caller import VAULT, names, write

    configure(isolated_home, None, {}, {"vault": write(tmp_path / "vault.py", VAULT)})
    write(isolated_home / "managed" / "managed-settings.toml", ACCESS)
    with (
        Issuer() as issuer,
        serving(tmp_path, isolated_home, *oidc(issuer), "--groups-claim", "roles") as (url, _),
    ):

        async def session(roles: object) -> tuple[set[str], str, str]:
            import httpx2
            from mcp import Client
            from mcp.client.streamable_http import streamable_http_client

            token = issuer.token(aud=AUDIENCE, roles=roles, groups=["admin"])
            with anyio.fail_after(120):
                web = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
                transport = streamable_http_client(url, http_client=web)
                async with web, Client(transport, mode="auto") as client:
                    end = anyio.current_time() + 60  # the admin waits for both backends
                    found = await names(client)
                    while roles == "admin ops" and not {"vault__echo", "notes__echo"} <= found:
                        assert anyio.current_time() < end, found
                        await anyio.sleep(0.2)
                        found = await names(client)
                    hidden = await client.call_tool("vault__echo", {"text": "hi"})
                    shown = await client.call_tool("notes__echo", {"text": "hi"})
                    return found, text(hidden), text(shown)

        admin, _, _ = anyio.run(session, "admin ops")
        assert {"vault__echo", "notes__echo"} <= admin
        eng, hidden, shown = anyio.run(session, ["eng"])
        assert eng == TOOLS
        assert (hidden, shown) == ("Unknown tool: vault__echo", "hi")
        nobody, _, _ = anyio.run(session, {"eng": True})  # not a list or a string: no groups
        assert nobody == set()

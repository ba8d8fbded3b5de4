"""Who calls the gateway, from the organization's OIDC provider: `plugman mcp serve --transport
http --auth oidc --issuer URL --audience URL [--groups-claim NAME]`.

Clients send `Authorization: Bearer <JWT access token>` issued by `--issuer` for `--audience`;
the gateway checks each token itself, with no call to the provider per request
(plugman.runtime.gateway.gate serves the ASGI side: the refusals, the RFC 9728 metadata).

- URLs: the issuer, and the `jwks_uri` its discovery document names, must be https, unless
  their host is loopback (127.0.0.0/8, ::1, `localhost`): keys fetched over plain HTTP could be
  replaced on the way, and whoever replaces them mints tokens. RefusedError at start (exit 2).
- Discovery, once at start: `<issuer>/.well-known/openid-configuration`, else RFC 8414's
  `/.well-known/oauth-authorization-server` (with the issuer's path after it); the document's
  `issuer` must equal `--issuer` exactly (RFC 8414 §3.3: no trailing `/` added or removed), and
  its `jwks_uri` gives the keys. If discovery or the first key fetch fails, the gateway does not
  start (exit 1, saying which URL and why): a replica that cannot check tokens serves nobody,
  and the orchestrator's restart (or the operator) retries once the provider answers.
- Keys (JWKS): fetched at start, kept in memory, and fetched again when a token names a `kid`
  not among them (the provider rotated its signing key: the new key is accepted without a
  restart) or when they are an hour old; at most one such fetch every `COOLDOWN` seconds, and one
  at a time, so tokens naming random `kid`s cannot make every request fetch. A failed fetch keeps
  the keys held (and keys due for a fetch are tried again only `RETRY_AFTER` seconds later:
  while the provider is down, tokens keep being checked with the keys held). Only signing keys
  of type RSA, EC and OKP are kept (never `oct`, never one with a private part).
- Algorithms: asymmetric only (RS*, PS*, ES*, EdDSA), and only those the key itself allows (its
  `alg`, else its `kty` and curve): `none`, HS* and a header naming an algorithm of another key
  type are refused, so a public key can never be used as an HMAC secret. `jku`, `x5u` and `jwk`
  headers are ignored: keys come only from the discovered `jwks_uri`. A token without a `kid`
  is checked with the issuer's only key, and refused when it publishes several (OIDC Core 10.1).
- Claims: `iss` equal to `--issuer` exactly (RFC 9207); `aud` (a string or a list) containing
  `--audience` exactly as given, since RFC 7519 compares audience strings as strings (so
  `https://gw.example.com/mcp` and `https://gw.example.com/mcp/` are different audiences: give
  the one the provider puts in its tokens); `exp` and `sub` required; `nbf` and `iat` honoured;
  `LEEWAY` seconds of clock skew on each time. Groups come from the claim `--groups-claim`
  (default `groups`): a list of strings, or one space-separated string; anything else gives none.
- A token that passes becomes a `Principal(sub, iss, groups)` (plugman.runtime.gateway.principal).
  A refused one gets 401; the reason goes to the gateway log, the token nowhere.

Cost per request: one signature check with a cached key (bench/oidc_verify.py).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from plugman.core.errors import PlugmanError, UsageError
from plugman.runtime.gateway.principal import Principal

log = logging.getLogger("plugman.gateway")

LEEWAY = 30  # seconds of clock skew allowed on exp, nbf and iat
COOLDOWN = 10.0  # seconds between two key fetches caused by tokens
MAX_AGE = 3600.0  # seconds after which the keys are fetched again
RETRY_AFTER = 60.0  # seconds before keys due for a fetch that failed are fetched again
FETCH_TIMEOUT = 10.0  # seconds, at start
REFETCH_TIMEOUT = 5.0  # seconds, while serving (the request that caused it waits)
MAX_TOKEN = 16384  # characters: a larger bearer value is not read
MAX_DOCUMENT = 1 << 20  # bytes of a discovery document or JWKS
BY_TYPE = {
    "RSA": frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}),
    "EC": frozenset({"ES256", "ES384", "ES512"}),
    "OKP": frozenset({"EdDSA"}),
}
BY_CURVE = {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}
ASYMMETRIC = frozenset().union(*BY_TYPE.values())
DISCOVERY = ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server")


@dataclass(frozen=True)
class Settings:
    issuer: str
    audience: str
    groups_claim: str = "groups"


class RefusedError(Exception):
    """A token the gateway does not accept; `reason` is for the log (never holds the token)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _UnknownKeyError(RefusedError):
    pass


@dataclass(frozen=True)
class Key:
    kid: str
    algorithms: frozenset[str]
    key: Any  # the public key (cryptography), as PyJWT's PyJWK builds it


def settings(issuer: str | None, audience: str | None, groups_claim: str = "groups") -> Settings:
    """The checked `--issuer`, `--audience` and `--groups-claim` of `--auth oidc`."""
    if not issuer or not audience:
        raise UsageError(
            "--auth oidc needs --issuer and --audience",
            hint="give the provider's issuer URL (as its tokens' `iss` says) and this "
            "gateway's audience (as its tokens' `aud` says, usually https://HOST/mcp)",
        )
    secure_url(issuer, "--issuer")
    if not groups_claim:
        raise UsageError("--groups-claim is empty", hint="name a claim, e.g. groups or roles")
    return Settings(issuer, audience, groups_claim)


def secure_url(url: str, where: str) -> None:
    """Refuse (UsageError) a URL keys or tokens could be replaced through: not https, unless its
    host is loopback."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and _loopback(parts.hostname or ""):
        return
    raise UsageError(
        f"refusing {url!r}: signing keys fetched from it could be replaced on the way, and "
        "whoever replaces them could sign tokens",
        where=where,
        hint="use the provider's https:// URL (plain http only on 127.0.0.1, ::1 or localhost)",
    )


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def start(given: Settings, timeout: float = FETCH_TIMEOUT) -> Verifier:
    """Discover the issuer's keys and fetch them, before the gateway listens (PlugmanError,
    exit 1, when the provider cannot be reached or answers wrongly)."""
    import httpx2  # lazy: only --auth oidc needs it

    with httpx2.Client(timeout=timeout, follow_redirects=False) as client:

        def fetch(url: str) -> object:
            try:
                response = client.get(url, headers={"accept": "application/json"})
            except (httpx2.HTTPError, httpx2.InvalidURL, OSError, ValueError) as exc:
                raise _UnusableError(f"{url}: {str(exc) or type(exc).__name__}") from None
            return _document(response, url)

        jwks_uri = _discover(given.issuer, fetch)
        try:
            keys = parse_keys(fetch(jwks_uri))
        except _UnusableError as exc:
            raise PlugmanError(
                f"cannot fetch the signing keys of {given.issuer}: {exc}",
                where="--issuer",
                hint="check that the provider is up and reachable from this host",
            ) from None
    return Verifier(given, jwks_uri, keys)


class _UnusableError(Exception):
    """A document that could not be fetched or read (the message says why)."""


def _document(response: Any, url: str) -> object:
    if response.status_code != 200:
        raise _UnusableError(f"{url} answered {response.status_code}")
    if len(response.content) > MAX_DOCUMENT:
        raise _UnusableError(f"{url} answered more than {MAX_DOCUMENT} bytes")
    try:
        return json.loads(response.content)
    except ValueError:
        raise _UnusableError(f"{url} did not answer JSON") from None


def _discover(issuer: str, fetch: Callable[[str], object]) -> str:
    """The issuer's `jwks_uri`, from its OIDC discovery document or else its RFC 8414 one."""
    problems = []
    for url in _discovery_urls(issuer):
        try:
            document = fetch(url)
        except _UnusableError as exc:
            problems.append(str(exc))
            continue
        found = document if isinstance(document, Mapping) else {}
        if found.get("issuer") != issuer:
            raise PlugmanError(
                f"{url} names the issuer {found.get('issuer')!r}, not {issuer!r}",
                where="--issuer",
                hint="give --issuer exactly as the provider names itself (RFC 8414 §3.3)",
            )
        jwks_uri = found.get("jwks_uri")
        if not isinstance(jwks_uri, str):
            raise PlugmanError(f"{url} names no jwks_uri", where="--issuer")
        secure_url(jwks_uri, f"{url}: jwks_uri")
        return jwks_uri
    raise PlugmanError(
        f"cannot discover the OIDC provider {issuer}: {'; '.join(problems)}",
        where="--issuer",
        hint="check the issuer URL and that the provider is up and reachable from this host",
    )


def _discovery_urls(issuer: str) -> tuple[str, str]:
    parts = urlsplit(issuer)
    base = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    return f"{base}{path}{DISCOVERY[0]}", f"{base}{DISCOVERY[1]}{path}"


def parse_keys(document: object) -> dict[str, Key]:
    """The usable signing keys of a JWKS document, by `kid` (others are left out)."""
    entries = document.get("keys") if isinstance(document, Mapping) else None
    if not isinstance(entries, list):
        raise _UnusableError("the JWKS has no `keys` list")
    keys = {}
    for entry in entries:
        key = _key(entry) if isinstance(entry, Mapping) else None
        if key is not None:
            keys[key.kid] = key
    return keys


def _key(jwk: Mapping[str, Any]) -> Key | None:
    from jwt import PyJWK, PyJWTError  # lazy: only --auth oidc needs it

    kid, kty = jwk.get("kid"), jwk.get("kty")
    if not isinstance(kid, str) or kty not in BY_TYPE or "d" in jwk:
        return None
    if jwk.get("use", "sig") != "sig":
        return None
    allowed = BY_TYPE[kty]
    if kty == "EC":
        curve = BY_CURVE.get(jwk.get("crv", ""))
        allowed = frozenset({curve}) if curve else frozenset()
    named = jwk.get("alg")
    if named is not None:
        allowed = allowed & {named}
    if not allowed:
        return None
    try:
        built = PyJWK(dict(jwk), algorithm=sorted(allowed)[0])
    except (PyJWTError, ValueError, TypeError):
        return None
    return Key(kid, allowed, built.key)


class Verifier:
    """Checks access tokens against the issuer's keys, held in memory (see the module's rules)."""

    def __init__(
        self,
        given: Settings,
        jwks_uri: str,
        keys: dict[str, Key],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = given
        self.jwks_uri = jwks_uri
        self.keys = keys
        self.clock = clock
        self.fetched = clock()
        self.tried = float("-inf")  # the last fetch a token caused
        self._fetching: Any = None  # an anyio.Event while a fetch runs

    async def verify(self, token: str) -> Principal:
        """The caller `token` proves, or RefusedError."""
        if self.clock() - self.fetched > MAX_AGE:
            await self._refresh()
        try:
            return self.check(token)
        except _UnknownKeyError:
            await self._refresh()
        return self.check(token)

    def check(self, token: str) -> Principal:
        """The caller `token` proves with the keys held now, or RefusedError."""
        import jwt  # lazy: only --auth oidc needs it

        if len(token) > MAX_TOKEN:
            raise RefusedError("the token is too long")
        header = _header(token)
        algorithm, kid = header.get("alg"), header.get("kid")
        if not isinstance(algorithm, str) or algorithm not in ASYMMETRIC:
            raise RefusedError("the token's algorithm is not an asymmetric one")
        key = self._key(kid)
        if algorithm not in key.algorithms:
            raise RefusedError("the token's algorithm is not its key's")
        try:
            claims = jwt.decode(
                token,
                key.key,
                algorithms=[algorithm],
                audience=self.settings.audience,
                issuer=self.settings.issuer,
                leeway=LEEWAY,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.PyJWTError as exc:
            raise RefusedError(_reason(exc)) from None
        return self._principal(claims)

    def _key(self, kid: object) -> Key:
        """The key a token's `kid` names; without one, the issuer's only key (OIDC Core 10.1:
        a `kid` is required only when the JWKS holds several)."""
        if kid is None and len(self.keys) == 1:
            return next(iter(self.keys.values()))
        if not isinstance(kid, str):
            raise RefusedError("the token names no key (kid), and the issuer publishes several")
        key = self.keys.get(kid)
        if key is None:
            raise _UnknownKeyError("the token names a key the issuer does not publish")
        return key

    def _principal(self, claims: Mapping[str, Any]) -> Principal:
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            raise RefusedError("the token's sub is not a non-empty string")
        return Principal(subject, self.settings.issuer, groups(claims, self.settings.groups_claim))

    async def _refresh(self) -> None:
        """Fetch the keys again, unless a fetch ran less than COOLDOWN ago (one at a time: a
        request arriving while one runs waits for it)."""
        import anyio  # lazy: after the early answers

        if self._fetching is not None:
            await self._fetching.wait()
            return
        now = self.clock()
        if now - self.tried < COOLDOWN:
            return
        self.tried = now
        self._fetching = anyio.Event()
        try:
            self.keys = await self._fetch_keys()
            self.fetched = self.clock()
        except (_UnusableError, OSError, ValueError) as exc:
            log.warning("cannot fetch the signing keys from %s: %s", self.jwks_uri, exc)
            self.fetched = max(self.fetched, self.clock() - MAX_AGE + RETRY_AFTER)
        finally:
            self._fetching.set()
            self._fetching = None

    async def _fetch_keys(self) -> dict[str, Key]:
        import httpx2  # lazy: only --auth oidc needs it

        try:
            async with httpx2.AsyncClient(timeout=REFETCH_TIMEOUT, follow_redirects=False) as web:
                response = await web.get(self.jwks_uri, headers={"accept": "application/json"})
        except (httpx2.HTTPError, httpx2.InvalidURL, OSError, ValueError) as exc:
            raise _UnusableError(str(exc) or type(exc).__name__) from None
        return parse_keys(_document(response, self.jwks_uri))


def _header(token: str) -> Mapping[str, Any]:
    """A compact JWS's header, read only to pick the key and the algorithm: PyJWT reads it again,
    strictly, when it checks the signature that covers it (its own unverified read decodes the
    whole token, character by character, a second time)."""
    parts = token.split(".")
    try:
        if len(parts) != 3:
            raise ValueError
        header = json.loads(base64.urlsafe_b64decode(parts[0] + "=" * (-len(parts[0]) % 4)))
    except (ValueError, binascii.Error):
        raise RefusedError("the token is not a JWT") from None
    if not isinstance(header, dict):
        raise RefusedError("the token is not a JWT")
    return header


def groups(claims: Mapping[str, Any], name: str) -> tuple[str, ...]:
    """The groups a verified token's claim `name` gives: a list of strings, or a string of
    space-separated names; anything else gives none."""
    value = claims.get(name)
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return ()


_REASONS = {
    "ExpiredSignatureError": "the token has expired",
    "ImmatureSignatureError": "the token is not valid yet (nbf or iat in the future)",
    "InvalidAudienceError": "the token's aud does not include this gateway's audience",
    "InvalidIssuerError": "the token's iss is not the issuer",
    "InvalidSignatureError": "the token's signature does not verify",
    "DecodeError": "the token cannot be decoded",
}


def _reason(exc: Exception) -> str:
    """Why PyJWT refused a token, in words that never quote it."""
    claim = getattr(exc, "claim", None)
    if isinstance(claim, str):
        return f"the token has no {claim} claim"
    return _REASONS.get(type(exc).__name__, f"the token is invalid ({type(exc).__name__})")

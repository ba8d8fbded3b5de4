"""Backend OAuth logins shared by gateway replicas in Redis, encrypted (`plugman mcp serve
--transport http --redis URL --shared-oauth`).

The key: `PLUGMAN_GATEWAY_KEY`, 32 random bytes in base64 (`openssl rand -base64 32`; in
Kubernetes a Secret given to every replica as that variable). To rotate, give the new key first
and the old one after a comma: records are written under the first, read under any of them.
Without a usable key `--shared-oauth` is refused before the gateway starts: a login is never
written to Redis in plaintext.

A record: `pm1.<key id>.<base64url(nonce, AES-256-GCM ciphertext and tag)>` under the Redis key
`plugman:oauth:<server url>`, that Redis key (with the version and key id) its associated data.
So a Redis writer cannot move server A's login into server B's slot, or an old one between
keys, nor change a byte of it: it no longer decrypts, and is refused like a record under a key
this replica does not have (its key id is named, for a rotation in progress) or a record that
is not one (truncated, garbage). A refused record is never used: the replica's own login (from
`plugman mcp login` on it) is used and sealed over it if it has one; else the backend answers
needs-auth, as without a login, and the gateway log says why.

Refresh races between replicas: refresh tokens rotate, so of two replicas refreshing with the
same one the second is refused. A replica whose access token is due takes a Redis lock
(`plugman:oauth-lock:<server url>`, SET NX with a `LOCK_TTL` expiry, released only by its
holder), then reloads the login: when another replica refreshed meanwhile, it uses those tokens
(plugman.runtime.oauth.provider's `_refresh_turn`). Without Redis it takes the local file lock.

Where a login comes from: `plugman mcp login NAME` on one replica (or with its PLUGMAN_HOME)
fills that replica's own secret store; the first time that replica reads the login and Redis
has none, it seals it into Redis, and from then on every replica reads it there, and every
refresh is saved there. Redis down: a login is read from, and saved to, the replica's own
secret store, with one log line; Redis is tried again after `RETRY` seconds.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
import os
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from plugman.config.redact import url as redacted
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.secrets import Store

log = logging.getLogger("plugman.gateway")

KEY_VARIABLE = "PLUGMAN_GATEWAY_KEY"
VERSION = "pm1"
PREFIX = "plugman:"  # before the secret store's key (`oauth:<server url>`)
NONCE = 12
TAG = 16
TIMEOUT = 0.5  # seconds for a connection or a reply
RETRY = 5.0  # seconds after a failure during which Redis is not tried again
LOCK_TTL = 30_000  # ms: a refresh lock left by a killed replica expires
LOCK_WAIT = 15.0  # seconds a replica waits for another's refresh
HINT = f"set {KEY_VARIABLE} to 32 random bytes in base64 (openssl rand -base64 32)"


def key_id(key: bytes) -> str:
    return hashlib.sha256(b"plugman-gateway-key\0" + key).hexdigest()[:8]


@dataclass(frozen=True)
class Keyring:
    """The keys logins are sealed under: the first writes, every one reads."""

    keys: tuple[tuple[str, bytes], ...]  # (key id, key)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Keyring:
        given = [part.strip() for part in env.get(KEY_VARIABLE, "").split(",") if part.strip()]
        if not given:
            raise UsageError(f"--shared-oauth needs a key in {KEY_VARIABLE}", hint=HINT)
        keys = []
        for number, text in enumerate(given, 1):
            try:
                key = base64.b64decode(text, validate=True)
            except (binascii.Error, ValueError):
                key = b""
            if len(key) != 32:
                raise UsageError(
                    f"key {number} of {KEY_VARIABLE} is not 32 bytes in base64", hint=HINT
                )
            keys.append((key_id(key), key))
        return cls(tuple(keys))

    def seal(self, where: str, text: str) -> str:
        # lazy: cryptography's AEAD (~20 ms), only --shared-oauth needs it
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        kid, key = self.keys[0]
        nonce = os.urandom(NONCE)
        sealed = AESGCM(key).encrypt(nonce, text.encode(), _associated(kid, where))
        return f"{VERSION}.{kid}.{base64.urlsafe_b64encode(nonce + sealed).decode()}"

    def open(self, where: str, record: bytes | str) -> str:
        """The login sealed in `record` at Redis key `where`; PlugmanError if it is not one
        this replica can trust."""
        # lazy: cryptography's AEAD (~20 ms), only --shared-oauth needs it
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        text = record.decode("latin-1") if isinstance(record, bytes) else record
        parts = text.split(".")
        if len(parts) != 3 or parts[0] != VERSION:
            raise _refused(where, "it is not a sealed login")
        _, kid, body = parts
        key = dict(self.keys).get(kid)
        if key is None:
            ours = ", ".join(k for k, _ in self.keys)
            raise _refused(where, f"it is sealed under key id {kid[:8]!r}; this replica has {ours}")
        try:
            raw = base64.urlsafe_b64decode(body.encode("ascii"))
        except (binascii.Error, ValueError, UnicodeEncodeError):
            raise _refused(where, "it is not a sealed login") from None
        if len(raw) < NONCE + TAG:
            raise _refused(where, "it is truncated")
        try:
            plain = AESGCM(key).decrypt(raw[:NONCE], raw[NONCE:], _associated(kid, where))
        except InvalidTag:
            raise _refused(
                where, "it does not decrypt here (altered, or moved from another key)"
            ) from None
        return plain.decode()


def _associated(kid: str, where: str) -> bytes:
    return f"{VERSION}\0{kid}\0{where}".encode()


def _refused(where: str, why: str) -> PlugmanError:
    server = where.removeprefix(PREFIX + "oauth:")
    again = "log in again (plugman mcp login NAME)"
    return PlugmanError(
        f"the shared OAuth login for {redacted(server)} is refused: {why}",
        where="redis",
        hint=f"{again}, or give this replica the key it was sealed under ({KEY_VARIABLE})",
    )


class SharedLogins:
    """A secret store (plugman.core.secrets.Store) of OAuth logins in Redis, sealed under
    `keyring`; `local` (this replica's own store) while Redis is down, or has none."""

    kind: Literal["file"] = "file"

    def __init__(self, url: str, keyring: Keyring, local: Store | None) -> None:
        # lazy: redis (~60 ms), only --shared-oauth needs it
        import redis

        self.client: Any = redis.Redis.from_url(
            url, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT
        )
        self.errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self.refused = redis.ResponseError
        self.keyring, self.local = keyring, local
        self.where = f"redis {redacted(url)}"
        self.down = False
        self.resume_at = 0.0

    def get(self, key: str) -> str | None:
        """The login at `key`: Redis's, else this replica's own (sealed into Redis then, so
        the other replicas share a login made on this one)."""
        found = self._do(lambda: self.client.get(PREFIX + key))
        if found is not _DOWN and found is not None:
            try:
                return self.keyring.open(PREFIX + key, found)
            except PlugmanError as exc:
                own = self._own(key)
                if own is None:
                    raise
                log.warning("%s; this replica's own login is used, sealed over it", exc.message)
                self._seal(key, own, replace=True)
                return own
        own = self._own(key)
        if found is None and own is not None:
            self._seal(key, own, replace=False)
        return own

    def _own(self, key: str) -> str | None:
        return None if self.local is None else self.local.get(key)

    def _seal(self, key: str, value: str, replace: bool) -> None:
        sealed = self.keyring.seal(PREFIX + key, value)
        self._do(lambda: self.client.set(PREFIX + key, sealed, nx=not replace))

    def set(self, key: str, value: str) -> None:
        sealed = self.keyring.seal(PREFIX + key, value)
        if self._do(lambda: self.client.set(PREFIX + key, sealed)) is _DOWN and self.local:
            self.local.set(key, value)

    def delete(self, key: str) -> bool:
        removed = self._do(lambda: self.client.delete(PREFIX + key))
        here = self.local.delete(key) if self.local is not None else False
        return bool(removed is not _DOWN and removed) or here

    def lock(self, key: str, fallback: Any) -> RefreshLock:
        """The lock a refresh of the login at `key` takes (`fallback` while Redis is down)."""
        return RefreshLock(self, PREFIX + "oauth-lock:" + key.removeprefix("oauth:"), fallback)

    def _do(self, action: Any) -> Any:
        if self.down and time.monotonic() < self.resume_at:
            return _DOWN
        try:
            result = action()
        except self.refused:  # the server answered (the wrong type at a key): not down
            return _DOWN
        except self.errors as exc:
            self.resume_at = time.monotonic() + RETRY
            if not self.down:
                self.down = True
                log.warning(
                    "%s not answering (%s): OAuth logins from the local store",
                    self.where,
                    type(exc).__name__,
                )
            return _DOWN
        if self.down:
            self.down = False
            log.info("%s answering again: OAuth logins shared", self.where)
        return result


_DOWN = object()
_RELEASE = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
)


class RefreshLock:
    """A short Redis lock around one refresh (see the module's docstring); the local
    `fallback` lock while Redis is down."""

    def __init__(self, logins: SharedLogins, key: str, fallback: Any) -> None:
        self.logins, self.key, self.fallback = logins, key, fallback
        self.token = secrets.token_hex(16)
        self.held: Literal["redis", "local", "none"] = "none"

    def __enter__(self) -> RefreshLock:
        end = time.monotonic() + LOCK_WAIT
        while time.monotonic() < end:
            taken = self.logins._do(
                lambda: self.logins.client.set(self.key, self.token, nx=True, px=LOCK_TTL)
            )
            if taken is _DOWN:
                self.fallback.__enter__()
                self.held = "local"
                return self
            if taken:
                self.held = "redis"
                return self
            time.sleep(0.05)
        return self  # another replica's refresh outlived LOCK_WAIT: go on, reloading first

    def __exit__(self, *exc: object) -> None:
        if self.held == "redis":
            self.logins._do(lambda: self.logins.client.eval(_RELEASE, 1, self.key, self.token))
        elif self.held == "local":
            self.fallback.__exit__(*exc)
        self.held = "none"

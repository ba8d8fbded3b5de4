"""The gateway's bearer token: what HTTP clients of `plugman mcp serve --auth token` send.

One token per plugman home, made by plugman (`secrets.token_urlsafe(32)`: 256 random bits) the
first time `mcp serve --auth token` or `mcp token` needs it, and kept only in the secret store
(plugman.core.secrets, key `gateway:token`). `PLUGMAN_GATEWAY_TOKEN`, when set, is the token
instead, and nothing is stored: for containers and for several gateway hosts behind one load
balancer, which must all accept the same token. The gateway removes that variable from the
environment its backends and hooks get.

A `Token` never shows its value by accident (`repr` hides it); what is shown instead is its
fingerprint, `sha256:` and the first 12 hex digits of its hash, so two hosts can be compared
without revealing it. `plugman mcp token --show` is the one place that prints the value.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field

from plugman.core.errors import UsageError
from plugman.core.paths import Paths
from plugman.core.secrets import open_store

KEY = "gateway:token"
VARIABLE = "PLUGMAN_GATEWAY_TOKEN"
MIN_LENGTH = 32  # characters; a generated token has 43


@dataclass(frozen=True)
class Token:
    value: str = field(repr=False)
    source: str  # "keyring", "file" or "environment"
    where: str  # the keychain backend, the secrets file, or the variable's name
    created: bool = False
    rotated: bool = False

    @property
    def fingerprint(self) -> str:
        return "sha256:" + hashlib.sha256(self.value.encode()).hexdigest()[:12]


def obtain(paths: Paths, env: Mapping[str, str], *, rotate: bool = False) -> Token:
    """The gateway's token: from PLUGMAN_GATEWAY_TOKEN, else the secret store (made and stored
    there when there is none yet, or replaced with `rotate`)."""
    given = env.get(VARIABLE, "").strip()
    if given:
        if rotate:
            raise UsageError(
                f"the gateway token comes from {VARIABLE}, so plugman cannot rotate it",
                hint=f"set a new value in {VARIABLE}, or unset it to use the stored token",
            )
        return Token(_checked(given), "environment", VARIABLE)
    store = open_store(paths, env)
    stored = None if rotate else store.get(KEY)
    if stored:
        return Token(stored, store.kind, store.where)
    value = secrets.token_urlsafe(32)
    store.set(KEY, value)
    return Token(value, store.kind, store.where, created=not rotate, rotated=rotate)


def _checked(value: str) -> str:
    if len(value) < MIN_LENGTH or any(c.isspace() or not c.isprintable() for c in value):
        raise UsageError(
            f"{VARIABLE} is not a usable token: it needs at least {MIN_LENGTH} printable "
            "characters and no spaces",
            hint="use a value from `plugman mcp token --show` or "
            "`python3 -c 'import secrets; print(secrets.token_urlsafe(32))'`",
        )
    return value

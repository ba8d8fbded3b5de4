"""Who is calling the gateway over HTTP: the one value the auth layer hands to everything after it
(access rules, rate limits, the per-call log line, traces).

The ASGI auth layer (plugman.runtime.gateway.web's `BearerGate`, or the OIDC verifier) puts a
`Principal` into the request's ASGI scope under `SCOPE_KEY` once the request is authenticated;
nothing else writes it. The MCP handlers read it back through the request the SDK attaches to
each message's context (`principal_of`). Over stdio, and over HTTP with `--auth none` on
loopback, there is none: the local user, who consented to everything the config serves.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SCOPE_KEY = "plugman.principal"


@dataclass(frozen=True)
class Principal:
    subject: str  # the token's `sub`; "token" for the shared bearer token
    issuer: str  # the token's `iss` (checked against --issuer); "plugman" for the shared token
    groups: tuple[str, ...] = ()  # from the verified token's groups claim, never from a header

    @property
    def key(self) -> str:
        """A stable, opaque id for counters and store keys: `sub` is unique only per issuer, and
        may hold any character."""
        digest = hashlib.sha256(f"{self.issuer}\0{self.subject}".encode()).hexdigest()
        return digest[:32]


def in_scope(scope: Mapping[str, Any]) -> Principal | None:
    found = scope.get(SCOPE_KEY)
    return found if isinstance(found, Principal) else None


def principal_of(ctx: Any) -> Principal | None:
    """The caller of the request `ctx` (an SDK handler context) carries, if it came over HTTP
    through an auth layer."""
    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None)
    return in_scope(scope) if isinstance(scope, Mapping) else None

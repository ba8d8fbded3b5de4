"""What `plugman mcp serve` is asked to do (`Options`) and whether it may (`checked`): the
transport and address, who may call (`--auth none|token|oidc`), sessions, limits, Redis, the
call log and telemetry. plugman.runtime.gateway.run serves what these say.

The rules `checked` applies before anything starts: a known transport and auth; the OIDC flags
only with `--auth oidc` (and its issuer and audience well formed); `--stateless` and
`--stateful` exclusive; the HTTP-only flags refused over stdio; and no HTTP on an address that
is not loopback without `--auth token` or `--auth oidc`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from plugman.core.errors import UsageError

if TYPE_CHECKING:
    from plugman.runtime.gateway.web import Address

TRANSPORTS = ("stdio", "http")
AUTH = ("none", "token", "oidc")


@dataclass(frozen=True)
class Options:
    transport: str = "stdio"
    host: str = "127.0.0.1"
    port: int = 8700
    call_timeout: float = 60.0
    deny_destructive: bool = False
    connect_timeout: float = 30.0
    auth: str = "none"
    stateless: bool = False  # HTTP: `--stateless`, the default anyway (see stateful)
    first_list_wait: float | None = None  # None: PLUGMAN_GATEWAY_FIRST_LIST_WAIT, or 5 s
    replica: str | None = None  # None: PLUGMAN_REPLICA, or the host name (observe.replica_name)
    otel: bool = False  # traces and metrics over OTLP/HTTP (plugman.runtime.gateway.telemetry)
    log_stderr: bool = False  # the call log on stderr too (a container's log)
    drain_delay: float = 0.0  # HTTP: seconds /readyz says 503 before the listener closes
    drain_timeout: float = 25.0  # HTTP: seconds the requests in flight may take to finish
    rate_limit: str | None = None  # per caller, "60/minute" (plugman.runtime.gateway.ratelimit)
    tool_rate_limit: str | None = None  # per caller and tool
    redis_url: str | None = None  # None: PLUGMAN_REDIS_URL, else no Redis
    redis_failure: str = "open"  # "open" or "closed": when Redis does not answer
    issuer: str | None = None  # --auth oidc (plugman.runtime.gateway.oidc)
    audience: str | None = None
    groups_claim: str = "groups"
    stateful: bool = False  # HTTP: sessions kept in this process (stateless is the default)
    shared_oauth: bool = False  # backend OAuth logins in Redis, sealed (runtime.oauth.sealed)


def checked(options: Options) -> Address | None:
    """The address to listen on (None over stdio), once the options are known to be safe: a
    UsageError (exit 2) otherwise, before anything is read, installed, bound or started
    (`mcp serve --frozen` checks them before it installs the lock)."""
    if options.transport not in TRANSPORTS:
        raise UsageError(f"unknown transport {options.transport!r}", hint="use stdio or http")
    if options.auth not in AUTH:
        raise UsageError(f"unknown --auth {options.auth!r}", hint="use none, token or oidc")
    given = options.issuer or options.audience or options.groups_claim != "groups"
    if options.auth != "oidc" and given:
        raise UsageError(
            "--issuer, --audience and --groups-claim apply only to --auth oidc",
            hint="add --auth oidc, or leave them out",
        )
    if options.stateless and options.stateful:
        raise UsageError(
            "--stateless and --stateful exclude each other",
            hint="pass --stateful to keep 2025-era sessions, else nothing (stateless)",
        )
    if options.transport == "stdio":
        if options.rate_limit or options.tool_rate_limit:
            raise UsageError(
                "--rate-limit and --tool-rate-limit apply only to --transport http",
                hint="over stdio the gateway serves only the process that started it",
            )
        if options.stateful:
            raise UsageError(
                "--stateful applies only to --transport http",
                hint="over stdio the gateway serves only the process that started it",
            )
        if options.auth != "none" or options.stateless:
            raise UsageError(
                "--auth and --stateless apply only to --transport http",
                hint="over stdio the gateway serves only the process that started it",
            )
        return None
    from plugman.runtime.gateway.web import listen_address  # lazy: socket, only over HTTP

    address = listen_address(options.host, options.port)
    if not address.loopback and options.auth == "none":
        raise UsageError(
            f"refusing to serve HTTP on {options.host} without authentication: it is not a "
            "loopback address, so anyone who can reach it could call every tool",
            where="--host",
            hint="add --auth token (clients send `Authorization: Bearer <token>`; "
            "`plugman mcp token --show` prints it), or --auth oidc --issuer URL --audience URL "
            "(clients send access tokens from your OIDC provider), or listen on 127.0.0.1",
        )
    if options.auth == "oidc":
        # lazy: jwt, only --auth oidc needs it
        from plugman.runtime.gateway.oidc import settings

        settings(options.issuer, options.audience, options.groups_claim)
    return address

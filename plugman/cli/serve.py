"""`plugman mcp serve`: every resolved MCP server behind one MCP server (stdio or HTTP).

Mounted by the application as `mcp_app.command("serve")(serve)`. stdout is the protocol
channel over stdio, so nothing else is ever printed there; with `--transport http` one line,
`listening on http://HOST:PORT/mcp`, goes to stderr once connections are accepted (with
`--auth token`, a second one gives the token's fingerprint, never the token).

Exit codes: 0 stopped by the client or a signal; 1 a failure (the port is in use, the secret
store cannot be opened); 2 usage, including `--transport http` on an address that is not
loopback without `--auth token` or `--auth oidc` (refused before anything starts), and
`--auth oidc` without `--issuer` and `--audience` or with an http:// issuer not on loopback; 1
also when the OIDC provider cannot be discovered at start.

`--frozen` (a replica's start, docs/gateway-fleet.md): install exactly plugman.lock first, as
`plugman sync --frozen` does, and refuse to serve (exit 1, nothing printed on stdout) when the
lock and plugman.toml disagree or a pinned plugin cannot be installed.
"""

from __future__ import annotations

from plugman import output
from plugman.cli.argv import VALUE, Context, Option
from plugman.cli.common import paths_of

# The observability options (plugman.runtime.gateway.observe, .telemetry; the drain: .run)
OBSERVE = (
    Option(
        ("--replica",),
        "This replica's name in the call log and traces (default PLUGMAN_REPLICA, "
        "else the host name).",
        VALUE,
    ),
    Option(
        ("--otel",),
        "Export OpenTelemetry traces and metrics over OTLP/HTTP, as the OTEL_* "
        "variables say (OTEL_EXPORTER_OTLP_ENDPOINT...; needs plugman[fleet]).",
    ),
    Option(
        ("--log-stderr",),
        "Write the call log (one JSON line per call, also in "
        "<state>/logs/calls.jsonl) to stderr too, for a container's log.",
    ),
    Option(
        ("--drain-delay",),
        "HTTP: seconds a SIGTERM keeps serving with /readyz at 503, so the "
        "balancer stops sending first (default 0).",
        VALUE,
        default=0.0,
        type="float",
        low=0,
    ),
    Option(
        ("--drain-timeout",),
        "HTTP: seconds the calls in flight at a SIGTERM may take to finish (default 25).",
        VALUE,
        default=25.0,
        type="float",
        low=0,
    ),
)

# Every flag of `plugman mcp serve` (cli/mcp.py mounts the command).
OPTIONS = (
    Option(
        ("--transport", "-t"),
        "stdio (default) or http (streamable HTTP).",
        VALUE,
        default="stdio",
    ),
    Option(
        ("--port",),
        "HTTP port (0: any free port).",
        VALUE,
        default=8700,
        type="int",
        low=0,
        high=65535,
    ),
    Option(("--host",), "HTTP address to listen on.", VALUE, default="127.0.0.1"),
    Option(
        ("--call-timeout",),
        "Seconds a tool call may take.",
        VALUE,
        default=60.0,
        type="float",
        low=0.1,
    ),
    Option(("--deny-destructive",), "Refuse every tool marked destructiveHint."),
    Option(
        ("--auth",),
        "HTTP: none, token (clients send the bearer token `plugman "
        "mcp token` keeps), or oidc (clients send JWT access tokens from "
        "--issuer for --audience). Required on any address but loopback.",
        VALUE,
        default="none",
    ),
    Option(
        ("--first-list-wait",),
        "Seconds from the start during which a list waits "
        "for servers still starting that the gateway "
        "remembers nothing of (default 5, or PLUGMAN_GATEWAY_FIRST_LIST_WAIT; "
        "0: never).",
        VALUE,
        type="float",
        low=0,
    ),
    Option(
        ("--stateless",),
        "HTTP, the default: no sessions, so any of several gateways "
        "behind a load balancer can answer "
        "any request (2025-era clients then get no list_changed notifications).",
    ),
    *OBSERVE,
    Option(
        ("--rate-limit",),
        "HTTP: requests per caller, e.g. 60/minute (per process without --redis).",
        VALUE,
        metavar="LIMIT",
    ),
    Option(
        ("--tool-rate-limit",),
        "HTTP: tools/call per caller and tool, e.g. 10/minute.",
        VALUE,
        metavar="LIMIT",
    ),
    Option(
        ("--redis",),
        "HTTP: Redis URL shared by the replicas: limits, list_changed fan-out, resumable "
        "streams (else PLUGMAN_REDIS_URL, where a password belongs).",
        VALUE,
        metavar="URL",
    ),
    Option(
        ("--redis-failure",),
        "HTTP: Redis down: open (serve, warn) or closed (503).",
        VALUE,
        default="open",
    ),
    Option(
        ("--issuer",),
        "--auth oidc: the issuer URL, exactly as tokens' iss (https, or loopback).",
        VALUE,
        metavar="URL",
    ),
    Option(
        ("--audience",),
        "--auth oidc: exactly as tokens' aud, e.g. https://HOST/mcp.",
        VALUE,
        metavar="URL",
    ),
    Option(
        ("--groups-claim",),
        "--auth oidc: the claim gatewayAccess rules match (default groups).",
        VALUE,
        default="groups",
    ),
    Option(
        ("--stateful",),
        "HTTP: keep 2025-era sessions in this process (list_changed pushes); behind a "
        "balancer, hash on Mcp-Session-Id.",
    ),
    Option(
        ("--frozen",),
        "Install exactly plugman.lock first; refuse to serve if plugman.toml disagrees.",
    ),
    Option(
        ("--shared-oauth",),
        "With --redis: backend OAuth logins shared by the replicas, sealed with AES-GCM "
        "under PLUGMAN_GATEWAY_KEY.",
    ),
)


def serve(
    ctx: Context,
    transport: str = "stdio",
    port: int = 8700,
    host: str = "127.0.0.1",
    call_timeout: float = 60.0,
    deny_destructive: bool = False,
    auth: str = "none",
    first_list_wait: float | None = None,
    stateless: bool = False,
    replica: str | None = None,
    otel: bool = False,
    log_stderr: bool = False,
    drain_delay: float = 0.0,
    drain_timeout: float = 25.0,
    rate_limit: str | None = None,
    tool_rate_limit: str | None = None,
    redis: str | None = None,
    redis_failure: str = "open",
    issuer: str | None = None,
    audience: str | None = None,
    groups_claim: str = "groups",
    stateful: bool = False,
    frozen: bool = False,
    shared_oauth: bool = False,
) -> None:
    """Serve the tools, resources and prompts of every resolved MCP server as one server.

    Tools are listed as <server>__<tool> (the agent adds its own mcp__<its name>__); PreToolUse
    and PostToolUse hooks see mcp__<server>__<tool> and run around calls. Servers still
    starting are listed with what they offered last time. Logs: <state>/logs/gateway.log, one
    JSON line per call in <state>/logs/calls.jsonl. Over HTTP, /healthz and /readyz answer a
    load balancer's probes.
    """
    # lazy: runtime.gateway.run not loaded by plugman mcp run (+255 ms)
    from plugman.runtime.gateway.options import Options, checked
    from plugman.runtime.gateway.run import serve_paths

    options = Options(
        transport,
        host,
        port,
        call_timeout,
        deny_destructive,
        auth=auth,
        stateless=stateless,
        first_list_wait=first_list_wait,
        replica=replica,
        otel=otel,
        log_stderr=log_stderr,
        drain_delay=drain_delay,
        drain_timeout=drain_timeout,
        rate_limit=rate_limit,
        tool_rate_limit=tool_rate_limit,
        redis_url=redis,
        redis_failure=redis_failure,
        issuer=issuer,
        audience=audience,
        groups_claim=groups_claim,
        stateful=stateful,
        shared_oauth=shared_oauth,
    )
    paths = paths_of(ctx)
    if frozen:  # the same config on every replica: exactly plugman.lock, installed first
        checked(options)  # a usage error before anything is installed
        from plugman.commands.sync import frozen_for_serving  # lazy: only with --frozen

        frozen_for_serving(paths)
    serve_paths(paths, options, announce=output.announced)

"""Serving the gateway (plugman.runtime.gateway.server): over stdio or streamable HTTP, where it
listens, and who may talk to it.

- stdio (default): the MCP protocol on stdin/stdout until the client closes stdin, through
  `mcp.server.stdio.stdio_server()` (over event-loop pipes when it can:
  plugman.runtime.gateway.pipes).
- http: uvicorn serves the SDK's streamable HTTP session manager for the low-level server at
  `http://HOST:PORT/mcp` (plugman.runtime.gateway.web); the socket is bound first, so a port
  in use is a plain error, and port 0 picks a free one. Its address goes to `announce` once it
  accepts connections, then, with `--auth token`, the token's fingerprint (never the token:
  plugman.runtime.gateway.token).

SIGTERM and SIGINT end either gracefully: backends are shut down (the SDK closes a stdio
server's stdin, then signals its process group), so no server is left behind. Over HTTP the
first signal drains the replica (`_drain`: /readyz 503, `--drain-delay`, then the calls in
flight finish within `--drain-timeout`), so a rolling update fails no call. The call log and
`--otel`: plugman.runtime.gateway.observe and .telemetry.

Over HTTP:

- Address: `--host` is resolved once, before anything starts; the socket is bound to that
  address. A loopback address (127.0.0.0/8, ::1, `localhost`) serves only this machine; any
  other (a LAN address, 0.0.0.0, ::) serves whoever can reach it, so without `--auth token`
  `serve_paths` raises a UsageError (exit 2) before it reads the config, binds or starts
  anything.
- DNS rebinding: on a loopback address every request must name a loopback host (`Host`) and,
  if it has one, a loopback origin (`Origin`), or the SDK's transport answers 421 (Host) or
  403 (Origin): a web page whose name an attacker pointed at 127.0.0.1 cannot reach the
  gateway through the user's browser. Elsewhere the names clients use (a load balancer's, a
  DNS name) are not known here, and the token is what keeps others out.
- Bearer token (`BearerGate`): every HTTP request must carry `Authorization: Bearer <token>`,
  compared in constant time (`hmac.compare_digest`); any other answers 401 with
  `WWW-Authenticate: Bearer`. That compare is the only work added per request. No token, and
  no `Authorization` header, is ever logged.
- OIDC (`--auth oidc --issuer URL --audience URL`): every HTTP request must carry a JWT access
  token the issuer signed for the audience, checked against the issuer's keys, discovered and
  fetched before listening (plugman.runtime.gateway.oidc); RFC 9728 metadata tells clients
  where to get one (plugman.runtime.gateway.gate). Accepted on any address, as the token is.
- Responses: each request POST is answered with one JSON body, not an SSE stream
  (`json_response`): the gateway sends nothing scoped to a request before its answer (no
  progress, no log message, no server-to-client request), and the SDK's per-request SSE
  machinery cost about 1 ms a call on loopback (bench/gateway_overhead.py, issue 36).
  `list_changed` notifications still go on the client's GET stream, and a 2026-era
  `subscriptions/listen` is still answered as a stream (the SDK's carve-out).
- Sessions: stateless by default (`--stateless`, the default, is still accepted): every
  request is served on its own, so any of several replicas behind a round-robin load balancer
  can answer any request, without sticky routing; 2025-era clients then get no `list_changed`
  notifications (they see changes when they list again). `--stateful` keeps each 2025-era
  client's session in this process (`Mcp-Session-Id`), which lets the gateway push
  `list_changed` on the client's GET stream; behind a balancer that needs hashing on
  `Mcp-Session-Id` (docs/gateway-fleet.md). 2026-era clients are served per request either
  way, and get change events on their `subscriptions/listen`.
- Config digest: over HTTP the start-up log line names the digest of what this replica serves
  (plugman.runtime.gateway.digest), so a replica whose config differs from its peers' shows.
- Replicas (`--redis URL`, else `PLUGMAN_REDIS_URL`): list changes are told to the clients of
  every replica, 2025-era sessions resume on any replica, and with `--shared-oauth` backend
  OAuth logins are shared, encrypted (plugman.runtime.gateway.fleet; Redis down degrades each).
"""

from __future__ import annotations

import importlib
import logging
import math
import os
import signal
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from plugman.config.redact import message
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.paths import Paths
from plugman.runtime.gateway import early
from plugman.runtime.gateway import token as gateway_token
from plugman.runtime.gateway.health import Health
from plugman.runtime.gateway.memory import FILE
from plugman.runtime.gateway.options import Options, checked

if TYPE_CHECKING:
    import socket

    from plugman.runtime.gateway.fleet import Fleet
    from plugman.runtime.gateway.oidc import Verifier
    from plugman.runtime.gateway.ratelimit import Limiter
    from plugman.runtime.gateway.server import Gateway
    from plugman.runtime.gateway.web import Address, HealthGate

# What the full server imports, warmed in a thread while the early answers are given
# (plugman.runtime.gateway.early): the SDK, pydantic and anyio, most of a second.
WARM = (
    "anyio",
    "uvloop",
    "mcp",
    "mcp.server.stdio",
    "mcp.server.lowlevel.server",
    "mcp.server.subscriptions",
    "mcp.client.stdio",
    "plugman.runtime.gateway.server",
    "plugman.runtime.gateway.pipes",
    "plugman.runtime.gateway.probe",
    "plugman.runtime.transport.connect",
)

log = logging.getLogger("plugman.gateway")

REDIS_VARIABLE = "PLUGMAN_REDIS_URL"
# uvloop's event loop: each call crosses the loop four times (client in, backend out and back,
# client out), and uvloop's wake-ups and pipes take ~0.1 ms off the gateway's added latency.
LOOP = {"use_uvloop": sys.platform != "win32"}
Announce = Callable[[str], None]


def serve_paths(paths: Paths, options: Options, announce: Announce | None = None) -> None:
    """Serve this project's resolved MCP servers until the client or a signal ends it."""
    # lazy: config.resolution takes ~13 ms to import, only this path needs it
    from plugman.config.resolution import resolve

    env = dict(os.environ)
    address = checked(options)
    token = gateway_token.obtain(paths, env) if options.auth == "token" else None
    verifier = _verifier(options) if options.auth == "oidc" else None
    env.pop(gateway_token.VARIABLE, None)  # not for backends and hooks
    from_env = env.pop(REDIS_VARIABLE, "").strip()  # its password: not for backends and hooks
    redis_url = options.redis_url or from_env or None
    limiter = _limiter(options, redis_url) if address is not None else None
    fleet = _fleet(options, address, redis_url, env)
    health = Health.from_env(env, options.connect_timeout, options.first_list_wait)
    resolved = resolve(paths, env)
    servers = {name: server.entry for name, server in resolved.servers.items()}
    handover = None
    if address is None and early.usable(env):  # before importing what it serves with
        handover = early.answer(servers, paths.state_dir / FILE, warm=_warm)
    # lazy: the full server, the SDK, anyio: most of a second, after the early answers
    import anyio  # lazy: see above

    # lazy: the full server (calls, server, oauth, transport): after the early answers
    from plugman.config.gateway_access import Access
    from plugman.runtime.gateway.calls import Guard
    from plugman.runtime.gateway.memory import Memory
    from plugman.runtime.gateway.observe import Seen, observed
    from plugman.runtime.gateway.server import Gateway
    from plugman.runtime.oauth.provider import authorizer
    from plugman.runtime.transport import headers

    guard = Guard(
        hooks=tuple(resolved.hooks),
        project=paths.project_dir,
        env=env,
        plugin_data=paths.plugin_data,
        call_timeout=options.call_timeout,
        deny_destructive=options.deny_destructive,
    )
    log_dir = paths.state_dir / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    sock = None
    if address is not None:
        from plugman.runtime.gateway.web import bind  # lazy: socket, not before early answers

        sock = bind(address)
    with _logging_to(log_dir / "gateway.log"), ExitStack() as stack:
        for item in resolved.dropped:
            if item.kind == "server" and item.name not in servers:
                log.warning("%s: not served (%s: %s)", item.name, item.reason, item.detail)
        for problem in resolved.broken(paths):  # what it leaves out: `plugman config resolve`
            log.warning("%s:%s: %s", problem.file, problem.line or "", problem.message)
        errlogs = {
            name: stack.enter_context(_errlog(log_dir, name, servers[name])) for name in servers
        }
        seen = Seen(options.replica, options.otel, options.log_stderr)
        calls, telemetry = observed(log_dir, env, seen, stack)
        gateway = Gateway(
            servers,
            guard=guard,
            health=health,
            errlogs=errlogs,
            env={**env, "CLAUDE_PROJECT_DIR": str(paths.project_dir)},
            cwd=paths.project_dir,
            auth_for=authorizer(paths, env, fleet.logins if fleet else None),
            shared=headers.shared(resolved.servers),
            memory=Memory(paths.state_dir / FILE),
            calls=calls,
            tracing=telemetry is not None and telemetry.tracer is not None,
            access=Access(resolved.policy.gateway_access),
            authenticated=options.auth != "none",  # who calls decides what it may use
        )
        if telemetry is not None:
            from plugman.runtime.gateway.telemetry import HeaderContext  # lazy: only with --otel

            gateway.server.middleware.insert(0, HeaderContext())
        log.info("serving %d servers over %s", len(servers), options.transport)
        if limiter is not None:
            log.info("rate limits: %s", limiter.described)
        if handover is not None:
            _log_early(handover)
        if sock is None or address is None:
            anyio.run(_stdio, gateway, handover, backend_options=LOOP)
        else:
            stack.callback(sock.close)
            said = [_config(paths, env, options)]
            _serve_http(
                gateway, address, sock, options, token, announce, said, limiter, verifier, fleet
            )
        log.info("stopped")


def _config(paths: Paths, env: Mapping[str, str], options: Options) -> str:
    """The line that names this replica's mode and config digest."""
    # lazy: only the HTTP path has a digest (a second resolution, with references kept)
    from plugman.runtime.gateway.digest import config_digest

    mode = "stateful" if options.stateful else "stateless"
    return f"{mode}, config {config_digest(paths, env)}"  # logged when announced


def _limiter(options: Options, redis_url: str | None) -> Limiter | None:
    """The rate limits the options ask for (plugman.runtime.gateway.ratelimit), if any."""
    # lazy: limits and redis (the fleet extra) only when limits are asked for
    from plugman.runtime.gateway.ratelimit import Rules, limiter

    rules = Rules(options.rate_limit, options.tool_rate_limit, redis_url, options.redis_failure)
    return limiter(rules)


def _fleet(
    options: Options, address: Address | None, redis_url: str | None, env: dict[str, str]
) -> Fleet | None:
    """What replicas share in Redis (plugman.runtime.gateway.fleet), over HTTP with a Redis
    URL; its URL and key taken out of `env` (not for backends and hooks)."""
    if address is None:
        if options.shared_oauth:
            raise UsageError(
                "--shared-oauth applies only to --transport http",
                hint="over stdio the gateway serves only the process that started it",
            )
        return None
    from plugman.runtime.gateway.fleet import Fleet  # lazy: only over HTTP

    return Fleet.from_options(redis_url, options.shared_oauth, env)


def _warm() -> None:
    """Import what the full server imports (WARM); a failure is left for it to meet."""
    for name in WARM:
        try:
            importlib.import_module(name)
        except Exception:  # the full server imports it again, and says why
            return


def _log_early(handover: early.Handover) -> None:
    if handover.answered:
        answered = ", ".join(handover.answered)
        after = f"; the first list {handover.seconds * 1000:.0f} ms after the start"
        log.info("answered from memory: %s%s", answered, after if handover.seconds else "")


async def _stdio(gateway: Gateway, handover: early.Handover | None) -> None:
    # lazy: anyio, the SDK and the pipes: after the early answers (plugman.runtime.gateway.early)
    import anyio

    # lazy: mcp takes ~881 ms to import, only this path needs it
    from mcp.server.stdio import stdio_server

    # lazy: asyncio's pipes (~13 ms): after the early answers
    from plugman.runtime.gateway.pipes import Replayed, Unrepeated, stdio_streams

    async with anyio.create_task_group() as group:
        gateway.start(group)
        group.start_soon(_on_signal, group.cancel_scope.cancel)
        async with stdio_streams() as native:
            stdin: Any
            stdout: Any
            stdin, stdout = native or (None, None)
            if native is not None and handover is not None:
                stdin = Replayed(handover.replay, native[0])
                stdout = Unrepeated(native[1].writer, early.REPLAY_ID)
            async with stdio_server(cast(Any, stdin), cast(Any, stdout)) as (read, write):
                options = gateway.server.create_initialization_options()
                await gateway.server.run(read, write, options)
        group.cancel_scope.cancel()


def _serve_http(
    gateway: Gateway,
    address: Address,
    sock: socket.socket,
    options: Options,
    token: gateway_token.Token | None,
    announce: Announce | None,
    more: list[str],
    limiter: Limiter | None = None,
    verifier: Verifier | None = None,
    fleet: Fleet | None = None,
) -> None:
    stateless = not options.stateful
    gateway.stateless = stateless
    from plugman.runtime.gateway.web import http_app  # lazy: socket, not before early answers

    events = fleet.events(gateway) if fleet else None
    web = http_app(
        gateway.server,
        address,
        token.value if token else None,
        stateless,
        limiter,
        oidc=verifier,
        events=events,
        ready=gateway.settled,
    )
    lines = [f"clients must send a bearer token ({token.fingerprint})"] if token else []
    if verifier is not None:
        given = verifier.settings
        lines.append(f"clients must send an access token from {given.issuer} for {given.audience}")
    lines += more
    said = announce or (lambda _: None)
    # lazy: anyio: after the early answers (plugman.runtime.gateway.early)
    import anyio

    drain = (options.drain_delay, options.drain_timeout)
    anyio.run(_http, gateway, web, sock, said, lines, drain, fleet, backend_options=LOOP)


def _verifier(options: Options) -> Verifier:
    """The OIDC verifier, its provider discovered and its keys fetched (before listening)."""
    from plugman.runtime.gateway import oidc  # lazy: jwt, only --auth oidc needs it

    return oidc.start(oidc.settings(options.issuer, options.audience, options.groups_claim))


async def _http(
    gateway: Gateway,
    web: HealthGate,
    sock: socket.socket,
    announce: Announce,
    lines: list[str],
    drain: tuple[float, float],
    fleet: Fleet | None = None,
) -> None:
    import uvicorn  # lazy: uvicorn takes ~27 ms to import, only this path needs it

    class Web(uvicorn.Server):
        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield  # _on_signal stops it; uvicorn would re-raise the signal after shutdown

    # lazy: anyio: after the early answers (plugman.runtime.gateway.early)
    import anyio

    host, port = sock.getsockname()[:2]
    config = uvicorn.Config(
        web,
        log_config=None,
        access_log=False,
        lifespan="on",
        proxy_headers=False,
        server_header=False,
        date_header=False,
        timeout_graceful_shutdown=math.ceil(drain[1]),  # uvicorn takes whole seconds
    )
    server = Web(config)

    async with anyio.create_task_group() as group:
        gateway.start(group)
        if fleet is not None:
            fleet.start(group)
        group.start_soon(_drain, server, web, drain[0])
        from plugman.runtime.gateway.web import mcp_url  # lazy: socket, only over HTTP

        heard = [f"listening on {mcp_url(host, port)}", *lines]
        group.start_soon(_announce, server, heard, announce)
        await server.serve(sockets=[sock])
        group.cancel_scope.cancel()


async def _announce(web: Any, lines: list[str], announce: Announce) -> None:
    # lazy: anyio: after the early answers (plugman.runtime.gateway.early)
    import anyio

    while not web.started:
        await anyio.sleep(0.02)
    for line in lines:
        log.info("%s", line)
        announce(line)


async def _drain(server: Any, web: HealthGate, delay: float) -> None:
    """On SIGTERM or SIGINT: /readyz 503, `delay` seconds more serving (a second signal ends
    them), then uvicorn stops: the listener closes and the requests in flight finish (bounded
    by its timeout_graceful_shutdown, --drain-timeout)."""
    # lazy: anyio: after the early answers (plugman.runtime.gateway.early)
    import anyio

    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as received:
        async for number in received:
            log.info("signal %d: draining (readiness 503) for %g s, then stopping", number, delay)
            web.draining = True
            break
        with anyio.move_on_after(delay):
            async for number in received:
                log.info("signal %d: stopping now", number)
                break
        server.should_exit = True


async def _on_signal(stop: Callable[[], None]) -> None:
    # lazy: anyio: after the early answers (plugman.runtime.gateway.early)
    import anyio

    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as received:
        async for number in received:
            log.info("signal %d: stopping", number)
            stop()
            return


@contextmanager
def _errlog(log_dir: Path, name: str, entry: Mapping[str, Any]) -> Iterator[Any]:
    """Where a stdio server's stderr goes (appended to); nowhere for a remote one."""
    # lazy: probe and transport import anyio: after the early answers
    from plugman.runtime.gateway.probe import log_path
    from plugman.runtime.transport.connect import transport_of

    try:
        stdio = transport_of(entry) == "stdio"
    except PlugmanError:
        stdio = False  # its connection fails and says why
    path = log_path(log_dir, name) if stdio else Path(os.devnull)
    with path.open("a", encoding="utf-8", errors="replace") as file:
        yield file


class _Redacting(logging.Formatter):
    """Log lines with every known sensitive value and URL credential masked: a backend's
    error may quote its expanded entry (a URL with a key in it)."""

    def format(self, record: logging.LogRecord) -> str:
        return message(super().format(record))


@contextmanager
def _logging_to(path: Path) -> Iterator[None]:
    """Every log record (and warning) to `path` while serving; nothing to stdout or stderr."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(_Redacting("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root, ours = logging.getLogger(), logging.getLogger("plugman.gateway")
    levels = (root.level, ours.level)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    ours.setLevel(logging.INFO)
    logging.captureWarnings(True)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="ping is removed")  # backends speak legacy
        try:
            yield
        finally:
            logging.captureWarnings(False)
            root.removeHandler(handler)
            handler.close()
            root.setLevel(levels[0])
            ours.setLevel(levels[1])

"""Running the gateway (plugman.runtime.gateway) over stdio or streamable HTTP.

- stdio (default): the MCP protocol on stdin/stdout until the client closes stdin, through
  `mcp.server.stdio.stdio_server()` (over event-loop pipes when it can: plugman.runtime.pipes).
- http: uvicorn serves the low-level server's `streamable_http_app()` at
  `http://HOST:PORT/mcp` (plugman.runtime.gateway_http: the address, DNS-rebinding
  protection, the bearer token, `--stateless`); the socket is bound first, so a port in use is
  a plain error, and port 0 picks a free one. Its address goes to `announce` once it accepts
  connections, then, with `--auth token`, the token's fingerprint (never the token).

Over HTTP on any address but loopback the gateway requires `--auth token`: without it,
`serve_paths` raises a UsageError (exit 2) before it reads the config, binds or starts anything.

SIGTERM and SIGINT end either gracefully: backends are shut down (the SDK closes a stdio
server's stdin, then signals its process group), so no server is left behind.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import anyio

from plugman.core.errors import PlugmanError, UsageError
from plugman.core.paths import Paths
from plugman.runtime import gateway_http, gateway_token, headers
from plugman.runtime.calls import Guard
from plugman.runtime.connect import transport_of
from plugman.runtime.gateway import Gateway
from plugman.runtime.health import Health
from plugman.runtime.memory import FILE, Memory
from plugman.runtime.oauth_provider import authorizer
from plugman.runtime.pipes import stdio_streams
from plugman.runtime.probe import log_path

log = logging.getLogger("plugman.gateway")

TRANSPORTS = ("stdio", "http")
AUTH = ("none", "token")
# uvloop's event loop: each call crosses the loop four times (client in, backend out and back,
# client out), and uvloop's wake-ups and pipes take ~0.1 ms off the gateway's added latency.
LOOP = {"use_uvloop": sys.platform != "win32"}
Announce = Callable[[str], None]


@dataclass(frozen=True)
class Options:
    transport: str = "stdio"
    host: str = "127.0.0.1"
    port: int = 8700
    call_timeout: float = 60.0
    deny_destructive: bool = False
    connect_timeout: float = 30.0
    auth: str = "none"
    stateless: bool = False
    first_list_wait: float | None = None  # None: PLUGMAN_GATEWAY_FIRST_LIST_WAIT, or 5 s


def serve_paths(paths: Paths, options: Options, announce: Announce | None = None) -> None:
    """Serve this project's resolved MCP servers until the client or a signal ends it."""
    from plugman.config.resolution import resolve

    env = dict(os.environ)
    address = _checked(options)
    token = gateway_token.obtain(paths, env) if options.auth == "token" else None
    env.pop(gateway_token.VARIABLE, None)  # not for backends and hooks
    health = Health.from_env(env, options.connect_timeout, options.first_list_wait)
    resolved = resolve(paths, env)
    servers = {name: server.entry for name, server in resolved.servers.items()}
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
    sock = gateway_http.bind(address) if address is not None else None
    with _logging_to(log_dir / "gateway.log"), ExitStack() as stack:
        for item in resolved.dropped:
            if item.kind == "server" and item.name not in servers:
                log.warning("%s: not served (%s: %s)", item.name, item.reason, item.detail)
        for problem in resolved.broken(paths):  # what it leaves out: `plugman config resolve`
            log.warning("%s:%s: %s", problem.file, problem.line or "", problem.message)
        errlogs = {
            name: stack.enter_context(_errlog(log_dir, name, servers[name])) for name in servers
        }
        gateway = Gateway(
            servers,
            guard=guard,
            health=health,
            errlogs=errlogs,
            env={**env, "CLAUDE_PROJECT_DIR": str(paths.project_dir)},
            cwd=paths.project_dir,
            auth_for=authorizer(paths, env),
            shared=headers.shared(resolved.servers),
            memory=Memory(paths.state_dir / FILE),
        )
        log.info("serving %d servers over %s", len(servers), options.transport)
        if sock is None or address is None:
            anyio.run(_stdio, gateway, backend_options=LOOP)
        else:
            stack.callback(sock.close)
            _serve_http(gateway, address, sock, options.stateless, token, announce)
        log.info("stopped")


async def _stdio(gateway: Gateway) -> None:
    from mcp.server.stdio import stdio_server

    async with anyio.create_task_group() as group:
        gateway.start(group)
        group.start_soon(_on_signal, group.cancel_scope.cancel)
        async with stdio_streams() as native:
            stdin, stdout = native or (None, None)
            async with stdio_server(cast(Any, stdin), cast(Any, stdout)) as (read, write):
                options = gateway.server.create_initialization_options()
                await gateway.server.run(read, write, options)
        group.cancel_scope.cancel()


def _serve_http(
    gateway: Gateway,
    address: gateway_http.Address,
    sock: socket.socket,
    stateless: bool,
    token: gateway_token.Token | None,
    announce: Announce | None,
) -> None:
    gateway.stateless = stateless
    web = gateway_http.app(gateway, address, token.value if token else None, stateless)
    lines = [f"clients must send a bearer token ({token.fingerprint})"] if token else []
    said = announce or (lambda _: None)
    anyio.run(_http, gateway, web, sock, said, lines, backend_options=LOOP)


def _checked(options: Options) -> gateway_http.Address | None:
    """The address to listen on (None over stdio), once the options are known to be safe."""
    if options.transport not in TRANSPORTS:
        raise UsageError(f"unknown transport {options.transport!r}", hint="use stdio or http")
    if options.auth not in AUTH:
        raise UsageError(f"unknown --auth {options.auth!r}", hint="use none or token")
    if options.transport == "stdio":
        if options.auth != "none" or options.stateless:
            raise UsageError(
                "--auth and --stateless apply only to --transport http",
                hint="over stdio the gateway serves only the process that started it",
            )
        return None
    address = gateway_http.resolve(options.host, options.port)
    if not address.loopback and options.auth == "none":
        raise UsageError(
            f"refusing to serve HTTP on {options.host} without authentication: it is not a "
            "loopback address, so anyone who can reach it could call every tool",
            where="--host",
            hint="add --auth token (clients send `Authorization: Bearer <token>`; "
            "`plugman mcp token --show` prints it), or listen on 127.0.0.1",
        )
    return address


async def _http(
    gateway: Gateway, web: Any, sock: socket.socket, announce: Announce, lines: list[str]
) -> None:
    import uvicorn

    class Web(uvicorn.Server):
        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield  # _on_signal stops it; uvicorn would re-raise the signal after shutdown

    host, port = sock.getsockname()[:2]
    config = uvicorn.Config(web, log_config=None, access_log=False, lifespan="on")
    server = Web(config)

    def stop() -> None:
        server.should_exit = True

    async with anyio.create_task_group() as group:
        gateway.start(group)
        group.start_soon(_on_signal, stop)
        heard = [f"listening on {gateway_http.url(host, port)}", *lines]
        group.start_soon(_announce, server, heard, announce)
        await server.serve(sockets=[sock])
        group.cancel_scope.cancel()


async def _announce(web: Any, lines: list[str], announce: Announce) -> None:
    while not web.started:
        await anyio.sleep(0.02)
    for line in lines:
        log.info("%s", line)
        announce(line)


async def _on_signal(stop: Callable[[], None]) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as received:
        async for number in received:
            log.info("signal %d: stopping", number)
            stop()
            return


@contextmanager
def _errlog(log_dir: Path, name: str, entry: Mapping[str, Any]) -> Iterator[Any]:
    """Where a stdio server's stderr goes (appended to); nowhere for a remote one."""
    try:
        stdio = transport_of(entry) == "stdio"
    except PlugmanError:
        stdio = False  # its connection fails and says why
    path = log_path(log_dir, name) if stdio else Path(os.devnull)
    with path.open("a", encoding="utf-8", errors="replace") as file:
        yield file


@contextmanager
def _logging_to(path: Path) -> Iterator[None]:
    """Every log record (and warning) to `path` while serving; nothing to stdout or stderr."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
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

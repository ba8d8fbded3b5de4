"""The gateway over HTTP (plugman.runtime.gateway.run): where it listens, who may talk to it,
and the ASGI app uvicorn serves (see run's docstring for the rules)."""

from __future__ import annotations

import hmac
import ipaddress
import json
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from plugman.core.errors import PlugmanError
from plugman.runtime.gateway.principal import SCOPE_KEY, Principal

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings

    from plugman.runtime.gateway.events import Events
    from plugman.runtime.gateway.oidc import Verifier
    from plugman.runtime.gateway.ratelimit import Limiter

PATH = "/mcp"
Receive = Any  # ASGI
Send = Any
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
TOKEN_HOLDER = Principal("token", "plugman")  # whoever sends the shared bearer token


@dataclass(frozen=True)
class Address:
    family: int
    sockaddr: tuple[Any, ...]

    @property
    def ip(self) -> str:
        return str(self.sockaddr[0])

    @property
    def loopback(self) -> bool:
        return ipaddress.ip_address(self.ip.split("%")[0]).is_loopback


def listen_address(host: str, port: int) -> Address:
    """The one address `host` names (IPv6 for a literal with ':', else IPv4)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        found = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise PlugmanError(
            f"cannot listen on {host}: {getattr(exc, 'strerror', None) or exc}",
            where="--host",
            hint="give an IP address of this machine, or a name that resolves to one",
        ) from None
    return Address(found[0][0], found[0][4])


def bind(address: Address) -> socket.socket:
    sock = socket.socket(address.family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address.sockaddr)
    except OSError as exc:
        sock.close()
        where = f"{address.ip}:{address.sockaddr[1]}"
        raise PlugmanError(f"cannot listen on {where}: {exc.strerror or exc}") from exc
    return sock


def mcp_url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}/mcp" if ":" in host else f"http://{host}:{port}/mcp"


def security(address: Address) -> TransportSecuritySettings:
    """DNS-rebinding protection on a loopback address; none elsewhere (see above)."""
    # lazy: mcp takes ~752 ms to import, only this path needs it
    from mcp.server.transport_security import TransportSecuritySettings

    if not address.loopback:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    own = f"[{address.ip}]" if ":" in address.ip else address.ip
    names = list(dict.fromkeys((*LOOPBACK_NAMES, own)))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in names],
        allowed_origins=[f"http://{name}:*" for name in names],
    )


def http_app(
    server: Server[Any],
    address: Address,
    token: str | None,
    stateless: bool,
    limiter: Limiter | None = None,
    oidc: Verifier | None = None,
    events: Events | None = None,
    ready: Callable[[], bool] = lambda: True,
) -> Any:
    """The ASGI app uvicorn serves: the health endpoints (HealthGate), then the SDK's streamable
    HTTP session manager at PATH (McpApp), behind the request inspection (and the rate limits,
    if any), behind the token if any, or behind the OIDC gate and its RFC 9728 metadata; with
    `events` (--redis, stateful), sessions resumable on any replica
    (plugman.runtime.gateway.events)."""
    # lazy: the layers in front of the SDK and the SDK's manager (~750 ms), only over HTTP
    from plugman.runtime.gateway.events import Resume, session_manager
    from plugman.runtime.gateway.inbound import Inspect
    from plugman.runtime.gateway.ratelimit import Limits

    kept = None if stateless else events
    manager = session_manager(
        kept,
        app=server,
        json_response=True,
        stateless=stateless,
        security_settings=security(address),
    )
    web: Any = McpApp(manager)
    if kept is not None:
        web = Resume(web, manager, kept)
    web = web if limiter is None else Limits(web, limiter)
    web = Inspect(web, manager.max_request_body_size, PATH)
    if oidc is not None:
        # lazy: the OIDC gate, only --auth oidc needs it
        from plugman.runtime.gateway.gate import OidcGate, ResourceMetadata, metadata_document

        web = ResourceMetadata(OidcGate(web, oidc), metadata_document(oidc.settings))
    elif token is not None:
        web = BearerGate(web, token)
    return HealthGate(web, ready)


class McpApp:
    """ASGI: the session manager's requests at PATH (with or without a final `/`), its
    lifespan, and 404 for any other path. What the SDK's `streamable_http_app()` serves, without
    its Starlette router and middleware (about a tenth of each call's time on loopback, issue
    36); request bodies are still limited by the manager (RequestBodyLimitMiddleware)."""

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self.manager = manager

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http" and scope["path"].rstrip("/") == PATH:
            await self.manager.handle_request(scope, receive, send)
        elif scope["type"] == "http":
            await _answer(send, 404, _NOT_FOUND, [(b"content-type", b"text/plain")])

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        try:
            async with self.manager.run():
                await send({"type": "lifespan.startup.complete"})
                await receive()  # lifespan.shutdown
        except Exception as exc:
            await send({"type": "lifespan.shutdown.failed", "message": repr(exc)})
            raise
        await send({"type": "lifespan.shutdown.complete"})


class BearerGate:
    """ASGI middleware: only requests carrying the bearer token reach `app` (lifespan events
    always do)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._carries_token(scope["headers"]):
            if scope["type"] == "http":
                scope[SCOPE_KEY] = TOKEN_HOLDER
            await self.app(scope, receive, send)
            return
        await _unauthorized(send)

    def _carries_token(self, headers: list[tuple[bytes, bytes]]) -> bool:
        for name, value in headers:
            if name == b"authorization":
                scheme, _, given = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(given, self.token)
        return False


class HealthGate:
    """ASGI, outermost: the load balancer's probes, answered before authentication and the DNS
    rebinding check, with a body that names nothing of the config (no server, no address).

    - `GET /healthz` (liveness): 200 `ok` while the process answers.
    - `GET /readyz` (readiness): 200 `ready` once `ready()` says so (the config is resolved and
      every backend has finished its first connection attempt, up or failed), 503 `starting`
      before, and 503 `draining` once a SIGTERM began the drain (plugman.runtime.gateway.run).

    Any other request goes on to `app`."""

    def __init__(self, app: Any, ready: Callable[[], bool]) -> None:
        self.app = app
        self.ready = ready
        self.draining = False

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path == "/healthz":
            await _answer(send, 200, b"ok", _PLAIN)
        elif path == "/readyz":
            if self.draining or not self.ready():
                await _answer(send, 503, b"draining" if self.draining else b"starting", _PLAIN)
            else:
                await _answer(send, 200, b"ready", _PLAIN)
        else:
            await self.app(scope, receive, send)


_PLAIN = [(b"content-type", b"text/plain"), (b"cache-control", b"no-store")]
_BODY = json.dumps(
    {"error": "invalid_token", "error_description": "a bearer token is required"}
).encode()
_HEADERS = [
    (b"content-type", b"application/json"),
    (b"content-length", str(len(_BODY)).encode()),
    (b"www-authenticate", b'Bearer realm="plugman-gateway"'),
]


_NOT_FOUND = b"Not Found"


async def _unauthorized(send: Send) -> None:
    await _answer(send, 401, _BODY, _HEADERS)


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    length = [(b"content-length", str(len(body)).encode())]
    given = headers if any(name == b"content-length" for name, _ in headers) else headers + length
    await send({"type": "http.response.start", "status": status, "headers": given})
    await send({"type": "http.response.body", "body": body})

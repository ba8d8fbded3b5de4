"""The gateway's HTTP side: where it listens, who may talk to it, and the ASGI app.

- Address: `--host` is resolved once, before anything starts; the socket is bound to that
  address. A loopback address (127.0.0.0/8, ::1, `localhost`) serves only this machine; any
  other (a LAN address, 0.0.0.0, ::) serves whoever can reach it, so plugman.runtime.gateway_run
  refuses it without `--auth token`.
- DNS rebinding: on a loopback address every request must name a loopback host (`Host`) and,
  if it has one, a loopback origin (`Origin`), or the SDK's transport answers 421 (Host) or
  403 (Origin): a web page whose name an attacker pointed at 127.0.0.1 cannot reach the
  gateway through the user's browser. Elsewhere the names clients use (a load balancer's, a
  DNS name) are not known here, and the token is what keeps others out.
- Bearer token (`BearerGate`): every HTTP request must carry `Authorization: Bearer <token>`,
  compared in constant time (`hmac.compare_digest`); any other answers 401 with
  `WWW-Authenticate: Bearer`. That compare is the only work added per request. No token, and
  no `Authorization` header, is ever logged.
- Sessions: by default the SDK keeps each 2025-era client's session in this process
  (`Mcp-Session-Id`), which lets the gateway push `list_changed` notifications on the client's
  GET stream. `--stateless` serves every request on its own, so any process behind a load
  balancer can answer any request, without sticky routing; 2025-era clients then get no
  `list_changed` notifications (they see changes when they list again). 2026-era clients are
  served per request either way, and get change events on their `subscriptions/listen`.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from plugman.core.errors import PlugmanError

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings

    from plugman.runtime.gateway import Gateway

Receive = Any
Send = Any
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


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


def resolve(host: str, port: int) -> Address:
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


def url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}/mcp" if ":" in host else f"http://{host}:{port}/mcp"


def security(address: Address) -> TransportSecuritySettings:
    """DNS-rebinding protection on a loopback address; none elsewhere (see above)."""
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


def app(gateway: Gateway, address: Address, token: str | None, stateless: bool) -> Any:
    """The ASGI app uvicorn serves: the SDK's streamable HTTP app, behind the token if any."""
    web = gateway.server.streamable_http_app(
        stateless_http=stateless, transport_security=security(address), host=address.ip
    )
    return web if token is None else BearerGate(web, token)


class BearerGate:
    """ASGI middleware: only requests carrying the bearer token reach `app` (lifespan events
    always do)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._carries_token(scope["headers"]):
            await self.app(scope, receive, send)
            return
        await _unauthorized(send)

    def _carries_token(self, headers: list[tuple[bytes, bytes]]) -> bool:
        for name, value in headers:
            if name == b"authorization":
                scheme, _, given = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(given, self.token)
        return False


_BODY = json.dumps(
    {"error": "invalid_token", "error_description": "a bearer token is required"}
).encode()
_HEADERS = [
    (b"content-type", b"application/json"),
    (b"content-length", str(len(_BODY)).encode()),
    (b"www-authenticate", b'Bearer realm="plugman-gateway"'),
]


async def _unauthorized(send: Send) -> None:
    await send({"type": "http.response.start", "status": 401, "headers": _HEADERS})
    await send({"type": "http.response.body", "body": _BODY})

"""The ASGI side of `--auth oidc` (plugman.runtime.gateway.oidc checks the tokens): the RFC 9728
protected-resource metadata, and the gate every other request passes.

- Metadata (`ResourceMetadata`), unauthenticated, at `/.well-known/oauth-protected-resource`
  and under it (`.../mcp`, or the path of the audience URL): `resource` (the audience),
  `authorization_servers` ([the issuer]), `bearer_methods_supported` (["header"]). An MCP
  client that gets a 401 reads it to find the provider to log in with.
- Gate (`OidcGate`): a request must carry one `Authorization: Bearer <JWT>` header; a token in
  the query string or a form body is never read. Without one: 401 `WWW-Authenticate: Bearer
  resource_metadata="<url>"` (RFC 6750 §3.1: no error code when no credentials were sent); with
  a token refused: 401 `Bearer error="invalid_token", resource_metadata="<url>"`, and the
  reason (never the token) goes to the gateway log, at most LOG_BURST lines every LOG_WINDOW
  seconds (then how many more were refused), so a flood of bad tokens cannot fill the disk
  faster than good calls do. The metadata URL is derived from the
  audience when it is an http(s) URL (RFC 9728 §3.1), else from the request's own host. A
  request that passes carries its `Principal` in the ASGI scope (principal.SCOPE_KEY).
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from plugman.runtime.gateway.principal import SCOPE_KEY

if TYPE_CHECKING:
    from plugman.runtime.gateway.oidc import Settings, Verifier

Receive = Any  # ASGI
Send = Any
WELL_KNOWN = "/.well-known/oauth-protected-resource"
LOG_BURST = 20  # refusals logged one by one in each window
LOG_WINDOW = 10.0  # seconds

log = logging.getLogger("plugman.gateway")


def metadata_document(given: Settings) -> bytes:
    """The RFC 9728 metadata document. (Not through the SDK's `ProtectedResourceMetadata`: it
    requires `resource` to be a URL, and an audience some providers put in tokens, such as a
    client id, is not one; the document is the audience as the tokens carry it.)"""
    document = {
        "resource": given.audience,
        "authorization_servers": [given.issuer],
        "bearer_methods_supported": ["header"],
    }
    return json.dumps(document).encode()


def metadata_url(audience: str) -> str | None:
    """Where the metadata of the resource `audience` is (RFC 9728 §3.1), if it is an http(s)
    URL: the well-known path inserted between its host and its path."""
    parts = urlsplit(audience)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}{parts.path.rstrip('/')}"


class ResourceMetadata:
    """ASGI: the metadata document at WELL_KNOWN and below it; every other request to `app`."""

    def __init__(self, app: Any, document: bytes) -> None:
        self.app = app
        self.document = document

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not (path == WELL_KNOWN or path.startswith(WELL_KNOWN + "/")):
            await self.app(scope, receive, send)
        elif scope["method"] in ("GET", "HEAD"):
            headers = [(b"content-type", b"application/json"), (b"cache-control", b"max-age=3600")]
            await _answer(send, 200, self.document, headers)
        else:
            await _answer(send, 405, b"", [(b"allow", b"GET, HEAD")])


class OidcGate:
    """ASGI middleware: only requests with a token the verifier accepts reach `app`, with their
    Principal in the scope (lifespan events always do)."""

    def __init__(self, app: Any, verifier: Verifier) -> None:
        from plugman.runtime.gateway.oidc import RefusedError  # lazy: jwt, only --auth oidc

        self.app = app
        self.verifier = verifier
        self.refused = RefusedError
        self.metadata = metadata_url(verifier.settings.audience)
        self.window = float("-inf")  # when the current log window opened
        self.logged = 0  # refusals in the current window

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        token = _bearer(scope["headers"])
        if token is None:
            self._log(scope, "no bearer token")
            await self._unauthorized(scope, send, None)
            return
        try:
            principal = await self.verifier.verify(token)
        except self.refused as exc:
            self._log(scope, exc.reason)
            await self._unauthorized(scope, send, "invalid_token")
            return
        scope[SCOPE_KEY] = principal
        await self.app(scope, receive, send)

    def _log(self, scope: dict[str, Any], reason: str) -> None:
        now = time.monotonic()
        if now - self.window > LOG_WINDOW:
            if self.logged > LOG_BURST:
                log.warning("%d more requests refused", self.logged - LOG_BURST)
            self.window, self.logged = now, 0
        self.logged += 1
        if self.logged <= LOG_BURST:
            client = scope.get("client") or ("?", 0)
            method, path = scope["method"], scope["path"]
            log.warning("refused %s %r from %s: %s", method, path, client[0], reason)

    async def _unauthorized(self, scope: dict[str, Any], send: Send, error: str | None) -> None:
        where = self.metadata or _own_metadata_url(scope)
        fields = ([f'error="{error}"'] if error else []) + [f'resource_metadata="{where}"']
        challenge = ("Bearer " + ", ".join(fields)).encode()
        body = json.dumps(
            {
                "error": error or "invalid_request",
                "error_description": "a valid bearer token from the issuer is required",
            }
        ).encode()
        headers = [(b"content-type", b"application/json"), (b"www-authenticate", challenge)]
        await _answer(send, 401, body, headers)


def _bearer(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The token of the request's one `Authorization: Bearer` header (None: none, or several)."""
    found = [value for name, value in headers if name == b"authorization"]
    if len(found) != 1:
        return None
    scheme, _, token = found[0].partition(b" ")
    token = token.strip()
    if scheme.lower() != b"bearer" or not token:
        return None
    try:
        return token.decode("ascii")
    except UnicodeDecodeError:
        return None


def _own_metadata_url(scope: dict[str, Any]) -> str:
    host = next((value for name, value in scope["headers"] if name == b"host"), b"")
    text = host.decode("latin-1")
    safe = "".join(c for c in text if c.isalnum() or c in ".-:[]")  # nothing that ends the quote
    return f"{scope.get('scheme', 'http')}://{safe}{WELL_KNOWN}/mcp"


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    given = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": given})
    await send({"type": "http.response.body", "body": body})

"""A real HTTP server on 127.0.0.1, in a thread, answering from a table the test fills in:
an npm registry (packuments and tarballs), an MCP Registry (server.json, /v0.1/servers) or a
private marketplace (https on another loopback address, credentials required, redirects)."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

# path -> (status, content type, body); or a function of the query that returns one
Answer = tuple[int, str, bytes]
Route = Answer | Callable[[dict[str, list[str]]], Answer]


class Site:
    def __init__(self, base: str) -> None:
        self.base = base
        self.routes: dict[str, Route] = {}
        self.requests: list[str] = []  # every path asked for, with its query
        self.authorizations: list[str | None] = []  # the Authorization header of each
        self.token: str | None = None  # when set, only `Bearer <token>` is answered
        self.accepted: set[str] = set()  # when set, only these Authorization values are
        self.redirects: dict[str, str] = {}  # path -> where a 302 sends the client

    def put(self, path: str, body: bytes, kind: str = "application/json", status: int = 200) -> str:
        self.routes[path] = (status, kind, body)
        return self.base + path


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            site.requests.append(self.path)
            site.authorizations.append(self.headers.get("Authorization"))
            parts = urlsplit(self.path)
            route = site.routes.get(parts.path)
            given = self.headers.get("Authorization")
            if (site.token and given != f"Bearer {site.token}") or (
                site.accepted and given not in site.accepted
            ):
                answer: Answer = (401, "application/json", b'{"error": "unauthorized"}')
            elif parts.path in site.redirects:
                self.send_response(302)
                self.send_header("Location", site.redirects[parts.path])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            elif route is None:
                answer = (404, "application/json", b'{"error": "Not found"}')
            elif callable(route):
                answer = route(parse_qs(parts.query))
            else:
                answer = route
            status, kind, body = answer
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@contextmanager
def serving(address: str = "127.0.0.1", tls: tuple[Path, Path] | None = None) -> Iterator[Site]:
    """A site on `address`; with `tls` (certificate, key), over https."""
    site = Site("")
    httpd = ThreadingHTTPServer((address, 0), _handler(site))
    scheme = "http"
    if tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
        httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
        scheme = "https"
    site.base = f"{scheme}://{address}:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield site
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()

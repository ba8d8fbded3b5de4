"""A Bearer token service for the test registry (distribution's `auth: token`), on 127.0.0.1:
it checks Basic credentials and answers a JWT signed with RS256 by openssl, its certificate in
the `x5c` header, granting the scope asked for. Real registries (ghcr.io, Docker Hub) work so."""

from __future__ import annotations

import base64
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.integration.oci.registry import PASSWORD, USER, Registry, start

SERVICE, ISSUER = "plugman-test-registry", "plugman-test-tokens"
TOKEN_AUTH = """\
auth:
  token:
    realm: {realm}
    service: {service}
    issuer: {issuer}
    rootcertbundle: {cert}
"""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _keys(folder: Path) -> tuple[Path, Path]:
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-days", "1", "-subj", "/CN=plugman-test-tokens"],
        check=True, capture_output=True,
    )  # fmt: skip
    return key, cert


class Tokens:
    def __init__(self, key: Path, cert: Path) -> None:
        self.key = key
        der = subprocess.run(
            ["openssl", "x509", "-in", str(cert), "-outform", "DER"],
            check=True, capture_output=True,
        ).stdout  # fmt: skip
        self.x5c = base64.b64encode(der).decode()
        self.requests: list[dict[str, Any]] = []

    def token(self, scopes: list[str]) -> str:
        access = []
        for scope in scopes:
            kind, name, actions = scope.split(":")
            access.append({"type": kind, "name": name, "actions": actions.split(",")})
        now = int(time.time())
        claims = {"iss": ISSUER, "sub": USER, "aud": SERVICE, "exp": now + 300}
        claims |= {"nbf": now - 10, "iat": now, "jti": str(now), "access": access}
        header = {"typ": "JWT", "alg": "RS256", "x5c": [self.x5c]}
        signed = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
        signature = subprocess.run(
            ["openssl", "dgst", "-sha256", "-sign", str(self.key)],
            input=signed.encode(), check=True, capture_output=True,
        ).stdout  # fmt: skip
        return f"{signed}.{_b64(signature)}"


def _handler(tokens: Tokens) -> type[BaseHTTPRequestHandler]:
    expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            query = parse_qs(urlsplit(self.path).query)
            given = self.headers.get("Authorization")
            tokens.requests.append({"query": query, "authorised": given is not None})
            if given != expected:
                self.send_response(401)
                self.end_headers()
                return
            body = json.dumps({"token": tokens.token(query.get("scope", []))}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


def serve(tmp: Path) -> Iterator[tuple[Registry, Tokens]]:
    """A registry behind Bearer token auth, and its token service."""
    folder = tmp / "tokens"
    folder.mkdir(parents=True)
    key, cert = _keys(folder)
    tokens = Tokens(key, cert)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(tokens))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    realm = f"http://127.0.0.1:{server.server_address[1]}/token"
    config = TOKEN_AUTH.format(realm=realm, service=SERVICE, issuer=ISSUER, cert=cert)
    try:
        for found in start(tmp / "token-registry", auth=True, auth_config=config):
            yield found, tokens
    finally:
        server.shutdown()
        server.server_close()
        thread.join()

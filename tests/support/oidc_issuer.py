"""A small, real OIDC issuer of JWT access tokens for tests: an HTTP server on 127.0.0.1 in a
thread, serving discovery and a JWKS, minting tokens with the claims a test chooses, and
rotating its signing key while it runs. (oidc-provider-mock 0.3.4 issues only opaque access
tokens and cannot rotate keys, so the gateway's tests use this instead.)

    with Issuer() as issuer:                    # or Issuer(algorithm="ES256")
        issuer.url                              # http://127.0.0.1:PORT  (the `iss`, and --issuer)
        issuer.token(aud=AUDIENCE, groups=["dev"])  # RS256, kid of the current key, 5-min exp
        issuer.token(aud=AUDIENCE, exp=None)        # a claim given None is left out
        issuer.token(aud=AUDIENCE, headers={"kid": "x"})  # header fields overridden
        issuer.rotate()                         # a new current key; the JWKS lists only it
        issuer.rotate(keep=True)                # ... and also the previous ones
        issuer.jwks_fetches                     # how many times the JWKS was fetched
        issuer.discovery_fetches
        issuer.public_pem()                     # the current key's public PEM (for attacks)

Endpoints: `/.well-known/openid-configuration` (issuer, jwks_uri, ...; 404 when
`discovery=False`), `/.well-known/oauth-authorization-server` (the same document), `/jwks`.
`Issuer(issuer=TEXT)` puts another string in `iss` and the documents, `{url}` in it replaced by
its own URL (e.g. `Issuer(issuer="{url}/")`: a trailing `/`).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

CURVES = {"ES256": ec.SECP256R1, "ES384": ec.SECP384R1}


class SigningKey:
    def __init__(self, algorithm: str) -> None:
        self.algorithm = algorithm
        self.kid = uuid.uuid4().hex[:16]
        if algorithm in CURVES:
            self.private: Any = ec.generate_private_key(CURVES[algorithm]())
        else:
            self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def jwk(self) -> dict[str, Any]:
        algorithm = jwt.get_algorithm_by_name(self.algorithm)
        public = json.loads(algorithm.to_jwk(self.private.public_key()))
        return {**public, "kid": self.kid, "use": "sig", "alg": self.algorithm}

    def public_pem(self) -> bytes:
        return bytes(
            self.private.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )


class Issuer:
    """See the module's docstring."""

    def __init__(
        self, algorithm: str = "RS256", issuer: str | None = None, discovery: bool = True
    ) -> None:
        self.algorithm = algorithm
        self.keys = [SigningKey(algorithm)]
        self.published = list(self.keys)
        self.jwks_fetches = 0
        self.discovery_fetches = 0
        self.discovery = discovery
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.issuer = (issuer or "{url}").replace("{url}", self.url)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Issuer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)

    @property
    def current(self) -> SigningKey:
        return self.keys[-1]

    def rotate(self, keep: bool = False) -> SigningKey:
        """A new signing key, published at once (the old ones too with `keep`)."""
        key = SigningKey(self.algorithm)
        with self.lock:
            self.keys.append(key)
            self.published = [*self.published, key] if keep else [key]
        return key

    def token(
        self,
        key: SigningKey | None = None,
        headers: dict[str, Any] | None = None,
        **claims: Any,
    ) -> str:
        """A token signed by `key` (the current one), with these claims over the defaults
        (iss, sub "alice", iat now, exp in 5 minutes); a claim given None is left out."""
        now = int(time.time())
        base = {"iss": self.issuer, "sub": "alice", "iat": now, "exp": now + 300}
        body = {k: v for k, v in {**base, **claims}.items() if v is not None}
        signer = key or self.current
        header = {"kid": signer.kid, "typ": "at+jwt", **(headers or {})}
        return jwt.encode(body, signer.private, algorithm=signer.algorithm, headers=header)

    def public_pem(self) -> bytes:
        return self.current.public_pem()

    def document(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "jwks_uri": f"{self.url}/jwks",
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": [self.algorithm],
        }

    def answer(self, path: str) -> tuple[int, object]:
        if path == "/jwks":
            with self.lock:
                self.jwks_fetches += 1
                return 200, {"keys": [key.jwk() for key in self.published]}
        if path == "/.well-known/openid-configuration" and self.discovery:
            self.discovery_fetches += 1
            return 200, self.document()
        if path == "/.well-known/oauth-authorization-server":
            self.discovery_fetches += 1
            return 200, self.document()
        return 404, {"error": "not found"}


def _handler(issuer: Issuer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, document = issuer.answer(self.path.split("?")[0])
            body = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return None

    return Handler

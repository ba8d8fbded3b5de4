"""Registry credentials go only to the registry's own host (issue 33, "secrets stay secret").

Attack: a registry (or a hop in front of it) answers the upload POST with a `Location` on
another host, or redirects a download there; a client that sends its `Authorization` header
to every URL the registry names hands the user's registry password to that host. The real
registry here is docker-registry behind htpasswd Basic auth; a forwarding hop on its own port
plays the registry as the client sees it and rewrites upload `Location`s to a second loopback
HTTP server on another port, "the other host", which records what it was sent and stores the
blob in the registry itself (as a storage backend would), so the push completes. Paired: the
same push with the `Location` left on the registry's host sends the credentials there and
works; the archive download path (core.download) keeps the same rule.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar
from urllib.parse import urlsplit

import pytest

from plugman.core.download import download
from plugman.core.errors import FetchError
from plugman.core.oci.client import connect, manifest, push
from plugman.core.oci.reference import parse
from tests.integration.oci.conftest import auth_registry
from tests.integration.oci.registry import PASSWORD, USER, Registry, plugin_tgz

__all__ = ["auth_registry"]  # the fixture: docker-registry behind htpasswd Basic auth

BASIC = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
SKIP = {"host", "content-length", "transfer-encoding", "connection"}


class Hop(ThreadingHTTPServer):
    """A loopback HTTP server that records every request's headers and forwards it to
    `upstream` (adding `add` headers), rewriting the `Location`s it answers with."""

    upstream: str
    add: dict[str, str]
    seen: list[tuple[str, str, dict[str, str]]]
    rewrite: str  # where upload Locations point ("" : this hop itself)
    deny: bool  # answer 401 instead of forwarding (a host that asks for credentials)


class Forward(BaseHTTPRequestHandler):
    server: Hop

    def log_message(self, format: str, *args: object) -> None:
        return

    def _any(self) -> None:
        hop = self.server
        hop.seen.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}))
        size = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(size) if size else None
        if hop.deny:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="other"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in SKIP}
        headers.update(hop.add)
        if body is not None:
            headers["Content-Length"] = str(len(body))
        connection = http.client.HTTPConnection(hop.upstream, timeout=30)
        connection.request(self.command, self.path, body=body, headers=headers)
        answer = connection.getresponse()
        data = answer.read()
        connection.close()
        self.send_response(answer.status)
        own = f"127.0.0.1:{hop.server_address[1]}"
        for key, value in answer.getheaders():
            if key.lower() in SKIP:
                continue
            if key.lower() == "location":
                path = urlsplit(value)._replace(scheme="", netloc="").geturl()
                uploading = "/blobs/uploads/" in path and self.command == "POST"
                value = f"http://{hop.rewrite if uploading and hop.rewrite else own}{path}"
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = _any  # noqa: N815


@contextmanager
def hop(upstream: str, add: dict[str, str] | None = None, deny: bool = False) -> Iterator[Hop]:
    server = Hop(("127.0.0.1", 0), Forward)
    server.upstream, server.add, server.seen = upstream, add or {}, []
    server.rewrite, server.deny = "", deny
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def address(server: Hop) -> str:
    return f"127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def docker_login(tmp_path: Path) -> dict[str, str]:
    """The user's Docker config, holding the registry password for the hop's host (the
    registry as the client sees it) is written per test; this gives the env to push with."""
    return {**os.environ, "DOCKER_CONFIG": str(tmp_path / "docker")}


def login_for(host: str, env: dict[str, str]) -> None:
    folder = Path(env["DOCKER_CONFIG"])
    folder.mkdir(parents=True, exist_ok=True)
    auth = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    (folder / "config.json").write_text(json.dumps({"auths": {host: {"auth": auth}}}))


def test_upload_location_on_another_host_gets_no_credentials(
    auth_registry: Registry, docker_login: dict[str, str]
) -> None:
    """Attack: the registry's upload POST answers `Location: http://OTHER-HOST/...`; the
    blob PUT goes there. Invariant: the registry's credentials go to its own origin only
    (core.oci.transport.Client.same_host): the other host sees no Authorization, and the push
    still completes (the other host needs none)."""
    with (
        hop(auth_registry.host, add={"Authorization": BASIC}) as other,
        hop(auth_registry.host) as front,
    ):
        front.rewrite = address(other)
        ref = f"oci://{address(front)}/team/plugin:1.0.0"
        login_for(address(front), docker_login)
        digest = push(ref, plugin_tgz(), name="plugin", version="1.0.0", env=docker_login)
    puts = [h for method, _, h in other.seen if method == "PUT"]
    assert puts, "the blob upload never reached the other host: the attack did not happen"
    assert all("authorization" not in h for _, _, h in other.seen), other.seen
    authorised = [h for _, _, h in front.seen if h.get("authorization") == BASIC]
    assert authorised, "the registry's own host never got the credentials"
    assert digest.startswith("sha256:")


def test_upload_location_on_the_registry_host_keeps_credentials(
    auth_registry: Registry, docker_login: dict[str, str]
) -> None:
    """The legitimate variant: an upload `Location` on the registry's own host (another
    spelling: `localhost` vs `127.0.0.1` is another host, so this one keeps the same one)
    gets the credentials and the push and the pull work."""
    with hop(auth_registry.host) as front:
        ref = f"oci://{address(front)}/team/plugin:1.0.0"
        login_for(address(front), docker_login)
        digest = push(ref, plugin_tgz(), name="plugin", version="1.0.0", env=docker_login)
        puts = [h for method, path, h in front.seen if method == "PUT" and "uploads" in path]
        assert puts and all(h.get("authorization") == BASIC for h in puts)
        with connect(parse(ref), env=docker_login) as client:
            found, _ = manifest(client, parse(ref))
    assert found == digest


def test_another_host_asking_for_credentials_is_refused_without_them(
    auth_registry: Registry, docker_login: dict[str, str]
) -> None:
    """Attack: the other host the `Location` names answers 401, hoping the client answers
    the challenge with the registry's password. Invariant: it is refused with a located error
    and never given any Authorization."""
    with hop(auth_registry.host, deny=True) as other, hop(auth_registry.host) as front:
        front.rewrite = address(other)
        ref = f"oci://{address(front)}/team/plugin:1.0.0"
        login_for(address(front), docker_login)
        with pytest.raises(FetchError, match="to its own host only") as caught:
            push(ref, plugin_tgz(), name="plugin", version="1.0.0", env=docker_login)
    assert PASSWORD not in str(caught.value) and PASSWORD not in (caught.value.hint or "")
    assert other.seen and all("authorization" not in h for _, _, h in other.seen)


class Redirecting(BaseHTTPRequestHandler):
    target: ClassVar[str] = ""
    seen: ClassVar[list[dict[str, str]]] = []

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        type(self).seen.append({k.lower(): v for k, v in self.headers.items()})
        if self.path.startswith("/go"):
            self.send_response(302)
            self.send_header("Location", type(self).target + "/file")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")


@pytest.mark.parametrize("elsewhere", [True, False], ids=["other-port", "same-origin"])
def test_archive_download_redirect_keeps_credentials_on_their_origin(
    tmp_path: Path, elsewhere: bool
) -> None:
    """Attack: an archive URL with credentials (a marketplace's headers helper or netrc)
    redirects to another port of the same machine (another origin). Invariant
    (core.download._CheckedRedirects, compared by http_auth.origin): the credentials are not
    sent there; a redirect within the origin keeps them (the paired legitimate case)."""

    class First(Redirecting):
        seen: ClassVar[list[dict[str, str]]] = []

    class Second(Redirecting):
        seen: ClassVar[list[dict[str, str]]] = []

    one = ThreadingHTTPServer(("127.0.0.1", 0), First)
    two = ThreadingHTTPServer(("127.0.0.1", 0), Second)
    servers = [one, two]
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
    for thread in threads:
        thread.start()
    try:
        base_one = f"http://127.0.0.1:{one.server_address[1]}"
        base_two = f"http://127.0.0.1:{two.server_address[1]}"
        First.target = base_two if elsewhere else base_one
        secret = {"Authorization": "Bearer archive-planted-token-91c2"}
        download(f"{base_one}/go", tmp_path / "a.bin", secret=secret)
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
    assert (tmp_path / "a.bin").read_bytes() == b"ok"
    assert First.seen[0].get("authorization") == secret["Authorization"]
    if elsewhere:
        assert Second.seen and all("authorization" not in h for h in Second.seen)
    else:
        assert len(First.seen) == 2
        assert First.seen[1].get("authorization") == secret["Authorization"]

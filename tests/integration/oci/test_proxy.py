"""A registry behind a corporate proxy: with HTTPS_PROXY set, plugman reaches an https registry
through the proxy's CONNECT tunnel (TLS stays end to end with the registry, the proxy's own
Basic credentials go to the proxy alone), and NO_PROXY sends it direct.

The registry serves https on 127.0.0.2 with a certificate made here (trusted through
SSL_CERT_FILE): plugman treats only 127.0.0.1, localhost and ::1 as this machine, so
127.0.0.2 stands for a registry elsewhere on any Linux machine. The proxy is a small CONNECT
proxy in this file that records what it was asked for."""

from __future__ import annotations

import base64
import contextlib
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.helpers import run
from tests.integration.oci.registry import Registry, start

ADDRESS = "127.0.0.2"
PROXY_USER, PROXY_PASSWORD = "proxy-user", "proxy-pass-3c9e"


class Proxy:
    """A CONNECT proxy on 127.0.0.1 that wants Basic credentials and records each tunnel."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.tunnels: list[str] = []
        self.refused: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._tunnel, args=(client,), daemon=True).start()

    def _tunnel(self, client: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(4096)
            if not chunk:
                client.close()
                return
            head += chunk
        lines = head.split(b"\r\n\r\n")[0].decode().split("\r\n")
        method, target, _ = lines[0].split(" ")
        wanted = base64.b64encode(f"{PROXY_USER}:{PROXY_PASSWORD}".encode()).decode()
        if method != "CONNECT" or f"Proxy-Authorization: Basic {wanted}" not in lines:
            self.refused.append(lines[0])
            client.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n")
            client.close()
            return
        self.tunnels.append(target)
        host, _, port = target.rpartition(":")
        upstream = socket.create_connection((host, int(port)))
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        for source, sink in ((client, upstream), (upstream, client)):
            threading.Thread(target=_relay, args=(source, sink), daemon=True).start()

    def url(self, password: str = PROXY_PASSWORD) -> str:
        return f"http://{PROXY_USER}:{password}@127.0.0.1:{self.port}"


def _relay(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def tls_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Registry]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", f"/CN={ADDRESS}"),
            *("-addext", f"subjectAltName=IP:{ADDRESS}"),
        ],
        check=True,
        capture_output=True,
    )
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    for name in ("NO_PROXY", "no_proxy", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    yield from start(tmp_path / "registry", auth=False, address=ADDRESS, tls=(cert, key))


def test_an_https_registry_through_a_proxy_and_around_it(
    tls_registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy = Proxy()
    monkeypatch.setenv("HTTPS_PROXY", proxy.url())
    monkeypatch.chdir(tmp_path)
    run("new", "proxied", "--with", "skill")
    target = f"oci://{tls_registry.host}/team/proxied:0.1.0"
    digest = run("publish", "proxied", target)["digest"]
    run("install", target)
    assert set(proxy.tunnels) == {tls_registry.host}, proxy.tunnels
    assert proxy.refused == []

    used = len(proxy.tunnels)
    monkeypatch.setenv("NO_PROXY", ADDRESS)  # around the proxy: straight to the registry
    run("uninstall", "proxied@direct")
    run("install", f"oci://{tls_registry.host}/team/proxied@{digest}")
    assert len(proxy.tunnels) == used


def test_a_proxy_that_refuses_is_a_clear_error(
    tls_registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.integration.helpers import fails

    proxy = Proxy()
    monkeypatch.setenv("HTTPS_PROXY", proxy.url(password="wrong"))
    shown = fails("install", f"oci://{tls_registry.host}/team/none:1.0.0")
    assert f"cannot reach the registry {tls_registry.host}" in shown and "407" in shown
    assert PROXY_PASSWORD not in shown and "wrong" not in shown
    monkeypatch.setenv("HTTPS_PROXY", "socks5://127.0.0.1:1080")
    shown = fails("install", f"oci://{tls_registry.host}/team/none:1.0.0")
    assert "is not an http:// proxy" in shown

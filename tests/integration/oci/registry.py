"""A real OCI registry for tests: the Debian package `docker-registry` (CNCF distribution 2.8)
serving 127.0.0.1 on a free port from a tmp storage folder, optionally behind htpasswd Basic
auth, or behind Bearer token auth with a token service (`tokens.py`) of its own. Without the
binary the fixtures fail (they never skip): run `make setup-apt`."""

from __future__ import annotations

import base64
import gzip
import io
import json
import shutil
import socket
import subprocess
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

BINARY = "docker-registry"
USER, PASSWORD = "ci-bot", "oci-planted-password-5d1e"
CONFIG = """\
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: {storage}
  delete:
    enabled: true
http:
  addr: {host}:{port}
{tls}{auth}"""
TLS = """\
  tls:
    certificate: {cert}
    key: {key}
"""
AUTH = """\
auth:
  htpasswd:
    realm: plugman-test
    path: {htpasswd}
"""


class Registry(NamedTuple):
    host: str  # 127.0.0.1:PORT (or ADDRESS:PORT)
    storage: Path
    auth: bool

    def ref(self, repository: str = "team/plugin", tag: str = "1.0.0") -> str:
        return f"oci://{self.host}/{repository}:{tag}"

    def blob_file(self, digest: str) -> Path:
        hex_ = digest.removeprefix("sha256:")
        return self.storage / "docker/registry/v2/blobs/sha256" / hex_[:2] / hex_ / "data"

    def docker_config(self, folder: Path) -> Path:
        """A Docker config folder whose `auths` hold this registry's user and password."""
        folder.mkdir(parents=True, exist_ok=True)
        auth = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        data = {"auths": {self.host: {"auth": auth}}}
        (folder / "config.json").write_text(json.dumps(data))
        return folder


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _htpasswd(path: Path) -> None:
    tool = shutil.which("htpasswd")
    if tool is None:
        pytest.fail("htpasswd (apache2-utils) is not installed: run `make setup-apt`")
    done = subprocess.run(
        [tool, "-nbB", USER, PASSWORD], capture_output=True, text=True, check=True
    )
    path.write_text(done.stdout)


def start(
    tmp: Path,
    auth: bool,
    auth_config: str | None = None,
    *,
    address: str = "127.0.0.1",
    tls: tuple[Path, Path] | None = None,
) -> Iterator[Registry]:
    """The registry on `address` (https with `tls`: a certificate and its key)."""
    binary = shutil.which(BINARY)
    if binary is None:
        pytest.fail(f"{BINARY} (CNCF distribution) is not installed: run `make setup-apt`")
    storage, config, htpasswd = tmp / "storage", tmp / "config.yml", tmp / "htpasswd"
    storage.mkdir(parents=True)
    if auth and auth_config is None:
        _htpasswd(htpasswd)
    port = _free_port()
    if auth_config is None:
        auth_config = AUTH.format(htpasswd=htpasswd) if auth else ""
    served = TLS.format(cert=tls[0], key=tls[1]) if tls else ""
    text = CONFIG.format(storage=storage, host=address, port=port, tls=served, auth=auth_config)
    config.write_text(text)
    log = (tmp / "registry.out").open("wb")
    process = subprocess.Popen([binary, "serve", str(config)], stdout=log, stderr=log)
    try:
        _wait(process, address, port, tmp / "registry.out")
        yield Registry(f"{address}:{port}", storage, auth)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _wait(process: subprocess.Popen[bytes], address: str, port: int, log: Path) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{BINARY} exited {process.returncode}: {log.read_text()[-2000:]}")
        try:
            socket.create_connection((address, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.02)
    pytest.fail(f"{BINARY} did not answer on {address}:{port} within 15 s")


def plugin_tgz(name: str = "plugin", version: str = "1.0.0", text: str = "Hi") -> bytes:
    """A plugin folder (.claude-plugin/plugin.json and one skill) as a .tar.gz, built here."""
    files = {
        ".claude-plugin/plugin.json": json.dumps({"name": name, "version": version}).encode(),
        "skills/hi/SKILL.md": f"---\nname: hi\ndescription: Says hi\n---\n{text}\n".encode(),
    }
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as archive:
        for path, data in files.items():
            info = tarfile.TarInfo(f"{name}/{path}")
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            archive.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)

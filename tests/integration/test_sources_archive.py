"""archive sources served by a real HTTP server on 127.0.0.1, built in the test, and the
malicious archives (zip-slip, links, bombs, collisions) that must be refused as a whole."""

from __future__ import annotations

import hashlib
import io
import os
import stat
import struct
import tarfile
import threading
import zipfile
from collections.abc import Callable, Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from plugman.core.errors import PlugmanError
from plugman.manifest.model import PluginSource
from plugman.plugins.sources import fetch
from plugman.plugins.sources.extract import Capped

PLUGIN: dict[str, bytes] = {
    ".claude-plugin/plugin.json": b'{"name": "demo", "version": "1.0.0"}',
    "skills/hi/SKILL.md": b"---\nname: hi\n---\nHi\n",
    "bin/run": b"#!/bin/sh\necho run\n",
}
EXECUTABLE = frozenset({"bin/run"})


class Handler(SimpleHTTPRequestHandler):
    """Static files, plus a redirect to a plain-http host and an oversized response."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/redirect-out":
            self.send_response(302)
            self.send_header("Location", "http://example.invalid/plugin.zip")
            self.end_headers()
        elif self.path == "/huge.zip":
            self.send_response(200)
            self.send_header("Content-Length", str(300 * 1024 * 1024))
            self.end_headers()
            self.wfile.write(b"PK\x03\x04")
        else:
            super().do_GET()


class Server(NamedTuple):
    root: Path
    base: str

    def publish(self, name: str, data: bytes) -> str:
        (self.root / name).write_bytes(data)
        return f"{self.base}/{name}"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    www = tmp_path / "www"
    www.mkdir()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(www)))
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield Server(www, f"http://127.0.0.1:{httpd.server_address[1]}")
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    (tmp_path / "victim").mkdir()
    folder = tmp_path / "store"
    folder.mkdir()
    return folder


def zip_of(*entries: tuple[str | zipfile.ZipInfo, bytes], deflate: bool = True) -> bytes:
    buffer = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, data in entries:
            archive.writestr(name, data)
    return buffer.getvalue()


def zip_file(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = mode << 16
    return info


def plugin_zip(prefix: str = "") -> bytes:
    entries = [
        (zip_file(prefix + name, 0o100755 if name in EXECUTABLE else 0o100644), data)
        for name, data in PLUGIN.items()
    ]
    return zip_of(*entries)


def tar_of(*members: tuple[tarfile.TarInfo, bytes | None], mode: str = "w:gz") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as archive:  # type: ignore[call-overload]
        for info, data in members:
            if data is not None:
                info.size = len(data)
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def tar_entry(
    name: str, kind: bytes = tarfile.REGTYPE, mode: int = 0o644, **extra: Any
) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode = kind, mode
    for key, value in extra.items():
        setattr(info, key, value)
    return info


def plugin_tar(prefix: str = "", mode: str = "w:gz") -> bytes:
    members: list[tuple[tarfile.TarInfo, bytes | None]] = []
    if prefix:
        members.append((tar_entry(prefix.rstrip("/"), tarfile.DIRTYPE, 0o755), None))
    for name, data in PLUGIN.items():
        members.append(
            (tar_entry(prefix + name, mode=0o755 if name in EXECUTABLE else 0o644), data)
        )
    return tar_of(*members, mode=mode)


def snapshot(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")}


def check_plugin(root: Path) -> None:
    assert (root / ".claude-plugin" / "plugin.json").read_bytes() == PLUGIN[
        ".claude-plugin/plugin.json"
    ]
    assert stat.S_IMODE((root / "bin" / "run").stat().st_mode) == 0o755
    assert stat.S_IMODE((root / "skills" / "hi" / "SKILL.md").stat().st_mode) == 0o644
    assert stat.S_IMODE((root / "skills").stat().st_mode) == 0o755


# --- happy paths -------------------------------------------------------------------------


def test_zip_at_top_level(server: Server, store: Path) -> None:
    data = plugin_zip()
    dest = store / "stage"
    result = fetch(PluginSource("archive", server.publish("p.zip", data)), dest)
    assert (result.root, result.kind) == (dest, "archive")
    assert result.pin == hashlib.sha256(data).hexdigest()
    check_plugin(dest)
    assert [path.name for path in store.iterdir()] == ["stage"]  # the download was cleaned up


def test_tar_gz_one_folder_down(server: Server, store: Path) -> None:
    url = server.publish("p.tgz", plugin_tar("demo-1.0/"))
    result = fetch(PluginSource("archive", url), store / "stage")
    assert result.root == store / "stage" / "demo-1.0"
    check_plugin(result.root)


def test_zip_one_folder_down_and_plain_tar(server: Server, store: Path) -> None:
    zipped = fetch(PluginSource("archive", server.publish("a.zip", plugin_zip("x/"))), store / "a")
    assert zipped.root == store / "a" / "x"
    tarred = fetch(
        PluginSource("archive", server.publish("b.tar", plugin_tar("", "w"))), store / "b"
    )
    check_plugin(tarred.root)


def test_git_archive_style_zip(server: Server, store: Path) -> None:
    """As `git archive` (and so GitHub) writes them: DOS attributes, unix mode only for +x."""
    entries: list[tuple[str | zipfile.ZipInfo, bytes]] = []
    for folder in ("demo-main/", "demo-main/.claude-plugin/", "demo-main/bin/"):
        info = zipfile.ZipInfo(folder)
        info.create_system, info.external_attr = 0, 0x10
        entries.append((info, b""))
    for name, data in PLUGIN.items():
        info = zip_file("demo-main/" + name, 0o100755)
        if name not in EXECUTABLE:
            info.create_system, info.external_attr = 0, 0
        entries.append((info, data))
    url = server.publish("gh.zip", zip_of(*entries))
    check_plugin(fetch(PluginSource("archive", url), store / "stage").root)


def test_format_is_told_by_content_not_name(server: Server, store: Path) -> None:
    url = server.publish("misnamed.tar.gz", plugin_zip())
    check_plugin(fetch(PluginSource("archive", url), store / "stage").root)


def test_file_url(tmp_path: Path, store: Path) -> None:
    archive = tmp_path / "p.zip"
    archive.write_bytes(plugin_zip())
    check_plugin(fetch(PluginSource("archive", archive.as_uri()), store / "stage").root)


def test_sha256_good_and_bad(server: Server, store: Path, tmp_path: Path) -> None:
    data = plugin_zip()
    url = server.publish("p.zip", data)
    good = hashlib.sha256(data).hexdigest()
    assert fetch(PluginSource("archive", url, sha=good.upper()), store / "ok").pin == good
    before = snapshot(tmp_path)
    with pytest.raises(PlugmanError, match=f"sha256 mismatch: expected {'0' * 64}, got {good}"):
        fetch(PluginSource("archive", url, sha="0" * 64), store / "stage")
    assert snapshot(tmp_path) == before


def test_git_and_macos_debris_are_skipped(server: Server, store: Path) -> None:
    entries = [(f"demo/{name}", data) for name, data in PLUGIN.items()]
    extra = [("demo/.git/config", b"[core]"), ("__MACOSX/demo/._x", b"")]
    url = server.publish("mac.zip", zip_of(*entries, *extra))
    messages: list[str] = []
    result = fetch(PluginSource("archive", url), store / "stage", progress=messages.append)
    assert result.root == store / "stage" / "demo"
    assert not (result.root / ".git").exists()
    assert not (store / "stage" / "__MACOSX").exists()
    assert messages == [f"downloading {url}", "extracting"]


# --- failures that are not attacks --------------------------------------------------------


def refused(tmp_path: Path, store: Path, url: str, match: str) -> None:
    """Fetching `url` fails with `match`, and nothing at all changed under tmp_path."""
    before = snapshot(tmp_path)
    with pytest.raises(PlugmanError, match=match) as caught:
        fetch(PluginSource("archive", url), store / "stage")
    assert caught.value.hint
    assert snapshot(tmp_path) == before
    assert not os.path.lexists(store / "stage")


def test_http_errors_and_bad_urls(server: Server, store: Path, tmp_path: Path) -> None:
    refused(tmp_path, store, f"{server.base}/missing.zip", "HTTP 404")
    refused(tmp_path, store, f"{server.base}/redirect-out", "redirects to")
    refused(tmp_path, store, f"{server.base}/huge.zip", "larger than 256 MiB")
    refused(tmp_path, store, "http://example.com/p.zip", "scheme")
    refused(tmp_path, store, "ftp://example.com/p.zip", "scheme")


def test_not_an_archive_or_damaged(server: Server, store: Path, tmp_path: Path) -> None:
    refused(
        tmp_path,
        store,
        server.publish("page.zip", b"<html>nope</html>"),
        "the download is not a valid archive",
    )
    truncated = plugin_tar()[:-40]
    refused(tmp_path, store, server.publish("cut.tgz", truncated), "damaged")
    two_roots = zip_of(("a/.claude-plugin/plugin.json", b"{}"), ("b/x", b""))
    refused(tmp_path, store, server.publish("two.zip", two_roots), "no plugin found")


# --- the malicious set ------------------------------------------------------------------


def evil_zip(name: str) -> bytes:
    return zip_of((".claude-plugin/plugin.json", b"{}"), (name, b"pwned"))


def evil_tar(info: tarfile.TarInfo, data: bytes | None = b"pwned") -> bytes:
    plugin = tar_entry(".claude-plugin/plugin.json")
    return tar_of((plugin, b"{}"), (info, data))


def nul_zip() -> bytes:
    info = zipfile.ZipInfo("placeholder")
    info.filename = "evil\x00.txt"  # zipfile cuts names at NUL; set the raw name afterwards
    return zip_of((".claude-plugin/plugin.json", b"{}"), (info, b"pwned"))


def many_entries_zip() -> bytes:
    entries = [(f"f/{index}", b"") for index in range(100_000)]
    return zip_of((".claude-plugin/plugin.json", b"{}"), *entries, deflate=False)


def link_tar(name: str, kind: bytes, target: str) -> bytes:
    return evil_tar(tar_entry(name, kind, linkname=target), None)


Builder = Callable[[Path], bytes]
MALICIOUS: dict[str, tuple[Builder, str]] = {
    "zip-slip": (lambda v: evil_zip("../../victim/evil"), r"'\.\.' component"),
    "tar-slip": (lambda v: evil_tar(tar_entry("../../victim/evil")), r"'\.\.' component"),
    "zip-absolute": (lambda v: evil_zip(f"{v}/evil"), "absolute path"),
    "tar-absolute": (lambda v: evil_tar(tar_entry("/tmp/evil")), "absolute path"),
    "backslash": (lambda v: evil_zip("..\\..\\victim\\evil"), "backslash"),
    "drive": (lambda v: evil_zip("C:evil"), "':'"),
    "nul": (lambda v: nul_zip(), "NUL"),
    "tar-symlink": (lambda v: link_tar("passwd", tarfile.SYMTYPE, "/etc/passwd"), "symbolic link"),
    "zip-symlink": (lambda v: evil_zip_link(), "symbolic link"),
    "hardlink": (lambda v: link_tar("hard", tarfile.LNKTYPE, "/etc/passwd"), "hard link"),
    "inner-symlink": (lambda v: link_tar("docs", tarfile.SYMTYPE, "skills"), "symbolic link"),
    "fifo": (lambda v: evil_tar(tar_entry("pipe", tarfile.FIFOTYPE), None), "special file"),
    "case-collision": (
        lambda v: zip_of(("skills/SKILL.md", b"a"), ("skills/skill.md", b"b")),
        "collides",
    ),
    "duplicate": (lambda v: zip_of(("a.md", b"a"), ("a.md", b"b")), "more than once"),
    "file-then-dir": (lambda v: zip_of(("a", b"a"), ("a/b", b"b")), "a file"),
    "many-entries": (lambda v: many_entries_zip(), "more than 20000 entries"),
    "zip-bomb": (lambda v: zip_of(("bomb.bin", bytes(8 << 20))), "compressed more than 200:1"),
    "size-lie": (lambda v: size_lie_zip(), "damaged"),
    "declared-huge": (
        lambda v: evil_tar(tar_entry("big.bin", size=600 << 20), None),
        "more than 512 MiB",
    ),
}


def size_lie_zip() -> bytes:
    """A member whose headers declare 10 bytes but that inflates to 2 MiB."""
    data = bytearray(zip_of((".claude-plugin/plugin.json", b"{}"), ("lie.bin", bytes(2 << 20))))
    local = data.index(b"PK\x03\x04", 1)
    central = data.rindex(b"PK\x01\x02")
    data[local + 22 : local + 26] = struct.pack("<I", 10)
    data[central + 24 : central + 28] = struct.pack("<I", 10)
    return bytes(data)


def evil_zip_link() -> bytes:
    info = zip_file("skills/link", stat.S_IFLNK | 0o777)
    return zip_of((".claude-plugin/plugin.json", b"{}"), (info, b"../../../victim"))


@pytest.mark.filterwarnings("ignore:Duplicate name")
@pytest.mark.parametrize("case", sorted(MALICIOUS))
def test_malicious_archive_is_refused(
    case: str, server: Server, store: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "victim"
    build, match = MALICIOUS[case]
    url = server.publish(f"{case}.bin", build(victim))
    tmp_evil = os.path.lexists("/tmp/evil")
    refused(tmp_path, store, url, match)
    assert list(victim.iterdir()) == []
    assert os.path.lexists("/tmp/evil") == tmp_evil


def test_decompressed_stream_is_capped() -> None:
    capped = io.BufferedReader(Capped(io.BytesIO(bytes(100)), 50))
    with pytest.raises(PlugmanError, match="expands to more than"):
        capped.read()

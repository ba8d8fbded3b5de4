"""Safe extraction of zip and tar archives, written by hand: every member is checked first,
links and special files are refused, sizes are capped, and files are created exclusively."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from plugman.core.errors import FetchError
from plugman.plugins.sources.common import NEW_FILE, write_all
from plugman.plugins.sources.members import (
    MAX_TOTAL,
    REFUSED,
    Checker,
    Member,
    fold,
    name_parts,
    refuse,
)

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

CHUNK = 1024 * 1024
MAX_STREAM = MAX_TOTAL + 64 * 1024 * 1024  # tar data plus headers
DECOMPRESSORS: dict[bytes, Callable[[io.BufferedReader], io.BufferedIOBase]] = {
    b"\x1f\x8b": lambda raw: gzip.GzipFile(fileobj=raw, mode="rb"),
    b"BZh": bz2.BZ2File,
    b"\xfd7zXZ\x00": lzma.LZMAFile,
}
DAMAGED = (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, lzma.LZMAError)


class Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...


def extract(archive: Path, dest: Path, local: str | None = None) -> None:
    """Extract `archive` (zip, tar, tar.gz/bz2/xz, told apart by content) into the new `dest`;
    `local`: the archive is that file of this machine (said so in errors), not a download."""
    with archive.open("rb") as raw:
        head = raw.read(512)
    what = f"the local file {local}" if local else "the download"
    try:
        if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
            _extract_zip(archive, dest)
        elif any(head.startswith(magic) for magic in DECOMPRESSORS) or head[257:262] == b"ustar":
            _extract_tar(archive, dest)
        else:
            raise FetchError(
                f"{what} is not a valid archive: plugman expects a zip or tar file (a tar "
                "may be gzip, bzip2 or xz compressed)",
                hint="give a .zip, .tar, .tar.gz, .tgz, .tar.bz2 or .tar.xz file"
                if local
                else "the archive URL must point at a .zip, .tar, .tar.gz or .tgz file",
            )
    except DAMAGED as exc:
        raise FetchError(f"{what} is a damaged archive: {exc}", hint=REFUSED) from None
    except NotImplementedError as exc:
        raise FetchError(
            f"the archive uses an unsupported feature: {exc}",
            hint="re-create it as a plain zip (deflate) or tar.gz archive",
        ) from None
    _verify(dest)


def _extract_zip(archive: Path, dest: Path) -> None:
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        checker = Checker()
        members = [checker.add(_zip_member(info)) for info in infos]
        writer = Writer(dest)
        for info, member in zip(infos, members, strict=True):
            if member.is_dir:
                writer.write(member, None)
                continue
            with zf.open(info) as source:
                writer.write(member, source)


def _zip_member(info: zipfile.ZipInfo) -> Member:
    unix = info.create_system == 3  # other systems keep DOS attributes, not a mode, there
    name, mode = info.orig_filename, info.external_attr >> 16 if unix else 0
    is_dir = info.is_dir()
    if stat.S_ISLNK(mode):
        raise refuse(name, "is a symbolic link; plugman refuses archives that contain links")
    kind = stat.S_IFMT(mode)
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR) or (kind and (kind == stat.S_IFDIR) != is_dir):
        raise refuse(name, "is not a regular file or folder")
    if info.flag_bits & 0x1:
        raise refuse(name, "is encrypted")
    parts = name_parts(name, is_dir)
    return Member(name, parts, is_dir, info.file_size, info.compress_size, bool(mode & 0o111))


def _extract_tar(archive: Path, dest: Path) -> None:
    checker = Checker()
    with _tar_stream(archive) as tf:
        members = [checker.add(_tar_member(info)) for info in tf]
    writer = Writer(dest)
    with _tar_stream(archive) as tf:
        for index, info in enumerate(tf):
            if index >= len(members) or info.name != members[index].name:
                raise FetchError("the archive changed while it was being read", hint=REFUSED)
            writer.write(members[index], tf.extractfile(info) if info.isreg() else None)


@contextmanager
def _tar_stream(archive: Path) -> Iterator[tarfile.TarFile]:
    """The archive as a forward-only tar stream, decompressed and capped at MAX_STREAM."""
    with ExitStack() as stack:
        raw = stack.enter_context(archive.open("rb"))
        head = raw.peek(8)[:8]
        opener = next(
            (make for magic, make in DECOMPRESSORS.items() if head.startswith(magic)), None
        )
        source: Readable = stack.enter_context(opener(raw)) if opener else raw
        capped = io.BufferedReader(Capped(source, MAX_STREAM))
        yield stack.enter_context(tarfile.open(fileobj=capped, mode="r|"))


def _tar_member(info: tarfile.TarInfo) -> Member:
    if info.issym() or info.islnk():
        kind = "symbolic" if info.issym() else "hard"
        raise refuse(info.name, f"is a {kind} link; plugman refuses archives that contain links")
    if not (info.isreg() or info.isdir()) or info.issparse():
        raise refuse(info.name, "is a device, fifo or other special file")
    parts = name_parts(info.name, info.isdir())
    size = info.size if info.isreg() else 0
    return Member(info.name, parts, info.isdir(), size, None, bool(info.mode & 0o111))


class Capped(io.RawIOBase):
    """A reader that fails once more than `limit` bytes came out of `source` (a tar.gz bomb)."""

    def __init__(self, source: Readable, limit: int) -> None:
        self.source, self.left = source, limit

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        data = self.source.read(min(len(view), self.left + 1))
        self.left -= len(data)
        if self.left < 0:
            raise FetchError(
                f"the archive expands to more than {MAX_STREAM // 2**20} MiB", hint=REFUSED
            )
        view[: len(data)] = data
        return len(data)


def skipped(parts: tuple[str, ...]) -> bool:
    """Repository metadata (`.git`) and macOS zip debris (`__MACOSX/`) are never installed."""
    return any(fold(part) == ".git" for part in parts) or parts[:1] == ("__MACOSX",)


class Writer:
    """Creates members under `dest` (made fresh); counts the bytes actually written."""

    def __init__(self, dest: Path) -> None:
        dest.mkdir(mode=0o700)
        self.dest, self.total = dest, 0

    def write(self, member: Member, source: Readable | None) -> None:
        if skipped(member.parts):
            return
        for depth in range(1, len(member.parts) + member.is_dir):
            self._folder(self.dest.joinpath(*member.parts[:depth]), member.name)
        if not member.is_dir and source is not None:
            self._file(self.dest.joinpath(*member.parts), member, source)

    def _folder(self, path: Path, name: str) -> None:
        try:
            info = path.lstat()
        except FileNotFoundError:
            path.mkdir(mode=0o755)
            path.chmod(0o755)
            return
        if not stat.S_ISDIR(info.st_mode):
            raise refuse(name, "would be written through something that is not a folder")

    def _file(self, path: Path, member: Member, source: Readable) -> None:
        fd = os.open(path, NEW_FILE, 0o600)
        try:
            written = 0
            while chunk := source.read(CHUNK):
                written += len(chunk)
                self.total += len(chunk)
                if written > member.size or self.total > MAX_TOTAL:
                    raise refuse(member.name, "holds more data than the archive declares")
                write_all(fd, chunk)
            if written != member.size:
                raise refuse(member.name, "holds less data than the archive declares")
            os.fchmod(fd, 0o755 if member.executable else 0o644)
        finally:
            os.close(fd)


def _verify(dest: Path) -> None:
    """Only folders and regular files ended up under `dest`; then open it up to 0o755."""
    for folder, dirs, files in os.walk(dest):
        for name in [*dirs, *files]:
            mode = Path(folder, name).lstat().st_mode
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise FetchError(
                    f"unexpected non-regular file {name!r} after extraction", hint=REFUSED
                )
    dest.chmod(0o755)

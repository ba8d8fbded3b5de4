"""File-system helpers every mutating command uses: atomic writes, the lock, tree hashes."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import time
from pathlib import Path
from types import TracebackType

from plugman import faults
from plugman.errors import PlugmanError


def atomic_write(
    path: Path, data: bytes, *, private: bool = False, mode: int | None = None
) -> None:
    """Replace `path` with `data` so readers see the old or the new bytes, never a mix. An
    existing file keeps its permission bits; a new one gets `mode` when given, else 0600 when
    `private` (it can hold secrets), else the umask's default."""
    faults.before_write(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.unlink(missing_ok=True)  # a leftover of a killed run with this pid
    try:
        create = 0o600 if private else 0o666
        with os.fdopen(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, create), "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            temp.chmod(stat.S_IMODE(path.stat().st_mode))
        elif mode is not None:
            temp.chmod(mode)
        temp.replace(path)
    finally:
        temp.unlink(missing_ok=True)
    sync_dir(path.parent)


def file_mode(path: Path) -> int | None:
    """`path`'s permission bits, or None when it does not exist."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return None


def sync_dir(folder: Path) -> None:
    """Make a rename or unlink in `folder` durable."""
    handle = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def remove_tree(path: Path) -> None:
    """Delete a folder (or file, or link) if it is there."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def tree_hash(root: Path) -> str:
    """`sha256:<hex>` of a tree: every path, its kind, exec bit, link target and contents."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*"), key=lambda p: p.relative_to(root).as_posix()):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            digest.update(f"L {rel} {path.readlink()}\n".encode())
        elif path.is_dir():
            digest.update(f"D {rel}\n".encode())
        else:
            executable = "x" if path.stat().st_mode & stat.S_IXUSR else "-"
            digest.update(f"F {rel} {executable} {file_hash(path)}\n".encode())
    return f"sha256:{digest.hexdigest()}"


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class FileLock:
    """An exclusive, process-wide lock on a file (`flock`); waits up to `timeout` seconds.

    The lock file is created empty once and never rewritten or removed, so holding the lock
    changes nothing on disk, and a killed holder releases it with its process.
    """

    def __init__(self, path: Path, timeout: float = 120.0):
        self.path = path
        self.timeout = timeout
        self._handle: int | None = None

    def __enter__(self) -> FileLock:
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(handle)
                    raise PlugmanError(
                        f"another plugman process has held {self.path} for {self.timeout:.0f} s",
                        hint="wait for it to finish, or stop it, then run the command again",
                    ) from None
                time.sleep(0.02)
        self._handle = handle
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._handle is not None:
            os.close(self._handle)  # closing releases the flock
            self._handle = None

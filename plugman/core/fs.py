"""File-system helpers every mutating command uses: atomic writes, the lock, tree hashes."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import stat
import sys
import time
from pathlib import Path
from types import TracebackType

from plugman.core import faults, progress
from plugman.core.errors import PlugmanError


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


# The writes the open transaction of this process holds until its commit
# (`core.transaction.Transaction.stage`): path -> the bytes it will have (None: deleted).
staged: dict[Path, bytes | None] = {}


def current(path: Path) -> bytes | None:
    """`path`'s bytes as this process will leave them: what its open transaction has staged
    for it, else what is on disk (None when absent)."""
    if path in staged:
        return staged[path]
    return read_bytes(path)


def journal_left(folder: Path) -> bool:
    """Whether the journal folder holds a journal (one per transaction, a folder): one stat
    where the file system counts subfolders in a folder's links (2: none), else a listing."""
    try:
        links = folder.stat().st_nlink
    except FileNotFoundError:
        return False
    if links == 2:
        return False
    with os.scandir(folder) as entries:
        return any(True for _ in entries)


def present(path: Path) -> bool:
    """Whether `path` is a file, counting what this process's open transaction has staged."""
    if path in staged:
        return staged[path] is not None
    return path.is_file()


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
    """An exclusive, process-wide lock on a file (`flock`); waits up to `timeout` seconds, and
    after `notice` seconds of waiting says (a warning) who holds it.

    The holder writes its pid and command into the lock file and empties it again on release,
    so holding the lock leaves nothing behind on disk; a killed holder releases the lock with
    its process (what it wrote is overwritten by the next holder).
    """

    def __init__(self, path: Path, timeout: float = 120.0, notice: float = 1.0):
        self.path = path
        self.timeout = timeout
        self.notice = notice
        self._handle: int | None = None

    def __enter__(self) -> FileLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            self._wait(handle)
        except BaseException:
            os.close(handle)
            raise
        self._handle = handle
        os.ftruncate(handle, 0)
        os.pwrite(handle, f"{os.getpid()} {_command()}\n".encode(), 0)
        return self

    def _wait(self, handle: int) -> None:
        start = time.monotonic()
        noticed = False
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                waited = time.monotonic() - start
                if waited > self.timeout:
                    raise PlugmanError(
                        f"{self.holder()} has held {self.path} for {self.timeout:.0f} s",
                        hint="wait for it to finish, or stop it, then run the command again",
                    ) from None
                if not noticed and waited >= self.notice:
                    noticed = True
                    progress.warn(
                        f"waiting for {self.holder()} to finish (it holds {self.path}; "
                        f"giving up after {self.timeout:.0f} s)"
                    )
                time.sleep(0.02)

    def holder(self) -> str:
        """Who holds the lock, as its lock file says: `plugman install (pid 123)`."""
        try:
            pid, _, command = self.path.read_text(encoding="utf-8").strip().partition(" ")
        except (OSError, UnicodeDecodeError):
            pid = command = ""
        if not pid.isdigit():
            return "another plugman process"
        return f"{command or 'plugman'} (pid {pid})"

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._handle is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._handle, 0)  # released: the file is empty again
            os.close(self._handle)  # closing releases the flock
            self._handle = None


def _command() -> str:
    """This process's plugman command, for the lock file: its leading plain words only (never
    an argument that could hold a secret), e.g. `plugman mcp add`."""
    words: list[str] = []
    args = iter(sys.argv[1:])
    for arg in args:
        if arg == "--project":
            next(args, None)
        elif re.fullmatch(r"[a-z][a-z-]*", arg) and len(words) < 2:
            words.append(arg)
        else:
            break
    return " ".join(["plugman", *words])

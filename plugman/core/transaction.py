"""Journaled transactions: every change a command makes is undone unless it all commits.

A transaction writes files (keeping each file's previous bytes in its journal first) and adds
trees to the store (noting each new tree first). `commit` marks the journal done and deletes it;
any failure rolls back. If the process dies, the next command finds the journal and `recover`
rolls an open transaction back (or finishes deleting a committed one's journal): a mutating
command under its lock, a read-only one through `hot` (as SQLite treats a hot journal).

A file the command edits several times (plugman.toml, plugman's state records) is `stage`d: its
edits stay in memory (`fs.current` reads them back) and it is written once, at commit, so a
reader of the file (an agent, git, another plugman) sees its old or its new bytes, never an
edit half way.

Tests kill the process at each journaled step through `plugman.core.faults`.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from plugman.core import fs, progress
from plugman.core.faults import checkpoint
from plugman.core.fs import (
    FileLock,
    atomic_write,
    file_mode,
    read_bytes,
    remove_tree,
    sync_dir,
    tree_hash,
)
from plugman.core.store import Store

JOURNAL = "journal.json"
_commits: list[int] = [0]  # the transactions this process has committed


def commits() -> int:
    """How many transactions this process has committed so far (what an interrupt keeps)."""
    return _commits[0]


def _public(path: Path) -> bool:
    return False


class Transaction:
    """`private(path)` says whether a new file at `path` can hold secrets (then it is created
    0600); every journal backup is 0600, and a restored file gets its old mode back."""

    def __init__(self, journal_dir: Path, store: Store, private: Callable[[Path], bool] = _public):
        self.dir = journal_dir / f"{time.time_ns()}-{os.getpid()}"
        self.store = store
        self.private = private
        self.files: list[dict[str, Any]] = []
        self.trees: list[str] = []
        self.dirs: list[dict[str, Any]] = []
        self.staged: dict[Path, tuple[Path | None, bool | None]] = {}  # path -> prune_to, private
        self.committed = False

    def __enter__(self) -> Transaction:
        self.dir.mkdir(parents=True)
        self._save("open")
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._unstage()
        if error is not None and not self.committed:
            rollback(self.dir, self.store)

    def stage(
        self,
        path: Path,
        data: bytes | None,
        *,
        prune_to: Path | None = None,
        private: bool | None = None,
    ) -> None:
        """`write`, held in memory until `commit` writes it (once, however often it is staged);
        `fs.current(path)` and `fs.present(path)` read it back meanwhile."""
        self.staged[path] = (prune_to, private)
        fs.staged[path] = data

    def _unstage(self) -> None:
        for path in self.staged:
            fs.staged.pop(path, None)
        self.staged.clear()

    def flush(self) -> None:
        """Write what is staged (each file once, journaled first as every write is)."""
        for path, (prune_to, private) in list(self.staged.items()):
            data = fs.staged.pop(path, None)
            del self.staged[path]
            self.write(path, data, prune_to=prune_to, private=private)

    def write(
        self,
        path: Path,
        data: bytes | None,
        *,
        prune_to: Path | None = None,
        private: bool | None = None,
    ) -> None:
        """Set `path` to `data` (None deletes it), keeping its old bytes in the journal first.
        A deletion also removes the folders it leaves empty, up to (not including) `prune_to`.
        A new file is 0600 when `private` (by default: when `self.private(path)`); an existing
        file keeps its mode."""
        if self._first_touch(path):
            before = read_bytes(path)
            backup = None
            if before is not None:
                backup = f"{len(self.files)}.bak"
                atomic_write(self.dir / backup, before, private=True)
            self._journal(path, backup=backup, mode=file_mode(path))
        if data is None:
            path.unlink(missing_ok=True)
            _prune(path.parent, prune_to)
        else:
            atomic_write(path, data, private=self.private(path) if private is None else private)
        checkpoint("write")

    def link(self, path: Path, target: Path | None, *, prune_to: Path | None = None) -> None:
        """Make `path` a symbolic link to `target` (None: remove the link), keeping what was
        there in the journal first: nothing, or a link (its target). A file or folder at `path`
        is never replaced: the caller checks, and this refuses."""
        if path.exists() and not path.is_symlink():
            raise OSError(f"{path} exists and is not a link; left as it is")
        if self._first_touch(path):
            self._journal(path, link=str(path.readlink()) if path.is_symlink() else None)
        if target is None:
            path.unlink(missing_ok=True)
            _prune(path.parent, prune_to)
        else:
            _symlink(path, target)
        checkpoint("write")

    def _first_touch(self, path: Path) -> bool:
        return not any(entry["path"] == str(path) for entry in self.files)

    def _journal(self, path: Path, **before: object) -> None:
        """Note what `path` was before its first change (and the folders a write makes)."""
        entry = {"path": str(path), "made": _first_missing(path.parent), **before}
        self.files.append(entry)
        self._save("open")
        checkpoint("journal")

    def add_tree(self, tree: Path) -> str:
        """Move a staged tree into the store (unless the same content is there); its hash."""
        content_hash = tree_hash(tree)
        target = self.store.path(content_hash)
        if target.exists():
            remove_tree(tree)
            return content_hash
        self.trees.append(content_hash)
        self._save("open")
        checkpoint("journal")
        tree.rename(target)
        sync_dir(target.parent)
        checkpoint("store")
        return content_hash

    def replace_dir(self, target: Path, staged: Path | None) -> None:
        """Put `staged` at `target` (None: remove `target`); the old folder is kept until commit."""
        backup = None
        if target.exists():
            backup = f"{len(self.dirs)}.dir"
        self.dirs.append({"path": str(target), "backup": backup})
        self._save("open")
        checkpoint("journal")
        if backup is not None:
            target.rename(self.dir / backup)
        if staged is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            staged.rename(target)
        checkpoint("write")

    def commit(self) -> None:
        """Mark the journal done, then delete it. From the mark on the change stands: failing
        to delete the journal is a warning, and the next command deletes it. What is staged
        is written first."""
        self.flush()
        self._save("committed")
        self.committed = True
        _commits[0] += 1
        checkpoint("commit")
        discard(self.dir)

    def _save(self, status: str) -> None:
        body = {
            "format": 1,
            "status": status,
            "files": self.files,
            "trees": self.trees,
            "dirs": self.dirs,
        }
        atomic_write(self.dir / JOURNAL, json.dumps(body, indent=1).encode())


def _symlink(path: Path, target: Path | str) -> None:
    """Point `path` at `target` in one step: a new link beside it, renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.unlink(missing_ok=True)
    temp.symlink_to(target)
    temp.replace(path)
    sync_dir(path.parent)


def _first_missing(folder: Path) -> str | None:
    """The highest folder on the way to `folder` that does not exist yet (a write makes it)."""
    if folder.exists():
        return None
    while not folder.parent.exists():
        folder = folder.parent
    return str(folder)


def _prune(folder: Path, stop: Path | None) -> None:
    while stop is not None and folder != stop and stop in folder.parents and folder.is_dir():
        if any(folder.iterdir()):
            return
        folder.rmdir()
        folder = folder.parent


def _deepest(folder: Path) -> Path:
    """`folder`, or its nearest existing parent: a kill inside `mkdir(parents=True)` can leave
    the upper folders of a path made and the lower ones not."""
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    return folder


def rollback(journal: Path, store: Store) -> None:
    """Undo an open transaction from its journal: old bytes back, new trees out."""
    try:
        body = json.loads((journal / JOURNAL).read_text())
    except (OSError, ValueError):
        body = {"status": "open", "files": [], "trees": []}  # died before its first step
    if body.get("status") != "committed":
        for entry in reversed(body.get("files", [])):
            if "link" in entry:
                _restore_link(Path(entry["path"]), entry["link"])
            else:
                _restore(Path(entry["path"]), journal, entry.get("backup"), entry.get("mode"))
            if entry.get("made"):  # folders the write made, gone again
                _prune(_deepest(Path(entry["path"]).parent), Path(entry["made"]).parent)
        for entry in reversed(body.get("dirs", [])):
            _restore_dir(Path(entry["path"]), journal, entry.get("backup"))
        for content_hash in body.get("trees", []):
            remove_tree(store.path(content_hash))
        remove_tree(journal)  # must go: rolling it back again later would undo newer changes
    else:
        discard(journal)


def discard(journal: Path) -> None:
    """Delete a committed journal; if that fails, say so and go on: the next command finds it
    and deletes it (a committed journal is never rolled back, so it changes nothing)."""
    try:
        remove_tree(journal)
    except OSError as exc:
        progress.warn(
            f"could not remove the finished journal {journal}: {exc.strerror or exc}; "
            "the next plugman command removes it"
        )


def _restore_dir(path: Path, journal: Path, backup: str | None) -> None:
    saved = journal / backup if backup else None
    if saved is not None and not saved.exists():
        return  # died before the old folder was moved aside: it is still in place
    remove_tree(path)
    if saved is not None:
        saved.rename(path)


def _restore_link(path: Path, target: str | None) -> None:
    for temp in path.parent.glob(f".{path.name}.*.tmp"):  # a link cut short
        temp.unlink()
    if target is None:
        if path.is_symlink():
            path.unlink()
    else:
        _symlink(path, target)


def _restore(path: Path, journal: Path, backup: str | None, mode: int | None) -> None:
    for temp in path.parent.glob(f".{path.name}.*.tmp"):  # a write cut short
        temp.unlink()
    if backup is None:
        path.unlink(missing_ok=True)
    else:
        atomic_write(path, (journal / backup).read_bytes(), private=True, mode=mode)


def hot(journal_dir: Path, lock: Path, store: Store) -> None:
    """Before a read-only command reads: roll back what a killed plugman left half made (its
    journal), as SQLite does with a hot journal. The lock is taken only for that, and never
    waited for: held, a live command is changing things now, and the reader is told so (what it
    reads may be that command's old or new state, a file at a time)."""
    try:
        handle = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        progress.warn(f"an unfinished change is pending in {journal_dir}: {exc.strerror or exc}")
        return
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress.warn(
                f"a change is in progress ({FileLock(lock).holder()}): what this shows may "
                "change when it finishes"
            )
            return
        try:
            if recover(journal_dir, store):
                progress.warn("rolled back a change a stopped plugman command left unfinished")
        except OSError as exc:
            progress.warn(
                f"a change a stopped plugman left unfinished could not be rolled back "
                f"({exc.strerror or exc}; journal in {journal_dir}); what this shows may be "
                "half made",
            )
    finally:
        os.close(handle)  # releases the lock


def recover(journal_dir: Path, store: Store) -> int:
    """Roll back every transaction a dead process left; how many there were."""
    if not journal_dir.is_dir():
        return 0
    left = sorted(journal_dir.iterdir(), reverse=True)
    for journal in left:
        rollback(journal, store)
    return len(left)

"""One mutating command's unit of work: hold the lock, recover, journal, commit, collect."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from plugman.fs import FileLock
from plugman.paths import Paths
from plugman.state import referenced_hashes
from plugman.store import Store
from plugman.transaction import Transaction, recover


class Session(NamedTuple):
    paths: Paths
    store: Store
    tx: Transaction


@contextmanager
def session(paths: Paths) -> Iterator[Session]:
    """Lock, recover what a killed run left, and run one transaction that commits on return.

    The folders it needs are created once and kept, so an install followed by an uninstall
    leaves PLUGMAN_HOME exactly as it was.
    """
    for folder in (
        paths.config_dir,
        paths.state_dir / "installed",
        paths.journal_dir,
        paths.store_dir,
    ):
        folder.mkdir(parents=True, exist_ok=True)
    store = Store(paths.store_dir)
    with FileLock(paths.state_dir / "lock"):
        recover(paths.journal_dir, store)
        try:
            with Transaction(paths.journal_dir, store, paths.private) as tx:
                yield Session(paths, store, tx)
                tx.commit()
        finally:
            store.collect(referenced_hashes(paths))  # unreferenced trees and staging leftovers

"""One mutating command's unit of work: hold the lock, recover, journal, commit, collect."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from plugman.core import progress
from plugman.core.errors import PlugmanError
from plugman.core.fs import FileLock
from plugman.core.paths import Paths
from plugman.core.state import referenced_hashes
from plugman.core.store import Store
from plugman.core.transaction import Transaction, recover


class Session(NamedTuple):
    paths: Paths
    store: Store
    tx: Transaction


@contextmanager
def session(paths: Paths) -> Iterator[Session]:
    """Lock, recover what a killed run left, and run one transaction that commits on return.

    The folders it needs are created once and kept, so an install followed by an uninstall
    leaves PLUGMAN_HOME exactly as it was. The store's cleanup afterwards never fails the
    command (the change is committed by then, or rolled back): what it cannot do is a warning.
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
            collect(paths, store)


def collect(paths: Paths, store: Store) -> None:
    """Remove unreferenced store trees and staging leftovers; warn about what stays."""
    try:
        keep = referenced_hashes(paths)
    except PlugmanError as exc:  # an unreadable record: what is referenced is unknown
        progress.warn(f"the store was not cleaned up: {exc.message}")
        return
    for folder, failure in store.collect(keep):
        progress.warn(
            f"could not remove {folder}: {failure.strerror or failure}; "
            "it is unused and left in place (the next command tries again)"
        )

"""Rolling back a write whose folders were only partly made: a kill inside
`mkdir(parents=True)` (seen by the random kills of `install` with agents linked) leaves the upper
folders of the path and not the lower ones; rollback removes those too."""

from __future__ import annotations

from pathlib import Path

from plugman.core.store import Store
from plugman.core.transaction import Transaction, rollback


def test_rollback_removes_the_folders_of_a_write_cut_short_inside_mkdir(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "keep.txt").write_text("mine\n")
    target = project / ".gemini" / "commands" / "review.toml"
    tx = Transaction(tmp_path / "journal", Store(tmp_path / "store"))
    tx.dir.mkdir(parents=True)
    tx.write(target, b"prompt = 'x'\n")
    # As the process had died between the two mkdirs: `.gemini` made, `commands` not yet.
    target.unlink()
    target.parent.rmdir()
    assert (project / ".gemini").is_dir()
    rollback(tx.dir, tx.store)
    assert sorted(p.name for p in project.iterdir()) == ["keep.txt"]
    assert not tx.dir.exists()


def test_rollback_keeps_a_folder_that_was_there(tmp_path: Path) -> None:
    (tmp_path / "project" / ".gemini").mkdir(parents=True)
    target = tmp_path / "project" / ".gemini" / "commands" / "review.toml"
    tx = Transaction(tmp_path / "journal", Store(tmp_path / "store"))
    tx.dir.mkdir(parents=True)
    tx.write(target, b"x")
    target.unlink()
    target.parent.rmdir()
    rollback(tx.dir, tx.store)
    assert (tmp_path / "project" / ".gemini").is_dir()


def test_a_staged_file_is_written_once_at_commit(tmp_path: Path) -> None:
    """`stage` keeps a file's edits in memory (`fs.current` reads them back) and the commit
    writes it once; a failure before the commit leaves it untouched and nothing staged."""
    from plugman.core import fs

    target = tmp_path / "plugman.toml"
    target.write_text("old\n")
    with Transaction(tmp_path / "journal", Store(tmp_path / "store")) as tx:
        tx.stage(target, b"one\n")
        tx.stage(target, b"two\n")
        assert target.read_text() == "old\n"
        assert fs.current(target) == b"two\n" and fs.present(target)
        tx.stage(tmp_path / "gone.toml", None)
        assert not fs.present(tmp_path / "gone.toml")
        tx.commit()
    assert target.read_text() == "two\n"
    assert fs.staged == {}
    try:
        with Transaction(tmp_path / "journal", Store(tmp_path / "store")) as tx:
            tx.stage(target, b"three\n")
            raise RuntimeError("refused")
    except RuntimeError:
        pass
    assert target.read_text() == "two\n"
    assert fs.staged == {}


def test_a_hot_journal_is_rolled_back_by_a_reader(tmp_path: Path) -> None:
    """A journal whose process is gone (the lock is free) is rolled back by `hot`, as the
    next mutating command would; with the lock held, it is left to its owner."""
    from plugman.core.fs import FileLock, journal_left
    from plugman.core.transaction import hot

    target = tmp_path / "plugman.toml"
    target.write_text("old\n")
    store = Store(tmp_path / "store")
    assert not journal_left(tmp_path / "journal")
    tx = Transaction(tmp_path / "journal", store)
    tx.dir.mkdir(parents=True)
    tx.write(target, b"half\n")  # then the process dies: the journal stays
    assert journal_left(tmp_path / "journal")
    lock = tmp_path / "lock"
    with FileLock(lock):
        hot(tmp_path / "journal", lock, store)  # held (by this process's other handle)
        assert target.read_text() == "half\n"
    hot(tmp_path / "journal", lock, store)
    assert target.read_text() == "old\n"
    assert not journal_left(tmp_path / "journal")

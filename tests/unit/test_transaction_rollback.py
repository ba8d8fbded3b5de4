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

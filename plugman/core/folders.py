"""The folders plugman created outside its own home (`.codex/`, `.agents/skills/`, …), kept in
`<state>/folders.json`, so that taking its files out again removes exactly the folders it made,
whichever of its files goes last, and never a folder someone else made."""

from __future__ import annotations

import json
from pathlib import Path

from plugman.core.paths import Paths
from plugman.core.state import read_state
from plugman.core.transaction import Transaction

FORMAT = 1


class Folders:
    def __init__(self, paths: Paths):
        self.file = paths.state_dir / "folders.json"
        data = read_state(self.file, "move it away (plugman then leaves its empty folders)") or {}
        self.made: set[str] = set(data.get("folders", []))
        self.before = self._bytes()

    def note(self, file: Path) -> None:
        """Before writing `file`: remember the folders the write is about to create."""
        folder = file.parent
        while not folder.exists():
            self.made.add(str(folder))
            folder = folder.parent

    def stop(self, file: Path, given: Path | None = None) -> Path:
        """Where pruning after deleting `file` stops: the first folder above it plugman did not
        create; or `given`, when that is higher (a record from before this one)."""
        stop = file.parent
        while str(stop) in self.made:
            stop = stop.parent
        if given is not None and given in stop.parents:
            return given
        return stop

    def save(self, tx: Transaction) -> None:
        """Write the record in `tx` (folders gone since are forgotten)."""
        self.made = {f for f in self.made if Path(f).is_dir()}
        data = self._bytes()
        if data != self.before:
            tx.stage(self.file, data)

    def _bytes(self) -> bytes | None:
        live = sorted(f for f in self.made if Path(f).is_dir())
        if not live:
            return None
        return (json.dumps({"format": FORMAT, "folders": live}, indent=2) + "\n").encode()

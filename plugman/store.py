"""The content-addressed, write-once store of plugin trees (`<data>/store/<sha256>/`)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from plugman.fs import remove_tree


class Store:
    def __init__(self, root: Path):
        self.root = root
        self.staging = root / ".staging"

    def stage(self) -> Path:
        """A fresh, empty staging folder on the store's file system (so moves are renames)."""
        self.staging.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(dir=self.staging))

    def path(self, content_hash: str) -> Path:
        return self.root / content_hash.removeprefix("sha256:")

    def hashes(self) -> set[str]:
        if not self.root.is_dir():
            return set()
        return {f"sha256:{p.name}" for p in self.root.iterdir() if not p.name.startswith(".")}

    def collect(self, keep: set[str]) -> list[str]:
        """Remove every tree no record refers to, and all staging leftovers; what was removed."""
        removed = sorted(self.hashes() - keep)
        for content_hash in removed:
            remove_tree(self.path(content_hash))
        if self.staging.is_dir():
            for leftover in self.staging.iterdir():
                remove_tree(leftover)
        return removed

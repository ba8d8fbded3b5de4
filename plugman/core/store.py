"""The content-addressed, write-once store of plugin trees (`<data>/store/<sha256>/`)."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from plugman.core.fs import remove_tree

LOADED = ".loaded"  # <store>/.loaded/<sha256>/: caches of each tree's load, outside the tree


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

    def loaded(self, content_hash: str) -> Path:
        """The folder kept beside the tree `content_hash` for what loading it gives
        (plugman.manifest.stored), outside the hashed tree; removed with the tree."""
        return self.root / LOADED / content_hash.removeprefix("sha256:")

    def hashes(self) -> set[str]:
        if not self.root.is_dir():
            return set()
        return {f"sha256:{p.name}" for p in self.root.iterdir() if not p.name.startswith(".")}

    def collect(self, keep: set[str]) -> list[tuple[Path, OSError]]:
        """Remove every tree no record refers to, and all staging leftovers. A tree that cannot
        be removed stays (the next collection tries again); each such tree with its error."""
        unused = [self.path(h) for h in sorted(self.hashes() - keep)]
        leftovers = list(self.staging.iterdir()) if self.staging.is_dir() else []
        loaded = self.root / LOADED
        if loaded.is_dir():
            kept = {h.removeprefix("sha256:") for h in keep}
            leftovers += [p for p in loaded.iterdir() if p.name not in kept]
        failed: list[tuple[Path, OSError]] = []
        for folder in unused + leftovers:
            try:
                remove_tree(folder)
            except OSError as exc:
                failed.append((folder, exc))
        with contextlib.suppress(OSError):  # no tree left to cache: no trace of the caches
            loaded.rmdir()
        return failed

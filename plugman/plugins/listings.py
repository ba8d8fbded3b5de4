"""The rows of `plugman outdated` and `plugman search`: typed, with the JSON each one shows."""

from __future__ import annotations

from typing import Any, NamedTuple


class Outdated(NamedTuple):
    """An installed plugin whose catalog offers a different tree, or one that cannot be checked
    (with why, in `problem`)."""

    id: str
    scope: str
    version: str
    available: str | None  # the version the catalog offers now
    problem: str | None = None
    content_hash: str | None = None  # what is installed
    available_hash: str | None = None  # what the catalog offers

    def as_json(self) -> dict[str, Any]:
        row = {"id": self.id, "scope": self.scope, "version": self.version}
        if self.problem is not None:
            return {**row, "available": None, "problem": self.problem}
        hashes = {"content_hash": self.content_hash, "available_hash": self.available_hash}
        return {**row, "available": self.available, **hashes}


class SearchHit(NamedTuple):
    """A catalog entry a search query matches."""

    id: str
    version: str | None
    description: str | None

    def as_json(self) -> dict[str, Any]:
        return self._asdict()

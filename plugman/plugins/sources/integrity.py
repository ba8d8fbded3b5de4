"""Checking a downloaded npm tarball before anything is extracted: its SRI integrity (the
strongest of sha512, sha384 and sha256 it names), or, only when the registry gives none, its
sha1 `shasum`, with a warning."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

from plugman.core import progress as notes
from plugman.core.errors import FetchError

ALGORITHMS = ("sha512", "sha384", "sha256")  # strongest first
REFUSED = "nothing was extracted or installed"


def verify(file: Path, what: str, dist: dict[str, Any], pinned: str | None) -> str:
    """Check the tarball against the lock's integrity, else the registry's; its sha512 SRI."""
    expected = pinned or dist.get("integrity")
    whose = "plugman.lock pins" if pinned else "the registry publishes"
    if isinstance(expected, str) and expected.strip():
        algorithm, want = strongest(expected, what)
        got = _digest(file, algorithm)
        if got != want:
            raise FetchError(
                f"integrity check failed for npm package {what}: its tarball has {algorithm} "
                f"{got}, but {whose} {algorithm}-{want}",
                hint=f"the tarball is not the one {whose}; {REFUSED}",
            )
    else:
        shasum = dist.get("shasum")
        if not isinstance(shasum, str) or not shasum.strip():
            raise FetchError(
                f"the registry gives no integrity and no shasum for npm package {what}",
                hint=f"plugman installs only a tarball it can verify; {REFUSED}",
            )
        got = hashlib.sha1(file.read_bytes(), usedforsecurity=False).hexdigest()
        if got != shasum.strip().lower():
            raise FetchError(
                f"shasum check failed for npm package {what}: its tarball has sha1 {got}, "
                f"but the registry publishes {shasum.strip()}",
                hint=f"the tarball is not the one the registry published; {REFUSED}",
            )
        notes.warn(
            f"npm package {what}: the registry gives no integrity (SRI); checked against its "
            "sha1 shasum only"
        )
    return "sha512-" + _digest(file, "sha512")


def strongest(sri: str, what: str) -> tuple[str, str]:
    """The strongest (algorithm, base64 digest) of an SRI string plugman can check."""
    found: dict[str, str] = {}
    for item in sri.split():
        algorithm, _, digest = item.partition("-")
        found.setdefault(algorithm.lower(), digest.split("?", 1)[0])
    for algorithm in ALGORITHMS:
        if found.get(algorithm):
            return algorithm, found[algorithm]
    raise FetchError(
        f"npm package {what}: integrity {sri!r} names no sha512, sha384 or sha256 digest",
        hint=f"plugman installs only a tarball it can verify; {REFUSED}",
    )


def _digest(file: Path, algorithm: str) -> str:
    digest = hashlib.new(algorithm)
    with file.open("rb") as handle:
        while chunk := handle.read(1024 * 1024):
            digest.update(chunk)
    return base64.b64encode(digest.digest()).decode()

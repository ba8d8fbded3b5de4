"""An example plugin source kind, `dir`: a plain folder on this machine, installed as a snapshot
of its files and pinned by a hash of their content.

A marketplace lists it as `{"source": "dir", "folder": "/path/to/plugin"}` (a relative folder
is read from the marketplace's root); `plugman install dir+PATH` names one on the command
line. Its lock entry is `{type = "dir", folder = "…", tree_sha256 = "…"}`, and installing from
the lock (`plugman sync --frozen`) refuses a folder whose files changed since.

What a source-kind author implements (`plugman.api.SourceKind`, returned by a `@hookimpl`-marked
`plugman_sources()` in a module named under the `plugman` entry-point group):

- `fetch(source, dest, base, progress) -> (plugin folder, pin)`, given to the constructor with
  `kinds` (the marketplace `source` values it takes) and `location` (the key of a marketplace
  entry's source object that names what to fetch). plugman removes `dest` if it raises.
- Overridden in a subclass where the defaults do not fit: `lock_fields` / `from_lock` (the lock
  entry, in the kind's own field names, and back: a `LockedSource`, read with `get`),
  `pin_of`, `describe` (what `plugman info` says), `names_local_file` (a remote marketplace
  may not list such a source), `plugin_name` (the name of a plugin without a manifest) and
  `claim` (an install spec it takes, here `dir+PATH`). `version_of` (a version from the pin)
  and `follow` (a moving ref: a snapshot follows none) are left to their defaults.

Errors are `plugman.api.FetchError` with a hint: plugman shows them as it shows its own.

Like the whole extension, this module imports from `plugman.api` only (plugman's public,
versioned names; tests/integration/test_example_kit.py checks it).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from plugman.api import (
    FetchError,
    LockedSource,
    LockFields,
    PluginSource,
    Progress,
    SourceKind,
    hookimpl,
    pinned,
)

KIND = "dir"
PREFIX = "dir+"  # `plugman install dir+PATH`
SKIPPED = frozenset({".git"})  # a working folder's repository is not part of the snapshot


def fetch_dir(
    source: PluginSource, dest: Path, base: Path | None, progress: Progress
) -> tuple[Path, str | None]:
    """Copy the folder's files into `dest`; their content hash is the pin, and a pinned
    source (from the lock, or an entry's `sha256`) must still hash to it."""
    folder = _folder(source.location, base)
    if progress:
        progress(f"copying {folder}")
    digest = _snapshot(folder, dest)
    if source.sha and source.sha != digest:
        raise FetchError(
            f"the folder {folder} changed since it was pinned: its files hash to {digest}, "
            f"not {source.sha}",
            hint="run plugman lock (or install it again) to accept its new content",
        )
    return dest, digest


def _folder(location: str, base: Path | None) -> Path:
    path = Path(location).expanduser()
    if not path.is_absolute():
        if base is None:
            raise FetchError(
                f"the dir source {location!r} is relative, and no marketplace holds it",
                hint="give the folder's absolute path",
            )
        path = base / path
    if not path.is_dir():
        raise FetchError(f"the folder {path} does not exist", hint="check the dir source's path")
    return path


def _snapshot(folder: Path, dest: Path) -> str:
    """Copy the plain files and folders under `folder` into `dest` (a new folder); the sha256
    over each one's relative path, executable bit and content. A symbolic link is refused: a
    snapshot holds the folder's own files only."""
    tree = hashlib.sha256()
    dest.mkdir()
    for path in sorted(folder.rglob("*")):  # a folder sorts before what it holds
        rel = path.relative_to(folder)
        if SKIPPED.intersection(rel.parts):
            continue
        if path.is_symlink():
            raise FetchError(
                f"{rel.as_posix()} in {folder} is a symbolic link",
                hint="a dir source copies plain files only; replace the link with its target",
            )
        target = dest / rel
        if path.is_dir():
            target.mkdir()
            tree.update(b"d " + rel.as_posix().encode() + b"\0")
            continue
        data = path.read_bytes()
        executable = bool(path.stat().st_mode & 0o111)
        target.write_bytes(data)
        target.chmod(0o755 if executable else 0o644)
        mark = b"x " if executable else b"f "
        tree.update(mark + rel.as_posix().encode() + b"\0" + hashlib.sha256(data).digest())
    return tree.hexdigest()


class Dir(SourceKind):
    """The `dir` source kind: its own lock fields, words, locality and install spec."""

    def lock_fields(
        self, source: PluginSource, pin: str | None, marketplace_commit: str | None
    ) -> LockFields:
        return {"folder": source.location} | ({"tree_sha256": pin} if pin else {})

    def from_lock(self, locked: LockedSource) -> PluginSource:
        return PluginSource(KIND, str(locked["folder"]), sha=self.pin_of(locked))

    def pin_of(self, locked: LockedSource) -> str | None:
        return locked.get("tree_sha256") or None

    def describe(self, locked: LockedSource, marketplace: str | None) -> str:
        text = f"snapshot of the folder {locked.get('folder')}"
        return pinned(
            text + (f" listed by {marketplace}" if marketplace else ""), self.pin_of(locked)
        )

    def names_local_file(self, source: PluginSource) -> bool:
        return True  # always a folder on this machine

    def plugin_name(self, source: PluginSource) -> str:
        return Path(source.location).name or "plugin"

    def claim(self, text: str, cwd: Path) -> PluginSource | None:
        if not text.startswith(PREFIX):
            return None
        return PluginSource(KIND, str((cwd / Path(text[len(PREFIX) :]).expanduser()).resolve()))


@hookimpl
def plugman_sources() -> list[SourceKind]:
    return [Dir((KIND,), fetch_dir, location="folder")]

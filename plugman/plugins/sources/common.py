"""Shared pieces of the source fetchers: the error type, path checks and clean-up."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from plugman.core.errors import FetchError
from plugman.manifest.plugin import MANIFEST_DIRS, has_components, manifest_file

CONTROL = re.compile(r"[\x00-\x1f\x7f]")
DRIVE = re.compile(r"^[A-Za-z]:")
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW


def relative_parts(text: str, what: str) -> tuple[str, ...]:
    """The components of a relative path that must stay inside its root ('' or '.' is the root).

    Refuses absolute paths, drive letters, backslashes, `..` and control characters."""
    if CONTROL.search(text):
        raise FetchError(
            f"{what} {text!r} contains a control character",
            hint="fix the path in the plugin's source",
        )
    if text.startswith(("/", "\\", "~")) or DRIVE.match(text) or "\\" in text:
        raise FetchError(
            f"{what} {text!r} is not a relative path",
            hint="use a path relative to the root, with '/' separators",
        )
    parts = tuple(part for part in text.split("/") if part not in ("", "."))
    if ".." in parts:
        raise FetchError(
            f"{what} {text!r} leaves its root",
            hint="only the plugin's own folder is installed; '..' is not allowed",
        )
    return parts


def inside(path: str | Path, root: str | Path) -> bool:
    """Whether `path` is `root` or below it (both taken as given, no symlinks resolved)."""
    path, root = os.path.normpath(path), os.path.normpath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` to the file descriptor (os.write may write less)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@contextmanager
def scratch(dest: Path, suffix: str) -> Iterator[Path]:
    """An empty file beside `dest` for a download (on the same disk as the store), removed
    afterwards whatever happens."""
    handle, name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=suffix, dir=dest.parent)
    os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
    finally:
        temporary.unlink(missing_ok=True)


def remove(path: Path) -> None:
    """Delete a file, link or folder tree if it is there; never follows a link."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def looks_like_plugin(folder: Path) -> bool:
    """A manifest (any known format) or a default component folder is present."""
    if any((folder / name).is_dir() for name in MANIFEST_DIRS):
        return True
    return manifest_file(folder)[0] != "folders" or has_components(folder)


def plugin_root(dest: Path, what: str) -> Path:
    """`dest` when it holds the plugin, else its single top-level folder when that does."""
    if looks_like_plugin(dest):
        return dest
    entries = list(dest.iterdir())
    single = entries[0] if len(entries) == 1 else None
    if single and single.is_dir() and not single.is_symlink() and looks_like_plugin(single):
        return single
    raise FetchError(
        f"no plugin found in {what}",
        hint="'.claude-plugin/' (or plugin.json, skills/, ...) must be at the top level "
        "or one folder down",
    )

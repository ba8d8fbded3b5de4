"""`path` sources: copy a folder of the marketplace, never following a link out of it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from plugman.core.errors import FetchError
from plugman.plugins.sources.common import (
    NEW_FILE,
    NOFOLLOW,
    inside,
    relative_parts,
    write_all,
)

SKIPPED = frozenset({".git"})
CHUNK = 1024 * 1024


def source_folder(location: str, base: Path | None) -> Path:
    """The folder a `path` source names; with a `base` it must stay inside it."""
    if base is None:
        folder = Path(location).expanduser().absolute()
    else:
        folder = base.joinpath(*relative_parts(location, "source path"))
        real = os.path.realpath(folder)
        if not inside(real, os.path.realpath(base)):
            raise FetchError(
                f"source path {location!r} leads outside the marketplace (to {real})",
                hint="a relative plugin source must be a folder inside the marketplace",
            )
    if not folder.is_dir():
        raise FetchError(
            f"plugin folder {str(folder)!r} does not exist or is not a folder",
            hint="check the plugin's `source` path in the marketplace",
        )
    return folder


def copy_plugin(location: str, base: Path | None, dest: Path) -> Path:
    """Copy the plugin folder into the new folder `dest`; return `dest`."""
    root = Path(os.path.realpath(source_folder(location, base)))
    dest.mkdir(mode=0o755)
    dest.chmod(0o755)
    _copy_dir(root, root, dest)
    return dest


def _copy_dir(root: Path, here: Path, target: Path) -> None:
    with os.scandir(here) as scan:
        entries = sorted(scan, key=lambda item: item.name)
    for entry in entries:
        if entry.name in SKIPPED:
            continue
        mode = entry.stat(follow_symlinks=False).st_mode
        source, copy = here / entry.name, target / entry.name
        if stat.S_ISLNK(mode):
            if _stays_inside(source, root, root):
                copy.symlink_to(os.path.relpath(_lexical(source), here))
        elif stat.S_ISDIR(mode):
            copy.mkdir(mode=0o755)
            copy.chmod(0o755)
            _copy_dir(root, source, copy)
        elif stat.S_ISREG(mode):
            copy_file(source, copy, executable=bool(mode & 0o111))
        # sockets, fifos and devices are not plugin content: skipped


def copy_file(source: Path, target: Path, *, executable: bool) -> None:
    """Copy one regular file (never through a link) with mode 0o755 or 0o644."""
    reader = os.open(source, os.O_RDONLY | NOFOLLOW)
    try:
        if not stat.S_ISREG(os.fstat(reader).st_mode):
            raise FetchError(f"{str(source)!r} changed while it was being copied", hint="try again")
        out = os.open(target, NEW_FILE, 0o600)
        try:
            while chunk := os.read(reader, CHUNK):
                write_all(out, chunk)
            os.fchmod(out, 0o755 if executable else 0o644)
        finally:
            os.close(out)
    finally:
        os.close(reader)


def prune_links(root: Path) -> None:
    """Delete the links under `root` that lead outside it (as a copy would have skipped them)."""
    real_root = Path(os.path.realpath(root))
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(folder, name)
            if path.is_symlink() and not _stays_inside(path, real_root, root):
                path.unlink()


def _lexical(link: Path) -> str:
    """Where a link points, by its text alone."""
    return os.path.normpath(link.parent / link.readlink())


def _stays_inside(link: Path, real_root: Path, root: Path) -> bool:
    return inside(_lexical(link), root) and inside(os.path.realpath(link), real_root)

"""`plugman pack`: a plugin folder as a reproducible .tar.gz, the one artifact every way of
distributing a plugin is built on (a file to attach to a release, an `archive` source, an OCI
layer).

Reproducible means the same bytes from the same content, on every run and every machine:
members sorted by path, every mtime the same (0, or SOURCE_DATE_EPOCH when set), owner 0:0
with empty names, modes 0644 (0755 for a file with any execute bit, and for folders), and a
gzip header with mtime 0 and no file name. What is packed is what install would accept
(plugman.plugins.sources.extract refuses links): a link that stays in the folder is stored
as what it points at; one that leaves it (or loops) refuses the whole pack. Repository
metadata and caches (`.git`, `__pycache__`, `.DS_Store`, ...) are left out.

The plugin is validated first, with the same loaders `plugman validate` uses; an invalid one
is refused with every finding (plugman.manifest.validate.InvalidPluginError).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import tarfile
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import NamedTuple

from plugman.core import fs
from plugman.core.errors import FetchError, PlugmanError, UsageError
from plugman.manifest.diagnostics import Diagnostic
from plugman.manifest.validate import valid_plugin
from plugman.plugins.sources.members import MAX_ENTRIES, MAX_TOTAL, name_parts

# Never plugin content: version control, editor and OS debris, Python and tool caches.
SKIPPED = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "_darcs",
        ".jj",
        "CVS",
        ".DS_Store",
        "Thumbs.db",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
    }
)
SKIPPED_SUFFIXES = (".pyc", ".pyo", ".swp")
FILE_MODE, EXEC_MODE = 0o644, 0o755


class Packed(NamedTuple):
    """A packed plugin: the .tar.gz bytes and what they hold."""

    data: bytes  # the .tar.gz
    name: str
    version: str | None  # plugin.json's, when it has one
    description: str | None
    sha256: str  # of `data`, hex
    files: tuple[str, ...]  # the files packed, as archive paths
    warnings: tuple[Diagnostic, ...] = ()  # what validation found short of an error
    output: Path | None = None  # the file written (pack_to)

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def filename(self) -> str:
        """The default file name: `{name}-{version}.tgz` (`{name}.tgz` without a version)."""
        return f"{self.name}-{self.version}.tgz" if self.version else f"{self.name}.tgz"


class _Member(NamedTuple):
    name: str  # the archive path
    path: Path | None  # the file to read (None: a folder)
    executable: bool


def pack(
    directory: Path,
    *,
    strict: bool = False,
    mtime: int | None = None,
    exclude: Collection[Path] = (),
) -> Packed:
    """Validate the plugin in `directory` and pack it. `strict`: warnings refuse it too;
    `mtime`: every member's (default: SOURCE_DATE_EPOCH, else 0); `exclude`: paths left out
    (the output file, when it is written inside the folder)."""
    plugin, found = valid_plugin(directory, strict=strict)
    root = Path(os.path.realpath(directory))
    skip = {os.path.realpath(path) for path in exclude}
    members = list(_walk(root, root, "", (str(root),), skip))
    _check(members)
    data = _archive(members, source_date_epoch() if mtime is None else mtime)
    return Packed(
        data=data,
        name=plugin.name,
        version=plugin.version,
        description=plugin.description,
        sha256=hashlib.sha256(data).hexdigest(),
        files=tuple(m.name for m in members if m.path is not None),
        warnings=tuple(found),
    )


def pack_to(directory: Path, output: Path | None = None, *, strict: bool = False) -> Packed:
    """Pack the plugin in `directory` into the file `output` (default: `Packed.filename` in
    the working directory), written atomically; the output file itself is never packed."""
    packed = pack(directory, strict=strict, exclude=[output] if output else [])
    if output is None:
        output = Path.cwd() / packed.filename
        if output.name in packed.files and output.resolve().parent == directory.resolve():
            packed = pack(directory, strict=strict, exclude=[output])  # an earlier pack's
    if output.is_dir():
        raise UsageError(f"{output} is a folder", hint="pass -o FILE, the archive to write")
    fs.atomic_write(output, packed.data, mode=FILE_MODE)
    return packed._replace(output=output)


def source_date_epoch() -> int:
    """SOURCE_DATE_EPOCH (reproducible-builds.org) when set, else 0."""
    value = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not value:
        return 0
    if not value.isdigit() or int(value) >= 8**11:  # a tar header holds 11 octal digits
        raise UsageError(
            f"SOURCE_DATE_EPOCH={value!r} is not a number of seconds since 1970",
            hint="set it to an integer such as $(git log -1 --format=%ct), or unset it",
        )
    return int(value)


def _walk(
    root: Path, here: Path, prefix: str, chain: tuple[str, ...], skip: set[str]
) -> Iterator[_Member]:
    """Every member under `here` (archive path `prefix`), sorted, links followed inside
    `root`; `chain` is the real folders being walked (a link back into one is a loop)."""
    with os.scandir(here) as scan:
        entries = sorted(scan, key=lambda entry: entry.name)
    for entry in entries:
        name = f"{prefix}{entry.name}"
        path = here / entry.name
        if _skipped(entry.name) or os.path.realpath(path) in skip:
            continue
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISLNK(mode):
            path, mode = _followed(root, path, name, chain)
        if stat.S_ISDIR(mode):
            real = os.path.realpath(path)
            yield _Member(name + "/", None, True)
            yield from _walk(root, Path(real), name + "/", (*chain, real), skip)
        elif stat.S_ISREG(mode):
            yield _Member(name, path, bool(mode & 0o111))
        # sockets, fifos and devices are not plugin content: left out, as install leaves them


def _skipped(name: str) -> bool:
    return name in SKIPPED or name.endswith(SKIPPED_SUFFIXES)


def _followed(root: Path, link: Path, name: str, chain: tuple[str, ...]) -> tuple[Path, int]:
    """Where a link inside the plugin leads, and its mode; PlugmanError when it leads out of
    the plugin, nowhere, or into a folder that holds it (a loop)."""
    real = os.path.realpath(link)
    if not (real == str(root) or real.startswith(str(root) + os.sep)) or real in chain:
        what = "loops back into a folder that holds it" if real in chain else "leads outside it"
        raise PlugmanError(
            f"{name} is a link that {what} (to {real})",
            where=str(root),
            hint="a packed plugin holds only its own files: copy what the link points at into "
            "the plugin, or remove the link",
        )
    try:
        return Path(real), Path(real).stat().st_mode
    except FileNotFoundError:
        raise PlugmanError(
            f"{name} is a link to {real}, which does not exist",
            where=str(root),
            hint="remove the broken link, or create what it points at",
        ) from None


def _check(members: list[_Member]) -> None:
    """Refuse what install would refuse: unsafe names, too many members, too many bytes."""
    if len(members) > MAX_ENTRIES:
        raise PlugmanError(
            f"the plugin has {len(members)} files and folders; install takes at most {MAX_ENTRIES}",
            hint="leave generated files (node_modules, build output) out of the plugin folder",
        )
    total = 0
    for member in members:
        try:
            name_parts(member.name, member.path is None)
        except FetchError as exc:
            raise PlugmanError(
                exc.message, hint="rename it: install refuses such names on every machine"
            ) from None
        total += member.path.stat().st_size if member.path else 0
    if total > MAX_TOTAL:
        raise PlugmanError(
            f"the plugin holds {total} bytes; install takes at most {MAX_TOTAL}",
            hint="leave large generated files out of the plugin folder",
        )


def _archive(members: list[_Member], mtime: int) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for member in members:
            info = tarfile.TarInfo(member.name.rstrip("/"))
            info.mtime = mtime
            info.uid = info.gid = 0  # no owner: the same bytes on every machine
            info.uname = info.gname = ""
            if member.path is None:
                info.type, info.mode = tarfile.DIRTYPE, EXEC_MODE
                tar.addfile(info)
                continue
            data = member.path.read_bytes()
            info.size, info.mode = len(data), EXEC_MODE if member.executable else FILE_MODE
            tar.addfile(info, io.BytesIO(data))
    compressed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=compressed, mtime=0) as gz:
        gz.write(buffer.getvalue())
    return compressed.getvalue()

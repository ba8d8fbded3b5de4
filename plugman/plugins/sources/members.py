"""Archive members and the rules every one of them must pass before anything is written."""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

from plugman.core.errors import FetchError
from plugman.plugins.sources.common import CONTROL

MAX_ENTRIES = 20_000
MAX_TOTAL = 512 * 1024 * 1024  # uncompressed bytes, declared and actually written
MAX_RATIO = 200  # per zip member, for members above RATIO_FLOOR
RATIO_FLOOR = 1024 * 1024
MAX_DEPTH, MAX_COMPONENT, MAX_PATH = 64, 255, 4096
SURROGATE = re.compile(r"[\ud800-\udfff]")
WINDOWS_DEVICE = re.compile(
    r"^(?:con|prn|aux|nul|conin\$|conout\$|(?:com|lpt)[0-9¹²³])(?: *\..*)?$", re.IGNORECASE
)
SHORT_GIT = re.compile(r"^git~[0-9]+$", re.IGNORECASE)
REFUSED = (
    "the archive was refused as a whole and nothing was extracted; ask its publisher to fix it"
)


class Member(NamedTuple):
    name: str  # as written in the archive
    parts: tuple[str, ...]  # the checked path components ('.' and empty ones dropped)
    is_dir: bool
    size: int  # declared uncompressed size
    packed: int | None  # compressed size (zip members), None when unknown
    executable: bool


def refuse(name: str, problem: str) -> FetchError:
    return FetchError(f"archive member {name!r} {problem}", hint=REFUSED)


def name_parts(name: str, is_dir: bool) -> tuple[str, ...]:
    """The components of a member name, or FetchError when the name is unsafe anywhere."""
    problem = _name_problem(name)
    if problem:
        raise refuse(name, problem)
    parts = tuple(part for part in name.split("/") if part not in ("", "."))
    if ".." in parts:
        raise refuse(name, "has a '..' component (path traversal)")
    if not parts and not is_dir:
        raise refuse(name, "has an empty name")
    if len(parts) > MAX_DEPTH or any(len(part.encode()) > MAX_COMPONENT for part in parts):
        raise refuse(name, f"is nested deeper than {MAX_DEPTH} or has a name over 255 bytes")
    for part in parts:
        problem = _windows_problem(part)
        if problem:
            raise refuse(name, f"has the component {part!r}, {problem} on Windows")
    return parts


def _windows_problem(part: str) -> str | None:
    """Names Windows maps elsewhere: devices, trailing dots/spaces, 8.3 aliases of `.git`."""
    if WINDOWS_DEVICE.match(part):
        return "a device name"
    if part.endswith((".", " ")):
        return "which loses its trailing dot or space"
    if SHORT_GIT.match(part):
        return "the short name of '.git'"
    return None


def _name_problem(name: str) -> str | None:
    if CONTROL.search(name):
        return "contains a NUL or control character"
    if SURROGATE.search(name):
        return "is not valid UTF-8"
    if "\\" in name:
        return "contains a backslash (a Windows path separator)"
    if name.startswith("/"):
        return "is an absolute path"
    if ":" in name:
        return "contains ':' (a drive letter or an NTFS stream)"
    if len(name.encode()) > MAX_PATH:
        return f"is longer than {MAX_PATH} bytes"
    return None


def fold(part: str) -> str:
    """How a case-insensitive, normalizing file system may see a name."""
    return unicodedata.normalize("NFC", part).casefold()


class Checker:
    """Archive-wide rules, checked one member at a time so a listing can stop early."""

    def __init__(self) -> None:
        self.count = 0
        self.total = 0
        self.files: dict[tuple[str, ...], str] = {}
        self.dirs: dict[tuple[str, ...], str] = {}

    def add(self, member: Member) -> Member:
        self.count += 1
        if self.count > MAX_ENTRIES:
            raise FetchError(f"the archive has more than {MAX_ENTRIES} entries", hint=REFUSED)
        self.total += member.size
        if self.total > MAX_TOTAL:
            raise FetchError(
                f"the archive expands to more than {MAX_TOTAL // 2**20} MiB", hint=REFUSED
            )
        packed = member.packed
        if packed is not None and member.size > max(RATIO_FLOOR, packed * MAX_RATIO):
            raise refuse(member.name, f"is compressed more than {MAX_RATIO}:1 (a zip bomb?)")
        self._place(member)
        return member

    def _place(self, member: Member) -> None:
        key = tuple(fold(part) for part in member.parts)
        for depth in range(1, len(key)):
            if key[:depth] in self.files:
                raise refuse(member.name, f"is inside {self.files[key[:depth]]!r}, a file")
            self.dirs.setdefault(key[:depth], member.name)
        if key in self.files or (not member.is_dir and key in self.dirs):
            other = self.files.get(key) or self.dirs[key]
            if other == member.name:
                raise refuse(member.name, "appears more than once")
            raise refuse(member.name, f"collides with {other!r} (same name, ignoring case)")
        (self.dirs if member.is_dir else self.files).setdefault(key, member.name)

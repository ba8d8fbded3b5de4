"""Where a file plugman reads comes from, and whether that origin consents (the trust boundary).

Origins: *user* (written by plugman on the user's command, or outside any project), *managed*
(the organization's folders, plugman's and Claude Code's), *project* (anything a clone can
bring: every file inside the project that is not proven the user's, and any path reached
through a symbolic link inside the project), *marketplace* and *registry* (a plugin tree in the
store: what its source brought). Only user and managed origins consent
(`CONSENTING`); what a project brings waits for `plugman trust approve`.

The files inside a project that can be the user's (`personal_files`) are the local scope's
`.plugman/local.toml` and Claude Code's `.claude/settings.local.json`: each is the user's only
while no link is on its path, this user owns it and git does not track it (`personal`). A clone
can commit one, or a link standing for one, and what it declares or approves is then the
project's: pending approval (or not taken), with a warning saying why.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, NamedTuple

from plugman.core.paths import Paths

Kind = Literal["user", "managed", "project", "marketplace", "registry"]
CONSENTING: frozenset[Kind] = frozenset({"user", "managed"})
GIT_TIMEOUT_S = 10


class Verdict(NamedTuple):
    """A file's origin, and (when it is not what its place suggests) why."""

    kind: Kind
    why: str = ""

    @property
    def consents(self) -> bool:
        return self.kind in CONSENTING


USER = Verdict("user")
PROJECT = Verdict("project")


def claude_local(paths: Paths) -> Path:
    """Claude Code's "local" project settings, `.claude/settings.local.json`: the user's only
    while git does not track it (`personal`)."""
    return paths.project_dir / ".claude" / "settings.local.json"


def personal_files(paths: Paths) -> tuple[Path, ...]:
    """The files inside a project that can be the user's: the local scope's and Claude Code's
    local settings. Every other file inside the project is the project's."""
    return (plain(paths.local_config), plain(claude_local(paths)))


def of(paths: Paths, file: Path) -> Verdict:
    """The origin of `file` (absolute), by where it is; a project's personal files (the local
    scope's, Claude's local settings) by `personal`."""
    file = plain(file)
    if file in personal_files(paths):
        return personal(paths, file)
    if inside(file, paths.managed_dir) or inside(file, paths.claude_managed_dir):
        return Verdict("managed")
    if inside(file, paths.store_dir) or inside(file, paths.marketplaces_dir):
        return Verdict("marketplace")
    if inside(file, paths.project_dir):
        link = link_on_path(paths.project_dir, file)
        return Verdict("project", _link_words(paths, link) if link else "")
    return USER


def local(paths: Paths) -> Verdict:
    """Whether the local scope's file is the user's (`personal`)."""
    return personal(paths, paths.local_config)


def personal(paths: Paths, file: Path) -> Verdict:
    """Whether a file inside the project is the user's: no symbolic link on its path inside the
    project, owned by this user, and not tracked by git (asked of git only when the file is
    there). Otherwise it is the project's, and `why` says so."""
    link = link_on_path(paths.project_dir, file)
    if link is not None:
        return Verdict("project", _link_words(paths, link))
    try:
        owner = file.stat().st_uid
    except FileNotFoundError:
        return USER
    except OSError as exc:
        return Verdict("project", f"{_shown(paths, file)} cannot be read ({exc.strerror})")
    if hasattr(os, "getuid") and owner != os.getuid():
        return Verdict("project", f"{_shown(paths, file)} belongs to another user")
    tracked = git_tracks(paths.project_dir, file)
    if tracked is None:
        return Verdict(
            "project", f"git cannot tell whether it tracks {_shown(paths, file)} (so it may)"
        )
    if tracked:
        return Verdict("project", f"{_shown(paths, file)} is tracked by git: a clone brought it")
    return USER


def plain(path: Path | str) -> Path:
    """`path` absolute, `..` and `.` taken out by their spelling (no link followed)."""
    return Path(os.path.normpath(Path(path).absolute()))


def inside(file: Path, folder: Path) -> bool:
    """Whether `file` is `folder` or below it, by their spelling (no link followed)."""
    return plain(file).is_relative_to(plain(folder))


def link_on_path(root: Path, file: Path) -> Path | None:
    """The first symbolic link on `file`'s path below `root` (itself included), if any."""
    if not inside(file, root):
        return None
    here = plain(root)
    for part in plain(file).relative_to(here).parts:
        here = here / part
        if here.is_symlink():
            return here
    return None


def git_tracks(root: Path, file: Path) -> bool | None:
    """Whether git tracks `file` in the repository `root` is in; False outside any repository,
    None when git cannot say (not installed, a repository it refuses to read). Outside any
    repository, or when the index plainly does not hold the path, git is not run
    (`_index_says`); else it is asked, with the variables that would point it elsewhere left
    out and no fsmonitor command run."""
    repository = _repository(root)
    if repository is None:
        return False
    if _index_says(repository, file) is False:
        return False
    import subprocess  # ~8 ms with threading and selectors: only when git must be asked

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    argv = ["git", "-c", "core.fsmonitor=false", "ls-files", "-z", "--", str(file)]
    try:
        done = subprocess.run(
            argv,
            cwd=root,
            env=env,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None if _in_repository(root) else False
    if done.returncode == 0:
        return bool(done.stdout.strip(b"\0"))
    if b"not a git repository" in done.stderr.lower():
        return False
    return None


def _in_repository(root: Path) -> bool:
    return _repository(root) is not None


def _repository(root: Path) -> Path | None:
    """The nearest folder from `root` upward with a `.git`, as git finds its repository."""
    start = plain(root)
    return next((f for f in (start, *start.parents) if (f / ".git").exists()), None)


INDEX_VERSIONS = (b"\0\0\0\x02", b"\0\0\0\x03")  # full path names; v4 compresses them


def _index_says(repository: Path, file: Path) -> bool | None:
    """False when the repository's index (a plain `.git` folder's, version 2 or 3, not split)
    does not hold `file`'s path, which it would hold verbatim if git tracked it; None when only
    git can tell. Costs one read of the index, no process."""
    folder = repository / ".git"
    index = folder / "index"
    try:
        if not folder.is_dir() or any(folder.glob("sharedindex.*")):
            return None
        with index.open("rb") as stream:
            data = stream.read()
    except FileNotFoundError:
        return False if folder.is_dir() else None  # no index yet: nothing is tracked
    except OSError:
        return None
    if data[:4] != b"DIRC" or data[4:8] not in INDEX_VERSIONS:
        return None
    name = plain(file).relative_to(repository).as_posix().encode()
    return None if name + b"\0" in data else False


def _link_words(paths: Paths, link: Path) -> str:
    try:
        target = str(link.readlink())
    except OSError:  # pragma: no cover - it was a link a moment ago
        target = "?"
    leaves = not inside(Path(os.path.realpath(link)), Path(os.path.realpath(paths.project_dir)))
    where = "leaving the project" if leaves else "inside the project"
    return (
        f"{_shown(paths, link)} is a symbolic link ({where}, to {target}): a link in the "
        "project is the project's, never the user's"
    )


def _shown(paths: Paths, file: Path) -> str:
    try:
        return plain(file).relative_to(plain(paths.project_dir)).as_posix()
    except ValueError:
        return str(file)

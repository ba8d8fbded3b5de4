"""Launch plans on disk: where they live, what they are keyed by and how a stamp is checked.

A plan (`plugman.runtime.launch.plans` writes it) is what the hook or server launcher would
compute for one launch in one project, so the next call needs no resolve: the launcher's fast
path (`plugman.cli.fast_launch`) reads it, checks its stamp (direnv's watch list: every file
the resolution read or probed, each with the state it had) and its key (this plugman version,
the environment that places plugman's folders), and runs what it says; any doubt sends the call
to the full launcher, which writes the plan again.

This module is on that fast path: it imports only `os`, `json` (already loaded) and the builtin
sha256, never the rest of plugman. A state is the file's sha256 (so the same bytes written again
keep the plan, and a file changed in the same second as the plan does not), `-` when absent,
`d` a folder (`d:` and the digest of its names when its listing counts), `l` in front for a
link (a project file reached through a link is not read: plugman.config.scopes).
"""

# ruff: noqa: PTH100, PTH110, PTH111, PTH116, PTH118, PTH119, PTH120, PTH123, PTH208
# (os.path on strings: pathlib is not loaded on the fast path, +3 ms)
from __future__ import annotations

import json
import os
import sys
from stat import S_ISDIR, S_ISLNK

TYPE_CHECKING = False  # (not typing's: importing typing costs ~5 ms on the fast path)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

FORMAT = 1
FOLDER = "plans"
# What places plugman's folders (core.paths), its managed files and its secret store: a plan is
# used only in the environment it was written in. Never a secret: only these names' values.
KEY_ENV = (
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_DIRS",
    "XDG_DATA_DIRS",
    "PLUGMAN_HOME",
    "PLUGMAN_MANAGED_DIR",
    "PLUGMAN_CLAUDE_MANAGED_DIR",
    "PLUGMAN_SECRETS",
)
# Set, any of these sends every launch to the full launcher: an option's value taken from the
# environment (config.user_config), fault injection (core.faults), plans turned off.
FAULTS = "PLUGMAN_FAULT"
NO_PLAN = ("PLUGMAN_OPT_", FAULTS, "PLUGMAN_NO_PLANS")
TRACE = "PLUGMAN_LAUNCH_TRACE"  # a file each launch appends the path it took to (tests, bench)
MARKERS = ("plugman.toml", ".mcp.json", ".git")  # core.paths.PROJECT_MARKERS

Stamp = list[list[str]]  # [path, state]


def usable(env: Mapping[str, str]) -> bool:
    """Whether plans may be used in this environment (not while faults are injected)."""
    return not any(name.startswith(NO_PLAN) for name in env)


def writable(env: Mapping[str, str]) -> bool:
    """Whether plans may be written from this environment: a deployment writes the same plans
    whether or not faults are injected into it (plugman.core.faults), so a command killed by one
    and recovered ends as one that ran through."""
    return not any(name.startswith(NO_PLAN) and not name.startswith(FAULTS) for name in env)


def env_key(env: Mapping[str, str]) -> dict[str, str | None]:
    return {name: env.get(name) for name in KEY_ENV}


def state_dir(env: Mapping[str, str]) -> str | None:
    """plugman's state folder as core.paths finds it, where that is plain to compute (else None:
    no plan is looked for, the full launcher runs)."""
    home = env.get("PLUGMAN_HOME")
    if home:
        return os.path.join(os.path.abspath(os.path.expanduser(home)), "state")
    if not sys.platform.startswith("linux"):
        return None
    given = env.get("XDG_STATE_HOME", "").strip()
    if given:
        return os.path.join(given, "plugman")
    return os.path.join(os.path.expanduser("~"), ".local", "state", "plugman")


def find_project(start: str) -> str:
    """core.paths.find_project on strings."""
    folder = start
    while True:
        if any(os.path.exists(os.path.join(folder, m)) for m in MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return start
        folder = parent


def project_folder(state: str, project: str) -> str:
    """The folder of one project's plans: a digest of its path (the plan holds the path too)."""
    return os.path.join(state, FOLDER, digest(project.encode())[:24])


def hook_name(agent: str, event: str, ref: str) -> str:
    return "hook." + _safe(f"{agent}.{event}.{ref}") + ".json"


def server_name(name: str) -> str:
    return "server." + _safe(name) + ".json"


def _safe(text: str) -> str:
    return (
        "".join(c if c.isalnum() or c in "._-@" else "_" for c in text)
        + "."
        + digest(text.encode())[:8]
    )


def digest(data: bytes) -> str:
    return _sha256()(data).hexdigest()  # type: ignore[attr-defined,no-any-return]


def _sha256() -> Callable[[bytes], object]:
    """The builtin sha256 (no OpenSSL load, which `hashlib` costs: ~6 ms)."""
    for name in ("_sha2", "_sha256"):
        try:
            return __import__(name).sha256  # type: ignore[no-any-return]
        except (ImportError, AttributeError):
            continue
    import hashlib  # lazy: only where the builtin sha256 module is missing

    return hashlib.sha256


def state(path: str, listed: bool = False, staged: Mapping[str, bytes | None] | None = None) -> str:
    """`path` as a stamp holds it (see the module's doc); `staged`: what an open transaction
    will write, by path (a deployment writes its plans with the files it changes)."""
    if staged is not None and path in staged:
        data = staged[path]
        return "-" if data is None else "f:" + digest(data)
    try:
        link = S_ISLNK(os.lstat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return "-"
    except OSError as exc:
        return f"e:{exc.errno}"
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "l-"
    head = "l" if link else ""
    if S_ISDIR(mode):
        if not listed:
            return head + "d"
        names = set(os.listdir(path))
        if staged is not None:
            for file, data in staged.items():
                if os.path.dirname(file) == path:
                    (names.discard if data is None else names.add)(os.path.basename(file))
        return head + "d:" + digest("\0".join(sorted(names)).encode())
    try:
        with open(path, "rb") as stream:
            return head + "f:" + digest(stream.read())
    except OSError as exc:
        return f"e:{exc.errno}"


def fresh(stamp: object) -> bool:
    """Whether every watched path is as the plan saw it."""
    if not isinstance(stamp, list):
        return False
    for entry in stamp:
        if not (isinstance(entry, list) and len(entry) == 2):
            return False
        path, was = entry
        if state(path, was.startswith(("d:", "ld:"))) != was:
            return False
    return True


def load(path: str, key: dict[str, object]) -> dict[str, object] | None:
    """The plan at `path` when it was written by this version for `key` and is fresh."""
    try:
        with open(path, "rb") as stream:
            plan = json.loads(stream.read())
    except (OSError, ValueError):
        return None
    from plugman import __version__  # lazy: a leaf with no import (the version is checked last)

    if not isinstance(plan, dict) or plan.get("format") != FORMAT:
        return None
    if plan.get("key") != key or plan.get("version") != __version__:
        return None
    return plan if fresh(plan.get("stamp")) else None


def trace(env: Mapping[str, str], how: str, words: list[str]) -> None:
    """Append which path a launch took (`direct`, `plan`, `full`) to PLUGMAN_LAUNCH_TRACE's file."""
    file = env.get(TRACE)
    if not file:
        return
    try:
        with open(file, "a", encoding="utf-8") as stream:
            stream.write(" ".join([how, *words]) + "\n")
    except OSError:
        pass

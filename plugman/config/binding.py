"""What an approval is bound to besides the entry: the project it was given in and the files the
entry's command runs (issue 33: consent bound to project, entry and everything it runs).

`project_key` is the project folder as the file system resolves it, so an approval given in one
clone means nothing in another. `files_run` finds the files inside the project (or a plugin's
folder) that a server's `command` and `args`, or a hook's command line, name: each word that is
an existing file once `${CLAUDE_PROJECT_DIR}` and `${CLAUDE_PLUGIN_ROOT}` are put in and a
relative word is taken from the folder the command runs in (`bash scripts/start.sh`, `node
server.js`, `./hooks/x.py`, `--config=conf.json`). Each is hashed (sha256, read through links),
so a changed script asks again. Not covered: what such a file loads in turn (`source lib.sh`,
`python -m module`), which the user reviews as part of what they approve.

Only entries that need approval are looked at, and only words that name an existing file are
hashed: a resolve with nothing pending reads no extra file.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from plugman.core.jsonvalue import ServerEntry

Runs = tuple[tuple[str, str], ...]  # (path relative to the project or plugin, "sha256:...")
PROJECT_VARIABLES = ("${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR")
PLUGIN_VARIABLES = ("${CLAUDE_PLUGIN_ROOT}", "$CLAUDE_PLUGIN_ROOT")
SHELL_QUOTING = "'\"\\#"  # what makes shlex.split(…, comments=True) more than a split


def project_key(project_dir: Path) -> str:
    """The project an approval belongs to: its folder with every link resolved."""
    return os.path.realpath(project_dir)


def words(entry: ServerEntry, shell: bool) -> list[str]:
    """The words of what an entry runs: a server's (or an `args` hook's) command and args, or
    a hook's command line split as a POSIX shell would split it."""
    command = entry.get("command")
    if not isinstance(command, str):
        return []
    args = entry.get("args")
    if isinstance(args, list):
        return [command, *(str(a) for a in args)]
    if not shell:
        return [command]
    if command.isprintable() and not any(char in command for char in SHELL_QUOTING):
        return command.split()  # no quote, escape or comment, no space but " ": shlex's words
    import shlex  # only for a shell command line (a hook's) that quotes, escapes or comments

    try:
        return shlex.split(command, comments=True)
    except ValueError:  # an unbalanced quote: the shell refuses it too; its words still count
        return command.split()


def files_run(
    entry: ServerEntry, project: str, plugin_root: str | None = None, shell: bool = False
) -> Runs:
    """The files inside the project or the plugin that `entry` runs, with their digests.
    `project` and `plugin_root`: absolute and normalized (`origins.plain`), given by the
    caller once for every entry."""
    roots = [project] if plugin_root is None else [project, plugin_root]
    cwd = entry.get("cwd")
    base = os.path.join(roots[0], cwd) if isinstance(cwd, str) else roots[0]  # noqa: PTH118
    found: dict[str, str] = {}
    for word in _candidates(words(entry, shell), roots[0], plugin_root):
        path = os.path.normpath(os.path.join(base, word))  # noqa: PTH118 (str: 3x faster)
        root = next((r for r in roots if path.startswith(r + os.sep)), None)
        if root is None or not os.path.isfile(path):  # noqa: PTH113
            continue
        name = path[len(root) + 1 :].replace(os.sep, "/")
        found[name if root == roots[0] else f"${{CLAUDE_PLUGIN_ROOT}}/{name}"] = digest(Path(path))
    return tuple(sorted(found.items()))


def candidates(
    entry: ServerEntry, project: str, plugin_root: str | None = None, shell: bool = False
) -> list[str]:
    """Every path inside the project or the plugin a word of `entry` could name, present or
    not, as `files_run` looks for them (a launch plan watches them: runtime.launch.plans)."""
    roots = [project] if plugin_root is None else [project, plugin_root]
    cwd = entry.get("cwd")
    base = os.path.join(roots[0], cwd) if isinstance(cwd, str) else roots[0]  # noqa: PTH118
    found = []
    for word in _candidates(words(entry, shell), roots[0], plugin_root):
        path = os.path.normpath(os.path.join(base, word))  # noqa: PTH118
        if any(path.startswith(r + os.sep) for r in roots):
            found.append(path)
    return found


def _candidates(given: Iterable[str], project: str, plugin_root: str | None) -> list[str]:
    found = []
    for word in given:
        for name in PROJECT_VARIABLES:
            word = word.replace(name, project)
        for name in PLUGIN_VARIABLES:
            if plugin_root is not None:
                word = word.replace(name, plugin_root)
        if word.startswith("-"):
            word = word.partition("=")[2]  # --config=x.json names x.json
        if word and "$" not in word and "\0" not in word:
            found.append(word)
    return found


def digest(path: Path) -> str:
    """A file's sha256, read through links (what running it reads); unreadable: a fixed word
    that no readable content hashes to."""
    try:
        with path.open("rb") as stream:
            return "sha256:" + hashlib.file_digest(stream, "sha256").hexdigest()
    except OSError as exc:
        return f"unreadable:{type(exc).__name__}"

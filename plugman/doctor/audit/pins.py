"""Whether an MCP server's launch command pins what it downloads (`plugman audit`).

A server started as `npx -y some-server` runs whatever the npm registry serves as that package's
latest version the day the agent starts it: the bytes plugman's lock pins never include it. The
same holds for `pnpm dlx`, `bunx`, `yarn dlx`, `npm exec`, and for Python's `uvx`, `uv tool run`
and `pipx run`. A launch is pinned when the package names one exact version: `pkg@1.2.3` for
the npm launchers (not `@latest`, a range such as `@^1` or `@1`, or a dist-tag), `pkg==1.2.3`
for the Python ones (or `pkg@1.2.3` for uvx, its own spelling). A local path, a URL or a git
source is not a registry package and is not judged here.

`unpinned(entry)` is pure: the server entry as declared (`command` and `args`) in, the
unpinned launch (what was asked for, and how to pin it) or None out.
"""

from __future__ import annotations

import re
import shlex
from typing import Any, NamedTuple


class Launcher(NamedTuple):
    """A command that downloads a package and runs it: its words, the options that take a
    value (the package option among them), and how a version is pinned."""

    words: tuple[str, ...]  # `npx`, or `uv tool run`
    valued: frozenset[str]  # options followed by a value
    package: frozenset[str]  # the options naming the package (then the first word is a bin)
    python: bool  # `==` pins (and for uvx, `@` too); else npm's `@`


_NODE_VALUED = frozenset({"-p", "--package", "-c", "--call", "--registry", "--cache", "--prefix"})
_NODE_PACKAGE = frozenset({"-p", "--package"})
_UV_VALUED = frozenset(
    {
        "--from",
        "--with",
        "--with-editable",
        "--with-requirements",
        "--python",
        "-p",
        "--index",
        "--index-url",
        "--default-index",
        "--extra-index-url",
        "--constraints",
        "-c",
        "--overrides",
        "--build-constraints",
        "-b",
        "--directory",
        "--project",
        "--config-file",
        "--cache-dir",
    }
)
_PIPX_VALUED = frozenset({"--spec", "--python", "--pip-args", "--index-url", "-i", "--backend"})

# Every launcher the check knows, longest words first (`uv tool run` before a bare `uv`).
LAUNCHERS = (
    Launcher(("npm", "exec"), _NODE_VALUED, _NODE_PACKAGE, False),
    Launcher(("npm", "x"), _NODE_VALUED, _NODE_PACKAGE, False),
    Launcher(("pnpm", "dlx"), _NODE_VALUED, _NODE_PACKAGE, False),
    Launcher(("yarn", "dlx"), _NODE_VALUED, _NODE_PACKAGE, False),
    Launcher(("bun", "x"), _NODE_VALUED, _NODE_PACKAGE, False),
    Launcher(("uv", "tool", "run"), _UV_VALUED, frozenset({"--from"}), True),
    Launcher(("pipx", "run"), _PIPX_VALUED, frozenset({"--spec"}), True),
    Launcher(("npx",), _NODE_VALUED, _NODE_PACKAGE, False),
    Launcher(("pnpx",), _NODE_VALUED, _NODE_PACKAGE, False),
    Launcher(("bunx",), _NODE_VALUED, _NODE_PACKAGE, False),
    Launcher(("uvx",), _UV_VALUED, frozenset({"--from"}), True),
)

# An exact npm version (semver, with a pre-release or build part); anything else after `@` is
# a range or a dist-tag, resolved afresh on every start.
_EXACT_NPM = re.compile(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?")
# `name[extras]==version` (or `===`), the version without a wildcard.
_EXACT_PYTHON = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?\s*===?\s*[^*,;<>=!~\s]+")


class Unpinned(NamedTuple):
    launch: str  # the launch as written: `npx -y some-server`
    package: str  # what it downloads, as written: `some-server`, `mcp-server-time>=1`
    pin: str  # how a pinned one is spelled: `some-server@VERSION`


def unpinned(entry: dict[str, Any]) -> Unpinned | None:
    """The launch of `entry` (a server's `command` and `args`) when it downloads a package
    without an exact version; None when it is pinned, or launches no known downloader."""
    words = _words(entry)
    if not words:
        return None
    words[0] = _program(words[0])
    for launcher in LAUNCHERS:
        size = len(launcher.words)
        if tuple(words[:size]) == launcher.words:
            package = _package(words[size:], launcher)
            if package is None or _pinned(package, launcher):
                return None
            return Unpinned(" ".join(words), package, _pin_spelling(package, launcher))
    return None


def _words(entry: dict[str, Any]) -> list[str]:
    command, args = entry.get("command"), entry.get("args")
    if not isinstance(command, str) or not command.strip():
        return []
    given = [a for a in args if isinstance(a, str)] if isinstance(args, list) else []
    if not given and " " in command.strip():  # the whole command line in `command`
        try:
            return shlex.split(command)
        except ValueError:
            return command.split()
    return [command, *given]


def _program(word: str) -> str:
    """`/usr/bin/npx`, `npx.cmd`, `NPX.EXE` → `npx`."""
    name = re.split(r"[\\/]", word)[-1].lower()
    return re.sub(r"\.(cmd|exe|bat|ps1)$", "", name)


def _package(rest: list[str], launcher: Launcher) -> str | None:
    """The package the launch downloads: the package option's value, else its first word."""
    named = None
    index = 0
    while index < len(rest):
        word = rest[index]
        if word == "--":
            return named or (rest[index + 1] if index + 1 < len(rest) else None)
        option, equals, value = word.partition("=")
        if word.startswith("-") and option in launcher.valued:
            if not equals:
                index += 1
                value = rest[index] if index < len(rest) else ""
            if option in launcher.package:
                named = named or value
        elif not word.startswith("-"):
            return named or word
        index += 1
    return named


def _pinned(package: str, launcher: Launcher) -> bool:
    if package.startswith((".", "/", "~")) or ":" in package or "\\" in package:
        return True  # a path, a URL or a git source: no registry version to pin
    if launcher.python:
        if _EXACT_PYTHON.fullmatch(package):
            return True
        _, at, version = package.partition("@")
        return bool(at) and launcher.words == ("uvx",) and _exact(version.strip(), python=True)
    _, at, version = package[1:].partition("@")  # a scope's own `@` comes first
    return bool(at) and _exact(version, python=False)


def _exact(version: str, python: bool) -> bool:
    if python:
        return bool(re.fullmatch(r"\d+(?:\.\d+)*(?:[A-Za-z0-9.+-]*)", version))
    return bool(_EXACT_NPM.fullmatch(version))


def _pin_spelling(package: str, launcher: Launcher) -> str:
    if launcher.python:
        name = re.split(r"[<>=!~@;\s]", package, maxsplit=1)[0]
        return f"{name}==VERSION"
    scope = "@" if package.startswith("@") else ""
    name = scope + package[len(scope) :].partition("@")[0]
    return f"{name}@VERSION"

"""`plugman tag`: the git tag `{name}--v{version}` for a plugin's committed state.

That is the form Claude Code resolves a dependency's version range against (`claude plugin
tag`; docs/claude-format.md#dependencies-and-tags), so a plugin other plugins depend on is
released by tagging it. The plugin
is validated first; the tag goes on HEAD of the repository holding the plugin, and only when
the plugin's folder there has nothing uncommitted (what is tagged is what was validated).
A tag already there is left as it is, when the plugin's folder in its commit is the same
tree as in HEAD (other parts of the repository may have moved on); one on another commit
where the plugin differs is refused, never moved.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import NamedTuple

from plugman.core.errors import PlugmanError, UsageError
from plugman.manifest.diagnostics import Diagnostic
from plugman.manifest.validate import valid_plugin

TIMEOUT = 60.0


class Tagged(NamedTuple):
    tag: str
    name: str
    version: str
    commit: str  # what the tag points at
    repository: Path  # the work tree's top folder
    action: str  # created | unchanged (the tag is there, same content) | planned (dry run)
    annotated: bool
    warnings: tuple[Diagnostic, ...] = ()


def tag_name(name: str, version: str) -> str:
    """The tag a plugin version gets: `{name}--v{version}`."""
    return f"{name}--v{version}"


def tag(
    directory: Path,
    *,
    message: str | None = None,
    lightweight: bool = False,
    strict: bool = False,
    dry_run: bool = False,
) -> Tagged:
    """Tag HEAD of the git repository holding the plugin in `directory` as
    `{name}--v{version}`: annotated (with `message`, or `{name} v{version}`) unless
    `lightweight`. PlugmanError when it cannot or must not."""
    plugin, warnings = valid_plugin(directory, strict=strict)
    if not plugin.version:
        raise PlugmanError(
            f"the plugin {plugin.name!r} has no version",
            where=str(directory),
            hint='set "version" in .claude-plugin/plugin.json (e.g. "1.0.0"), commit, then tag',
        )
    name = tag_name(plugin.name, plugin.version)
    top = _repository(directory)
    head = _head(directory)
    _committed(directory)
    _valid_ref(directory, name)
    existing = _git(["rev-parse", "--verify", "--quiet", f"refs/tags/{name}^{{commit}}"], directory)
    found = Tagged(
        name, plugin.name, plugin.version, head, top, "planned", not lightweight, tuple(warnings)
    )
    if existing.returncode == 0:
        at = existing.stdout.strip()
        if at != head and not _same_plugin(directory, top, at, head):
            raise PlugmanError(
                f"tag {name} already exists, at commit {at[:12]}, where the plugin differs "
                f"from HEAD ({head[:12]})",
                where=str(top),
                hint="a released version is never moved: raise the version in plugin.json, "
                f"commit, and tag again (or, if {name} was never published, delete it with "
                f"`git tag -d {name}`)",
            )
        return found._replace(action="unchanged", commit=at)
    if dry_run:
        return found
    args = ["tag", name, head] if lightweight else ["tag", "-a", name, head, "-m"]
    if not lightweight:
        args.append(message or f"{plugin.name} v{plugin.version}")
    done = _git(args, directory)
    if done.returncode != 0:
        raise PlugmanError(
            f"git could not create tag {name}: {_first_line(done.stderr)}",
            where=str(top),
            hint="an annotated tag needs your identity: git config --global user.name / "
            "user.email (or pass --lightweight)",
        )
    return found._replace(action="created")


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """git in the author's own repository, with their environment (identity, config), never
    prompting; a missing git is a PlugmanError."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        return subprocess.run(
            ["git", "-c", "core.fsmonitor=false", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        raise PlugmanError(
            "git is not installed (or not on PATH)", hint="install git to tag plugin versions"
        ) from None
    except subprocess.TimeoutExpired:
        raise PlugmanError(
            f"git {args[0]} did not finish within {TIMEOUT:.0f} s", hint="try again"
        ) from None


def _repository(directory: Path) -> Path:
    done = _git(["rev-parse", "--show-toplevel"], directory)
    if done.returncode != 0:
        raise UsageError(
            f"{directory} is not in a git repository",
            hint="the version tag is a git tag: `git init`, commit the plugin, then tag it",
        )
    return Path(done.stdout.strip())


def _head(directory: Path) -> str:
    done = _git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], directory)
    if done.returncode != 0:
        raise PlugmanError(
            "the repository has no commits yet",
            where=str(directory),
            hint="commit the plugin (git add, git commit), then tag it",
        )
    return done.stdout.strip()


def _committed(directory: Path) -> None:
    """Refuse a plugin folder with changes (staged, unstaged or untracked) or not in HEAD."""
    status = _git(["status", "--porcelain=v1", "--untracked-files=all", "--", "."], directory)
    changed = [line[3:] for line in status.stdout.splitlines() if line.strip()]
    if status.returncode != 0 or changed:
        shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if changed[5:] else "")
        raise PlugmanError(
            f"the plugin has uncommitted changes: {shown or _first_line(status.stderr)}",
            where=str(directory),
            hint="commit (or stash) them first: the tag marks what HEAD holds",
        )
    tracked = _git(["ls-tree", "-r", "--name-only", "HEAD", "--", "."], directory)
    if not tracked.stdout.strip():
        raise PlugmanError(
            "the plugin is not in the last commit (its folder is ignored, or never added)",
            where=str(directory),
            hint="git add the plugin folder and commit it, then tag it",
        )


def _same_plugin(directory: Path, top: Path, one: str, other: str) -> bool:
    """Whether the plugin's folder is the same tree in both commits."""
    rel = Path(os.path.realpath(directory)).relative_to(os.path.realpath(top)).as_posix()
    trees = [
        _git(["rev-parse", "--verify", "--quiet", f"{commit}:{'' if rel == '.' else rel}"], top)
        for commit in (one, other)
    ]
    return all(t.returncode == 0 for t in trees) and trees[0].stdout == trees[1].stdout


def _valid_ref(directory: Path, name: str) -> None:
    if _git(["check-ref-format", f"refs/tags/{name}"], directory).returncode != 0:
        raise PlugmanError(
            f"{name!r} is not a valid git tag name",
            where=str(directory),
            hint="use a plain version such as 1.2.0 in plugin.json (no spaces, '..', '~', "
            "'^', ':' or '?')",
        )


def _first_line(text: str) -> str:
    return next((line for line in text.splitlines() if line.strip()), "no details")

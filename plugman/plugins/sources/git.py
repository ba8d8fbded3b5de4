"""`github`, `url` and `git-subdir` sources: a hardened `git clone` and checkout."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from plugman.core.errors import FetchError
from plugman.core.sources import LockedSource
from plugman.manifest.model import PluginSource
from plugman.plugins.sources.common import relative_parts, remove
from plugman.plugins.sources.gitauth import auth_failure
from plugman.plugins.sources.giturl import SHA, check_ref, check_sha, clone_url, shown
from plugman.plugins.sources.kind import Followed
from plugman.plugins.sources.local import prune_links

TIMEOUT = 300.0
CONFIG = (
    *("-c", "protocol.ext.allow=never"),
    *("-c", "protocol.fd.allow=never"),
    *("-c", "core.hooksPath=/dev/null"),
    *("-c", "core.fsmonitor=false"),
    *("-c", "submodule.recurse=false"),
    *("-c", "advice.detachedHead=false"),
)
KEEP_ENV = frozenset(
    {"GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL"}
)
# The user's credential helpers (global and system config) and ssh-agent keep working; what
# would ask on a terminal fails at once instead: no prompt (GIT_TERMINAL_PROMPT), no askpass
# program (an empty GIT_ASKPASS stops git's fallback to core.askPass and SSH_ASKPASS), and git
# runs in its own session, without a controlling terminal, so ssh cannot ask either.
SAFE_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",
    "GIT_ALLOW_PROTOCOL": "https:ssh:file:http",
    "LC_ALL": "C",
}
ACCESS_HINT = (
    "check the URL, that the repository exists and that you can read it "
    "(plugman never prompts for credentials: use an SSH key or a credential helper)"
)


def git_env() -> dict[str, str]:
    """The caller's environment without inherited GIT_* settings (GIT_DIR, GIT_CONFIG_*, ...)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in KEEP_ENV}
    env.update(SAFE_ENV)
    return env


def run_git(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run git with the hardened options; a list argv, never a shell."""
    try:
        return subprocess.run(
            ["git", *CONFIG, *args],
            cwd=cwd,
            env=git_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=TIMEOUT,
            check=False,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise FetchError(
            "git is not installed (or not on PATH)",
            hint="install git to use github, url and git-subdir plugin sources",
        ) from None
    except subprocess.TimeoutExpired:
        raise FetchError(
            f"git {args[0]} did not finish within {TIMEOUT:.0f} s",
            hint="check your network connection and try again",
        ) from None


def fetch_git(
    source: PluginSource, dest: Path, progress: Callable[[str], None] | None = None
) -> tuple[Path, str]:
    """Clone the repository into `dest` and check out the wanted commit; return the plugin
    root (a subfolder for git-subdir) and the commit id."""
    url = clone_url(source.kind, source.location)
    sha = check_sha(source.sha) if source.sha else None
    ref = check_ref(source.ref) if source.ref else None
    parts = _subdir_parts(source)
    if progress:
        progress(f"cloning {shown(url)}" + (f" at {sha or ref}" if sha or ref else ""))
    _clone(url, None if sha else ref, dest, shallow=sha is None)
    commit = _checkout(url, sha, dest)
    remove(dest / ".git")
    root = _subfolder(dest, parts, source.subdir or "", url)
    prune_links(root)
    return root, commit


def follow(locked: LockedSource, source: PluginSource) -> Followed | None:
    """The commit the branch or tag a locked git source names (`ref`; none: the default
    branch) points to now, asked with `git ls-remote` (no clone), and `source` pinned to it;
    None for a ref that is a commit id (an exact pin). The ref is checked as a clone checks it
    and passed after `--` and a `refs/…` prefix, so a hostile catalog's ref is never an
    option; the URL goes through the same checks as a clone's."""
    ref = locked.get("ref")
    if ref and SHA.match(ref.lower()):
        return None
    url = clone_url(source.kind, source.location)
    wanted = check_ref(ref) if ref else None
    asked = [f"refs/heads/{wanted}", f"refs/tags/{wanted}^{{}}", f"refs/tags/{wanted}"]
    result = run_git(["ls-remote", "--quiet", "--", url, *(asked if wanted else ["HEAD"])])
    if result.returncode:
        denied = auth_failure(url, result.stderr)
        if denied:
            raise denied
        raise FetchError(f"could not ask {shown(url)}: {_last_line(result)}", hint=ACCESS_HINT)
    said = {
        name: sha for sha, _, name in (line.partition("\t") for line in result.stdout.splitlines())
    }
    commit = next((said[name] for name in (asked if wanted else ["HEAD"]) if name in said), None)
    if commit is None or not SHA.match(commit):
        raise FetchError(
            f"ref {wanted or 'HEAD'!r} not found in {shown(url)}",
            hint="check the branch or tag name in the plugin's source",
        )
    return Followed(source._replace(ref=wanted, sha=commit), commit)


def _subdir_parts(source: PluginSource) -> tuple[str, ...]:
    if source.kind != "git-subdir":
        return ()
    if not source.subdir:
        raise FetchError(
            "a git-subdir source needs a 'path'",
            hint="set 'path' to the plugin's folder inside the repository",
        )
    return relative_parts(source.subdir, "git-subdir path")


def _clone(url: str, ref: str | None, dest: Path, *, shallow: bool) -> None:
    args = ["clone", "--quiet", "--no-local", "--no-checkout", "--no-recurse-submodules"]
    args += ["--depth", "1"] if shallow else []
    args += ["--branch", ref] if ref else []
    result = run_git([*args, "--", url, str(dest)])
    if result.returncode == 0:
        return
    if ref and "remote branch" in result.stderr.lower():
        raise FetchError(
            f"ref {ref!r} not found in {shown(url)}",
            hint="check the branch or tag name in the plugin's source",
        )
    denied = auth_failure(url, result.stderr)
    if denied:
        raise denied
    raise FetchError(f"could not clone {shown(url)}: {_last_line(result)}", hint=ACCESS_HINT)


def _checkout(url: str, sha: str | None, dest: Path) -> str:
    if sha and not _has_commit(dest, sha):
        run_git(["fetch", "--quiet", "--no-recurse-submodules", "origin", sha], dest)
        if not _has_commit(dest, sha):
            raise FetchError(
                f"commit {sha} not found in {shown(url)}",
                hint="check the 'sha' of the plugin's source; the commit must be published "
                "on a branch or tag of the repository",
            )
    head = run_git(["rev-parse", "--verify", "--quiet", f"{sha or 'HEAD'}^{{commit}}"], dest)
    commit = head.stdout.strip()
    if head.returncode or not SHA.match(commit):
        raise FetchError(f"repository {shown(url)} has no commits", hint=ACCESS_HINT)
    result = run_git(["checkout", "--quiet", "--force", "--detach", commit], dest)
    if result.returncode:
        raise FetchError(
            f"could not check out {commit} from {shown(url)}: {_last_line(result)}",
            hint="the repository may hold paths this file system cannot store",
        )
    return commit


def _has_commit(dest: Path, sha: str) -> bool:
    return run_git(["rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}"], dest).returncode == 0


def _subfolder(dest: Path, parts: tuple[str, ...], subdir: str, url: str) -> Path:
    here = dest
    for part in parts:
        here = here / part
        if here.is_symlink() or not here.is_dir():
            raise FetchError(
                f"path {subdir!r} is not a folder in {shown(url)}",
                hint="check the 'path' of the git-subdir source (relative to the repository)",
            )
    return here


def _last_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return ((fatal or lines or [f"git exited with {result.returncode}"])[0])[:300]

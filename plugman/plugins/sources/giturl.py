"""Checks on what a git source names (URL, ref, commit) before any of it reaches `git`."""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit, urlunsplit

from plugman.core.errors import FetchError
from plugman.plugins.sources.common import CONTROL

GITHUB_ENV = "PLUGMAN_GITHUB_URL"
GITHUB_DEFAULT = "https://github.com"
SHORTHAND = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*/[A-Za-z0-9_.][A-Za-z0-9_.-]*$")
SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
HELPER = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)::")
SCP = re.compile(r"^(?:([^@/]*)@)?([^:/]+):")
SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
BAD_REF = re.compile(r"[\s~^:?*\[\\]|\.\.|@\{|//")
SCHEMES = frozenset({"https", "ssh", "git+ssh", "ssh+git", "file", "http"})
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
URL_HINT = "use an https://, ssh:// or git@host:path URL, or owner/repo for GitHub"
NO_OPTIONS = "a value starting with '-' would be read by git as an option"


def github_url(repo: str) -> str:
    """`owner/repo` on GitHub (or on $PLUGMAN_GITHUB_URL, which tests point at a folder)."""
    name = repo.removesuffix(".git")
    if not SHORTHAND.match(name) or name.startswith(("-", ".")):
        raise FetchError(
            f"github repository {repo!r} is not of the form 'owner/repo'",
            hint="write the repository as owner/repo, e.g. anthropics/claude-plugins",
        )
    base = os.environ.get(GITHUB_ENV) or GITHUB_DEFAULT
    return f"{base.rstrip('/')}/{name}.git"


def clone_url(kind: str, location: str) -> str:
    """The URL to hand to `git clone` for a github, url or git-subdir source; refuses option
    injection, remote-helper transports (`ext::`, `fd::`) and unknown schemes."""
    if kind == "github" or SHORTHAND.match(location):
        return github_url(location)
    return check_url(location)


def check_url(url: str) -> str:
    if not url or CONTROL.search(url):
        raise FetchError(f"git URL {url!r} is empty or contains a control character", hint=URL_HINT)
    if url.startswith("-"):
        raise FetchError(f"git URL {url!r} starts with '-'", hint=NO_OPTIONS)
    helper = HELPER.match(url)
    if helper:
        raise FetchError(
            f"git URL {url!r} uses the '{helper.group(1)}::' transport, which plugman refuses",
            hint=URL_HINT,
        )
    scheme = SCHEME.match(url)
    if scheme:
        return _check_scheme_url(url, scheme.group(1).lower())
    if url.startswith("/"):
        return url  # a local repository
    scp = SCP.match(url)
    if scp:
        _check_host(url, scp.group(1) or "", scp.group(2))
        return url
    raise FetchError(
        f"git URL {url!r} is neither a URL, 'owner/repo' nor an absolute path",
        hint="use https://host/owner/repo.git, git@host:owner/repo.git or an absolute path",
    )


def _check_scheme_url(url: str, scheme: str) -> str:
    if scheme not in SCHEMES:
        raise FetchError(
            f"git URL {shown(url)!r} uses the unsupported scheme '{scheme}'",
            hint="use an https://, ssh:// or file:// URL",
        )
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError on a malformed port
    except ValueError as exc:
        raise FetchError(f"git URL {shown(url)!r} is malformed: {exc}", hint=URL_HINT) from None
    if scheme == "http" and (parts.hostname or "") not in LOOPBACK:
        raise FetchError(
            f"git URL {shown(url)!r} uses plain http",
            hint="use https:// (plain http is allowed only for 127.0.0.1 and localhost)",
        )
    if scheme != "file":
        _check_host(url, parts.username or "", parts.hostname or "")
    if parts.password is not None or (scheme in ("https", "http") and parts.username):
        raise FetchError(
            f"git URL {shown(url)} carries credentials; plugman never takes (or stores) a "
            "token or password in a URL",
            hint="drop them from the URL and let git find them: a credential helper "
            "(git config --global credential.helper ...) or an SSH key; "
            "see docs/private-sources.md",
        )
    return url


def _check_host(url: str, user: str, host: str) -> None:
    if not host or host.startswith("-") or user.startswith("-"):
        raise FetchError(
            f"git URL {shown(url)!r} has a missing or unsafe host name", hint=NO_OPTIONS
        )


def check_ref(ref: str) -> str:
    """A branch or tag name that git cannot mistake for an option."""
    if ref.startswith("-"):
        raise FetchError(f"git ref {ref!r} starts with '-'", hint=NO_OPTIONS)
    if not ref or CONTROL.search(ref) or BAD_REF.search(ref) or ref.endswith((".lock", "/", ".")):
        raise FetchError(
            f"git ref {ref!r} is not a valid branch or tag name",
            hint="use a branch or tag name such as 'main' or 'v1.2.0'",
        )
    return ref


def check_sha(sha: str) -> str:
    """A full commit id (40 hex, or 64 for SHA-256 repositories), lower-cased."""
    if not SHA.match(sha.lower()):
        raise FetchError(
            f"git sha {sha!r} is not a full commit id",
            hint="give all 40 hexadecimal digits of the commit",
        )
    return sha.lower()


def shown(url: str) -> str:
    """The URL without any password (nor, for http(s), a user name, often a token), for
    messages."""
    match = SCHEME.match(url)
    if not match:
        return url
    try:
        parts = urlsplit(url)
        if "@" not in parts.netloc:
            return url
        host = parts.netloc.rpartition("@")[2]
        if match.group(1).lower() in ("https", "http"):
            return urlunsplit(parts._replace(netloc=f"***@{host}"))
        if parts.password is None:
            return url
        return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))
    except ValueError:
        return url

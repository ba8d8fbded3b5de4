"""Canonical identities: one spelling for each thing a policy names, as the tool that uses it
resolves it, so a rule about a repository, an image or a server holds whatever the spelling.

- `git(location)`: a git repository as git reaches it. The scheme, user and default port do not
  count (`git@host:o/r`, `ssh://git@host:22/o/r` and `https://host/o/r` are one repository), the
  host is put through the URL standard's host parser (case, IDNA, IPv4 forms, a trailing dot),
  the path is percent-decoded with `.`/`..` segments, backslashes, doubled and trailing slashes
  and one `.git` suffix resolved away, and GitHub's `owner/repo` is compared without case (as
  GitHub does), `owner/repo` alone meaning GitHub. A local repository is `file:` and its path.
- `oci(reference)`: an OCI reference as the registry reads it: the registry host without case
  or its default port, Docker Hub's aliases as `docker.io` and its `library/` namespace, the
  repository in lower case (the distribution spec allows no other).
- `web_url(url)`: a server URL as the agents' URL parser reads it (Node's `URL`, the WHATWG URL
  standard), through Ada, the parser Node.js itself uses (`ada-url`, imported only here and only
  when a URL is compared): `http://0x7f.1/`, `http://2130706433/`, `HTTP://LOCALHOST./`,
  `http:\\\\host\\`, `http://user@host/` and `%`-escapes come out as the host they reach.
  `url_matches` applies a policy's `*` pattern to it.

Pure functions: no I/O, nothing printed.
"""

from __future__ import annotations

import os
import posixpath
import re
from functools import lru_cache
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

GITHUB = "github.com"
DEFAULT_PORTS = {"http": 80, "https": 443, "ssh": 22, "git": 9418, "ws": 80, "wss": 443}
SHORTHAND = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
SCP = re.compile(r"^(?:[^@/]+@)?(?P<host>\[[^\]]+\]|[^:/]+):(?!//)(?P<path>.*)$")
DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
UNRESERVED = re.compile(r"%(2[DdEe]|5[Ff]|7[Ee]|3[0-9]|[46][1-9A-Fa-f]|[57][0-9Aa])")
DOCKER_HUB = frozenset({"docker.io", "index.docker.io", "registry-1.docker.io"})


@lru_cache(maxsize=512)
def host(text: str) -> str:
    """A host as the URL standard parses it (lower case, IDNA, IPv4 in dotted form, no trailing
    dot, percent-escapes decoded); the text in lower case when it does not parse as a host."""
    bare = text.strip().lower().rstrip(".")
    if not bare or "*" in bare:
        return bare
    parsed = _ada(f"http://{bare}/")
    return (parsed.hostname if parsed else bare).rstrip(".")


def git(location: str, github_base: str | None = None) -> str:
    """The canonical identity of a git repository location (see the module's docstring).
    `github_base`: a URL standing for https://github.com (plugman's PLUGMAN_GITHUB_URL)."""
    found = _git(location)
    if github_base:
        base = _git(github_base).rstrip("/")
        if found.lower().startswith(base.lower() + "/"):
            found = f"{GITHUB}/{_path(found[len(base) + 1 :]).lower()}"
    return found


def _git(location: str) -> str:
    text = location.strip().replace("\\", "/")
    if SHORTHAND.match(text) and not text.startswith("."):
        return f"{GITHUB}/{_path(text)}".lower()
    scp = SCP.match(text) if "://" not in text and not DRIVE.match(text) else None
    if scp is not None and not text.startswith(("/", ".")):
        return _remote(scp["host"].strip("[]"), None, "ssh", scp["path"])
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return text
    scheme = parts.scheme.lower().replace("git+ssh", "ssh").replace("ssh+git", "ssh")
    if scheme in ("", "file") or DRIVE.match(text):
        path = unquote(parts.path if scheme == "file" else text)
        return "file:" + posixpath.normpath("/" + path.lstrip("/") if scheme else path)
    return _remote(parts.hostname or "", port, scheme, parts.path)


def _remote(name: str, port: int | None, scheme: str, path: str) -> str:
    where = host(name)
    if port is not None and port != DEFAULT_PORTS.get(scheme):
        where += f":{port}"
    found = f"{where}/{_path(path)}"
    return found.lower() if where == GITHUB else found


def _path(path: str) -> str:
    """A repository path: decoded, dot segments resolved, no doubled, leading or trailing
    slash, and no `.git` suffix."""
    text = posixpath.normpath("/" + unquote(path.replace("\\", "/"))).strip("/")
    return text.removesuffix(".git").rstrip("/")


def oci(reference: str) -> str:
    """An OCI reference as the registry reads it (see the module's docstring); `*` patterns
    come out the same way, so a pattern and a reference can be compared."""
    text = reference.strip().removeprefix("oci://").removeprefix("OCI://")
    first, slash, rest = text.partition("/")
    if slash and ("." in first or ":" in first or first.lower() == "localhost"):
        registry, path = first, rest
    else:
        registry, path = "docker.io", text
    name, port_sep, port = registry.rpartition(":") if ":" in registry else (registry, "", "")
    where = host(name.strip("[]")) + (f":{port}" if port_sep and port != "443" else "")
    if where in DOCKER_HUB:
        where = "docker.io"
    repository, at, digest = path.partition("@")
    last = repository.rsplit("/", 1)
    tag = ""
    if ":" in last[-1]:
        repository, tag = repository.rsplit(":", 1)
        tag = ":" + tag
    repository = _path(repository).lower()
    if where == "docker.io" and "/" not in repository:
        repository = f"library/{repository}"
    return f"{where}/{repository}{tag}{at}{digest.lower()}"


class WebUrl(NamedTuple):
    """A URL as the WHATWG URL standard parses it: the scheme, the host (no trailing dot), the
    port it connects to (the scheme's default when none is written) and the path with
    unreserved characters decoded."""

    scheme: str
    host: str
    port: int | None
    path: str


def web_url(text: str) -> WebUrl | None:
    """`text` parsed as Node's `URL` parses it, or None when it does not parse."""
    parsed = _ada(text.strip())
    if parsed is None:
        return None
    scheme = parsed.protocol.rstrip(":").lower()
    port = int(parsed.port) if parsed.port else DEFAULT_PORTS.get(scheme)
    path = UNRESERVED.sub(lambda m: chr(int(m.group(1), 16)), parsed.pathname)
    return WebUrl(scheme, parsed.hostname.rstrip("."), port, path)


def _splits(url: str) -> bool:
    try:
        urlsplit(url).port  # noqa: B018 (does Python's parser take it?)
    except ValueError:
        return False
    return True


def url_matches(pattern: str, url: str) -> bool:
    """Whether `url` fits a policy's `serverUrl` pattern (`*` wildcards anywhere; a host `*`
    spans labels; a pattern without a path or with `/` matches any path, without a port any
    port), both read as the URL standard reads them. A URL that does not parse fits nothing
    (`unparsable` says whether a URL parses: a policy refuses it), nor does one Python's
    `urlsplit` refuses (`A://[@0`): plugman's own clients could not reach it as matched."""
    got = web_url(url)
    if got is None or not _splits(url):
        return False
    if "*" not in pattern:  # a plain URL: read as the agents read it (`HTTP:0`, controls)
        plain = web_url(pattern)
        pattern = _text(plain) if plain is not None and plain.host else pattern
    scheme, sep, rest = pattern.strip().partition("://")
    if not sep:
        scheme, rest = "", pattern.strip()
    rest = rest.replace("\\", "/")
    authority, slash, path = rest.partition("/")
    authority = authority.rpartition("@")[2]
    if scheme and not _glob(scheme.lower()).fullmatch(got.scheme):
        return False
    name, port = _split_port(authority)
    if "*" in name:
        if not _glob(name.lower().rstrip("."), re.IGNORECASE).fullmatch(got.host):
            return False
    elif host(name) != got.host:
        want = web_url(f"{scheme or 'http'}://{name}/")
        if want is None or want.host != got.host:
            return False
    if port and port != "*" and _port(port, scheme) != got.port:
        return False
    if not slash or not path:
        return True
    wanted = UNRESERVED.sub(lambda m: chr(int(m.group(1), 16)), "/" + path)
    return bool(_glob(wanted).fullmatch(got.path))


def unparsable(url: str) -> bool:
    """Whether the URL standard cannot parse `url` (no agent can connect to it)."""
    return web_url(url) is None


def _split_port(authority: str) -> tuple[str, str]:
    if authority.startswith("["):
        inside, _, after = authority.partition("]")
        return inside + "]", after.removeprefix(":")
    name, sep, port = authority.rpartition(":")
    return (name, port) if sep and (port.isdigit() or port == "*") else (authority, "")


def _port(port: str, scheme: str) -> int | None:
    try:
        return int(port)
    except ValueError:
        return DEFAULT_PORTS.get(scheme.lower())


def _glob(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), flags)


class _Parsed(NamedTuple):
    protocol: str
    hostname: str
    port: str
    pathname: str


@lru_cache(maxsize=512)
def _ada(text: str) -> _Parsed | None:
    from ada_url import URL  # ~15 ms: only when a URL is compared

    try:
        url = URL(text)
    except ValueError:
        return None
    return _Parsed(url.protocol, url.hostname, url.port, url.pathname)


def url(text: str) -> str:
    """A URL's canonical text (scheme, host, a port that is not the scheme's default, path;
    no query or fragment), or the text itself when it does not parse."""
    found = web_url(text)
    return text.strip() if found is None else _text(found)


def _text(found: WebUrl) -> str:
    port = "" if found.port == DEFAULT_PORTS.get(found.scheme) else f":{found.port}"
    return f"{found.scheme}://{found.host}{port}{found.path}"


def github_base() -> str | None:
    """The URL standing for https://github.com in tests (PLUGMAN_GITHUB_URL), if any."""
    return os.environ.get("PLUGMAN_GITHUB_URL")

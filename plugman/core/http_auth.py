"""Credentials for an HTTPS download (a marketplace.json by URL, an archive), as their
ecosystems give them, never stored by plugman:

- a headers helper, with Claude Code's `headersHelper` semantics: a shell command, run from the
  home folder with CLAUDE_CODE_MARKETPLACE_URL (and _NAME) set, that prints a JSON object of
  header names to string values within 10 s; its output is used for that one request;
- the user's netrc (`$NETRC` or `~/.netrc`, read by Python's `netrc`): the `machine` entry of
  the URL's host becomes a Basic Authorization header.

Both are bound to the URL's origin: plugman.core.download sends them to that origin only and
drops them on a redirect to another one. A 401 or 403 names the credential to set (`denied`).
"""

from __future__ import annotations

import base64
import json
import netrc
import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

from plugman.core import identity
from plugman.core.errors import FetchError

HELPER_TIMEOUT = 10.0  # Claude Code's limit
HELPER_MAX = 1_000_000  # bytes of output
TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # an HTTP header name
ROUTING = frozenset({"host", "connection", "content-length", "transfer-encoding", "upgrade"})


class Auth(NamedTuple):
    headers: dict[str, str]  # for the URL's origin only
    how: str  # where they came from ("" for none), for the 401/403 hint


class Inherited(NamedTuple):
    url: str  # a url marketplace's URL
    helper: str
    name: str | None


_MARKETPLACE: ContextVar[Inherited | None] = ContextVar("marketplace", default=None)


@contextmanager
def inherit(url: str, helper: str | None, name: str | None) -> Iterator[None]:
    """While fetching a plugin of the url marketplace `url`: an archive download from its
    origin gets the marketplace's headers helper's headers (as Claude Code does)."""
    token = _MARKETPLACE.set(Inherited(url, helper, name) if helper else None)
    try:
        yield
    finally:
        _MARKETPLACE.reset(token)


def default(url: str) -> Auth:
    """The credentials of a download no one gave any for: the enclosing url marketplace's
    helper for its own origin (`inherit`), else the host's netrc entry."""
    market = _MARKETPLACE.get()
    if market is not None and origin(market.url) == origin(url):
        return for_url(market.url, market.helper, market.name)
    return from_netrc(url)


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of a URL as the WHATWG URL standard reads it (`identity.web_url`,
    the parser the agents use): the host without case or a trailing dot, an IPv4 address in
    its one dotted form (`2130706433`, `0x7f.1` are `127.0.0.1`), IDNA applied, the port made
    explicit. Where credentials may go is compared on this, never on the text. A URL that does
    not parse, or that Python's urllib (which connects) reads as another host or port
    (`http://a\\@b/`: the standard's host is `a`, urllib's `b`), has the origin
    ("", its text, -1): it matches only itself and names no host."""
    found = identity.web_url(url)
    if found is None or _connects_to(url) != (found.host.strip("[]"), found.port):
        return "", url, -1
    return found.scheme, found.host, found.port


def _connects_to(url: str) -> tuple[str, int | None] | None:
    """The host and port urllib connects to for `url`, in the standard's spelling."""
    parts = urlsplit(url)
    try:
        port = parts.port or identity.DEFAULT_PORTS.get(parts.scheme.lower())
    except ValueError:
        return None
    name = parts.hostname or ""
    return (name if ":" in name else identity.host(name)), port


def for_url(url: str, helper: str | None = None, name: str | None = None) -> Auth:
    """The credentials for `url`: the helper's headers when one is declared, else the netrc
    entry of its host, else none."""
    if helper:
        return Auth(run_helper(helper, url, name), f"the headers helper `{helper}`")
    return from_netrc(url)


def run_helper(command: str, url: str, name: str | None = None) -> dict[str, str]:
    """Run a headers helper for `url`; the headers it prints. FetchError when it fails, runs
    too long or prints anything but a JSON object of strings (its output is never shown)."""
    env = {**os.environ, "CLAUDE_CODE_MARKETPLACE_URL": url}
    if name:
        env["CLAUDE_CODE_MARKETPLACE_NAME"] = name
    hint = f"run it yourself to check: CLAUDE_CODE_MARKETPLACE_URL={url} {command}"
    try:
        result = subprocess.run(
            command,
            shell=True,  # a command the user declared, run as Claude Code runs it
            cwd=Path.home(),
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=HELPER_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise FetchError(
            f"the headers helper `{command}` did not finish within {HELPER_TIMEOUT:.0f} s",
            hint=hint,
        ) from None
    except OSError as exc:
        raise FetchError(
            f"the headers helper `{command}` could not run: {exc}", hint=hint
        ) from None
    if result.returncode != 0 or not result.stdout.strip():
        raise FetchError(
            f"the headers helper `{command}` failed (exit {result.returncode}"
            + (", no output)" if not result.stdout.strip() else ")"),
            hint=hint,
        )
    return _headers(command, result.stdout, hint)


def _headers(command: str, output: bytes, hint: str) -> dict[str, str]:
    bad = f"the headers helper `{command}` did not print a JSON object of string headers"
    if len(output) > HELPER_MAX:
        raise FetchError(f"{bad} (more than 1 MB)", hint=hint)
    try:
        found = json.loads(output.decode("utf-8").strip())
    except (UnicodeDecodeError, ValueError):
        raise FetchError(bad, hint=hint) from None
    if not isinstance(found, dict) or not all(isinstance(v, str) for v in found.values()):
        raise FetchError(bad, hint=hint)
    headers: dict[str, str] = {}
    for key, value in found.items():
        if not TOKEN.match(key) or re.search(r"[\r\n\0]", value) or key.lower() in ROUTING:
            raise FetchError(
                f"{bad}: the header {key[:40]!r} is malformed or not allowed", hint=hint
            )
        headers[key] = value
    return headers


def netrc_path() -> Path:
    return Path(os.environ.get("NETRC") or Path.home() / ".netrc")


def from_netrc(url: str) -> Auth:
    """Basic credentials from the netrc entry of the URL's host (none without one)."""
    path = netrc_path()
    _, host, port = origin(url)
    host = host.strip("[]")  # netrc names an IPv6 machine without brackets
    if not host or port == -1 or not path.is_file():
        return Auth({}, "")
    try:
        mode = path.stat().st_mode
        if os.name == "posix" and mode & 0o077:
            raise netrc.NetrcParseError("others may read it", str(path))
        entry = netrc.netrc(str(path)).authenticators(host)
    except (netrc.NetrcParseError, OSError) as exc:
        raise FetchError(
            f"{path} cannot be read: {getattr(exc, 'msg', exc)}",
            hint="fix the file (it must be readable by you alone: chmod 600)",
        ) from None
    if entry is None or not entry[2]:
        return Auth({}, "")
    login, _account, password = entry
    token = base64.b64encode(f"{login}:{password}".encode()).decode()
    return Auth({"Authorization": f"Basic {token}"}, f"the {path} entry for machine {host}")


def denied(url: str, status: int, how: str) -> str:
    """What to set after a 401 or 403 from `url`, given where the credentials came from."""
    host = origin(url)[1]
    if how:
        verdict = "were refused" if status == 401 else "do not give access to it"
        return f"the credentials from {how} {verdict}: update them (see docs/private-sources.md)"
    return (
        f"it needs credentials: add a 'machine {host} login ... password ...' entry to "
        f"{netrc_path()}, or declare a headers helper (plugman marketplace add URL "
        "--headers-helper COMMAND); see docs/private-sources.md"
    )

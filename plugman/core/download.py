"""Downloading an archive: https only (http for loopback), size-capped, hashed while streaming.

Credentials (plugman.core.http_auth: a headers helper's output, a netrc entry, a registry
token) go to the URL's origin alone: kept on a redirect within it, dropped on one to another
host. A URL never carries them itself (user:password@ is refused)."""

from __future__ import annotations

import hashlib
import http.client
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit

from plugman.core import http_auth
from plugman.core.errors import FetchError

MAX_DOWNLOAD = 256 * 1024 * 1024
CHUNK = 1024 * 1024
TIMEOUT = 60.0
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
Headers = dict[str, str]
NETWORK_HINT = "check the URL and your network connection"


def check_url(
    url: str, *, redirect: bool = False, local: bool = True, what: str = "archive"
) -> None:
    """https://, http:// to this machine only, and file:// (when `local`, never as a redirect
    target). `what` names the URL in the error ("archive", "npm registry", ...)."""
    try:
        parts = urlsplit(url)
        scheme, host = parts.scheme.lower(), parts.hostname or ""
    except ValueError as exc:
        raise FetchError(
            f"{what} URL {url!r} is malformed: {exc}", hint=f"check the {what} URL"
        ) from None
    if "@" in parts.netloc:
        raise FetchError(
            f"{what} URL {_no_userinfo(url)} carries credentials; plugman never takes (or "
            "stores) a password or token in a URL",
            hint="drop them from the URL: use a ~/.netrc entry for the host, or a headers "
            "helper (see docs/private-sources.md)",
        )
    if scheme == "https" or (scheme == "file" and local and not redirect):
        return
    if scheme == "http" and host in LOOPBACK:
        return
    verb = "redirects to" if redirect else "uses"
    raise FetchError(
        f"{what} URL {url!r} {verb} a scheme plugman does not download from",
        hint=f"{what} URLs must use https:// (plain http only for 127.0.0.1 or localhost)",
    )


def _no_userinfo(url: str) -> str:
    parts = urlsplit(url)
    return parts._replace(netloc="***@" + parts.netloc.rpartition("@")[2]).geturl()


class _CheckedRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to a URL that passes the same rules (no https → http); the
    credentials follow it only within their origin (urllib drops unredirected headers)."""

    def __init__(self, url: str, secret: Headers) -> None:
        super().__init__()
        self.origin = http_auth.origin(url)
        self.secret = secret

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        check_url(newurl, redirect=True)
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and http_auth.origin(newurl) == self.origin:
            for name, value in self.secret.items():
                new.add_unredirected_header(name, value)
        return new


def download(
    url: str,
    target: Path,
    *,
    secret: Headers | None = None,
    auth: http_auth.Auth | None = None,
) -> str:
    """Write the resource at `url` to the file `target`; return its sha256 (hex). `secret`:
    a registry's credentials (npm); `auth`: a marketplace's, whose 401 or 403 names the
    credential to set; with neither, http_auth.default (the marketplace's helper or netrc).
    Either goes to `url`'s origin alone."""
    check_url(url)
    if secret is None and auth is None and urlsplit(url).scheme.lower() in ("https", "http"):
        auth = http_auth.default(url)
    headers = secret if secret is not None else auth.headers if auth else {}
    with _opened(url, {}, headers, auth) as response, target.open("wb") as out:
        return _stream(url, response, out)


def read(
    url: str,
    *,
    accept: str = "application/json",
    limit: int = 64 * 1024 * 1024,
    secret: Headers | None = None,
) -> bytes:
    """The body at `url` (https, or http on this machine; never file://), at most `limit`
    bytes: a registry's JSON document. FetchError (with the HTTP status) on any failure."""
    check_url(url, local=False, what="registry")
    with _opened(url, {"Accept": accept}, secret or {}) as response:
        body = response.read(limit + 1)
    if len(body) > limit:
        raise FetchError(
            f"{url} answered more than {limit // 2**20} MiB", hint="check the registry URL"
        )
    return body


@contextmanager
def _opened(
    url: str, headers: Headers, secret: Headers, auth: http_auth.Auth | None = None
) -> Iterator[IO[bytes]]:
    handlers: list[urllib.request.BaseHandler] = [_CheckedRedirects(url, secret)]
    if (urlsplit(url).hostname or "") in LOOPBACK:
        handlers.append(urllib.request.ProxyHandler({}))
    opener = urllib.request.build_opener(*handlers)
    request = urllib.request.Request(url, headers={"User-Agent": "plugman", **headers})
    for name, value in secret.items():
        request.add_unredirected_header(name, value)  # not sent on to a redirect's target
    try:
        with opener.open(request, timeout=TIMEOUT) as response:
            yield response
    except urllib.error.HTTPError as exc:
        if auth is not None and exc.code in (401, 403):
            raise FetchError(
                f"could not download {url}: HTTP {exc.code} {exc.reason}",
                hint=http_auth.denied(url, exc.code, auth.how),
            ) from None
        raise FetchError(
            f"could not download {url}: HTTP {exc.code} {exc.reason}",
            hint=NETWORK_HINT + "; it may have moved or been removed",
        ) from None
    except urllib.error.URLError as exc:
        raise FetchError(f"could not download {url}: {exc.reason}", hint=NETWORK_HINT) from None
    except (OSError, http.client.HTTPException) as exc:
        raise FetchError(f"could not download {url}: {exc}", hint=NETWORK_HINT) from None


def _stream(url: str, response: IO[bytes], out: IO[bytes]) -> str:
    headers = getattr(response, "headers", None)
    length = str(headers.get("Content-Length", "")) if headers is not None else ""
    if length.isdigit() and int(length) > MAX_DOWNLOAD:
        raise _too_big(url)
    digest, total = hashlib.sha256(), 0
    while chunk := response.read(CHUNK):
        total += len(chunk)
        if total > MAX_DOWNLOAD:
            raise _too_big(url)
        digest.update(chunk)
        out.write(chunk)
    return digest.hexdigest()


def _too_big(url: str) -> FetchError:
    return FetchError(
        f"archive {url} is larger than {MAX_DOWNLOAD // 2**20} MiB",
        hint="plugin archives are limited to 256 MiB",
    )

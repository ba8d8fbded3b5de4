"""One registry's HTTP API over http.client: keep-alive, checked redirects, and the auth
challenge flow (`WWW-Authenticate: Basic` or `Bearer realm=…,service=…,scope=…`).

Credentials are asked for only when the registry answers 401, so an anonymous pull runs no
credential helper. A Bearer token is fetched from the realm (GET with Basic credentials, or a
POST of the identity token as an OAuth2 refresh token) and kept per scope for this client's
life. Authorization is never sent to another host (a blob redirect to a CDN goes without it)
and never over plain http beyond this machine. Nothing here logs a header or a credential.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple
from urllib.parse import urlencode, urljoin, urlsplit

from plugman.core.http_auth import origin
from plugman.core.oci.connections import RegistryError, check_url, opened
from plugman.core.oci.credentials import Credential
from plugman.core.oci.reference import Reference

MAX_REDIRECTS = 5
MAX_SMALL = 4 * 1024 * 1024  # manifests, tokens and error bodies
PARAM = re.compile(r'(\w+)=(?:"([^"]*)"|([^,\s]*))')
LOGIN_HINT = "run: plugman registry login {registry} (or docker login {registry})"


class Challenge(NamedTuple):
    scheme: str  # basic | bearer
    params: dict[str, str]


class Client:
    """Requests to one registry's /v2/ API, authenticated on demand."""

    def __init__(self, ref: Reference, credential: Callable[[], Credential | None]) -> None:
        self.ref = ref
        self.base = f"{ref.scheme}://{ref.host}"
        self._credential = credential
        self._asked = False
        self._found: Credential | None = None
        self._authorization: str | None = None
        self._tokens: dict[tuple[str, str, str], str] = {}
        self._connection: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    @property
    def asked(self) -> bool:
        """Whether the registry asked for credentials (and so was given any there were)."""
        return self._asked

    def credential(self) -> Credential | None:
        if not self._asked:
            self._found, self._asked = self._credential(), True
        return self._found

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
    ) -> http.client.HTTPResponse:
        """An API request (a path under the registry, or an absolute URL it gave), authorised
        as the registry asks, redirects followed. The caller reads or closes the response."""
        url = urljoin(self.base + "/", url)
        home = self.same_host(url)  # an upload's Location may name another host: no credentials
        response = self._send(method, url, headers, body, authorised=home)
        if response.status == 401 and not home:
            self._drain(response)
            raise RegistryError(
                f"{self.ref.registry} sent the request to {_host(url)}, which asks for "
                "credentials; plugman gives the registry's credentials to its own host only",
                where=str(self.ref),
                hint=f"ask the operator of {self.ref.registry} why it hands requests to "
                "another host",
            )
        if response.status == 401:
            challenge = parse_challenge(response.getheader("WWW-Authenticate", ""))
            self._drain(response)
            self._authorization = self._authorize(challenge)
            response = self._send(method, url, headers, body, authorised=True)
            if response.status == 401:
                self._drain(response)
                raise self._refused()
        for _ in range(MAX_REDIRECTS):
            if response.status not in (301, 302, 303, 307, 308) or method not in ("GET", "HEAD"):
                return response
            location = urljoin(url, response.getheader("Location", ""))
            self._drain(response)
            check_url(location, redirect=True)
            url = location
            response = self._send(method, url, headers, None, authorised=self.same_host(url))
        raise RegistryError(f"{self.ref.registry} redirected {method} too many times")

    def _send(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str] | None,
        body: bytes | None,
        *,
        authorised: bool,
    ) -> http.client.HTTPResponse:
        sent = dict(headers or {})
        if authorised and self._authorization:
            sent["Authorization"] = self._authorization
        if body is not None:
            sent["Content-Length"] = str(len(body))
        parts = urlsplit(url)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        same = self.same_host(url)
        for attempt in (1, 2):  # a kept-alive connection the server closed: once more
            connection = self._open() if same else opened(url)
            try:
                connection.request(method, target or "/", body=body, headers=sent)
                return connection.getresponse()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                self.close()
                if attempt == 2 or not same:
                    raise self._unreachable(exc) from None
            except (OSError, http.client.HTTPException) as exc:
                self.close()
                raise self._unreachable(exc) from None
        raise AssertionError("unreachable")

    def same_host(self, url: str) -> bool:
        """Whether `url` is on the registry's own origin (scheme, host and port, compared
        canonically): the only place its credentials go."""
        return origin(url) == origin(self.base)

    def _unreachable(self, exc: Exception) -> RegistryError:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        return RegistryError(
            f"cannot reach the registry {self.ref.registry}: {reason}",
            hint="check the registry's address and port, and that it is running and reachable "
            "from here",
        )

    def _drain(self, response: http.client.HTTPResponse) -> None:
        if not drain(response):
            self.close()

    def _open(self) -> http.client.HTTPConnection:
        if self._connection is None:
            self._connection = opened(self.base)
        return self._connection

    def _authorize(self, challenge: Challenge) -> str:
        found = self.credential()
        if challenge.scheme == "basic":
            if found is None or found.password is None:
                raise self._refused()
            pair = f"{found.username or ''}:{found.password}".encode()
            return "Basic " + base64.b64encode(pair).decode()
        if challenge.scheme != "bearer" or not challenge.params.get("realm"):
            raise RegistryError(
                f"{self.ref.registry} asks for an authentication plugman does not speak "
                f"({challenge.scheme or 'none given'})",
                hint="plugman speaks Basic and Bearer token authentication",
            )
        get = challenge.params.get
        key = (get("realm", ""), get("service", ""), get("scope", ""))
        token = self._tokens.get(key) or self._token(challenge.params, found)
        self._tokens[key] = token
        return f"Bearer {token}"

    def _token(self, params: dict[str, str], found: Credential | None) -> str:
        realm = params["realm"]
        check_url(realm, redirect=False, what="token realm")
        query = [("service", params["service"])] if params.get("service") else []
        query += [("scope", scope) for scope in params.get("scope", "").split() if scope]
        headers = {"Accept": "application/json"}
        if found is not None and found.identity_token:
            form = [("grant_type", "refresh_token"), ("client_id", "plugman")]
            form += [("refresh_token", found.identity_token), *query]
            body: bytes | None = urlencode(form).encode()
            method, url = "POST", realm
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        else:
            body, method = None, "GET"
            url = realm + ("&" if "?" in realm else "?") + urlencode(query)
            if found is not None and found.password is not None:
                pair = f"{found.username or ''}:{found.password}".encode()
                headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        connection = opened(realm)
        try:
            parts = urlsplit(url)
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            connection.request(method, target or "/", body=body, headers=headers)
            response = connection.getresponse()
            data = read_small(response, f"the token from {realm}")
        except (OSError, http.client.HTTPException) as exc:
            raise RegistryError(
                f"could not get a token for {self.ref.registry} from {realm}: {exc}",
                hint="check the registry address and your network connection",
            ) from None
        finally:
            connection.close()
        if response.status in (401, 403):
            raise self._refused()
        token = _token_of(data) if response.status == 200 else None
        if not token:
            raise RegistryError(
                f"the token service {realm} of {self.ref.registry} answered "
                f"HTTP {response.status} without a token",
                hint=LOGIN_HINT.format(registry=self.ref.registry),
            )
        return token

    def _refused(self) -> RegistryError:
        found = self.credential()
        registry = self.ref.registry
        if found is None:
            return RegistryError(
                f"{registry} requires a login and plugman has no credentials for it",
                where=str(self.ref),
                hint=LOGIN_HINT.format(registry=registry),
            )
        return RegistryError(
            f"{registry} refused the credentials from {found.origin}",
            where=str(self.ref),
            hint="check the user name and password or token; "
            + LOGIN_HINT.format(registry=registry),
        )


def parse_challenge(header: str) -> Challenge:
    scheme, _, rest = header.strip().partition(" ")
    params = {m[1].lower(): m[2] or m[3] for m in PARAM.finditer(rest)}
    return Challenge(scheme.lower(), params)


def _token_of(data: bytes) -> str | None:
    try:
        found: Any = json.loads(data)
    except ValueError:
        return None
    if not isinstance(found, dict):
        return None
    token = found.get("token") or found.get("access_token")
    return token if isinstance(token, str) and token else None


def _host(url: str) -> str:
    scheme, host, port = origin(url)
    return f"{scheme}://{host}:{port}"


def read_small(response: http.client.HTTPResponse, what: str, cap: int = MAX_SMALL) -> bytes:
    """A response body that must be small (a manifest, a token, an error); a HEAD response
    has none, whatever its Content-Length says. The caller closes the connection when this
    fails (what is left unread makes it unusable)."""
    data = response.read(cap + 1)
    if len(data) > cap:
        response.close()
        raise RegistryError(f"{what} is larger than {cap // 1024} KiB; plugman will not read it")
    return data


def drain(response: http.client.HTTPResponse) -> bool:
    """Read what is left of a response we do not use, so the connection can be reused;
    whether it could be (False: too much was left, close the connection)."""
    with contextlib.suppress(RegistryError):
        read_small(response, "a response")
        return True
    return False

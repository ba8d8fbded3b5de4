"""`plugman mcp login|logout`: OAuth for remote MCP servers.

The flow is the mcp SDK's `OAuthClientProvider` (protected-resource and authorization-server
discovery, dynamic client registration, PKCE S256, `state` and `iss` checks, the `resource`
parameter, refresh-token rotation), built by plugman.runtime.oauth.provider. plugman adds a
loopback callback server (plugman.runtime.oauth.callback), and opens the browser or, with
`--no-browser`, gives the authorization URL to `announce` (the CLI prints it on stderr). What
the login gave (tokens, client registration, expiry, discovered metadata) is stored only once
it succeeded (plugman.runtime.oauth.store), and the server's cached `needs-auth` is cleared.

A login always registers a new client: the loopback port changes from one login to the next,
and authorization servers compare the redirect URI exactly.
"""

from __future__ import annotations

import logging
import os
import sys
import time
import webbrowser
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import anyio

from plugman.core.errors import PlugmanError, UsageError
from plugman.core.jsonvalue import ServerEntry
from plugman.core.paths import Paths
from plugman.core.secrets import open_store
from plugman.manifest.mcp import transport
from plugman.runtime.oauth import auth_cache
from plugman.runtime.oauth import store as oauth_store
from plugman.runtime.oauth.callback import Callback
from plugman.runtime.oauth.provider import REMOTE, provider
from plugman.runtime.oauth.store import OAuthLogin, TokenStore
from plugman.runtime.transport.connect import Trace, open_client
from plugman.runtime.transport.failure import failure, leaves

CONNECT_TIMEOUT = 30.0
Announce = Callable[[str], None]


class Remote(NamedTuple):
    name: str
    kind: str  # http | sse
    url: str
    entry: ServerEntry


@dataclass(frozen=True)
class LoginResult:
    name: str
    url: str
    transport: str
    store: str  # keyring | file
    where: str
    expires_at: float | None
    tools: int
    seconds: float


@dataclass(frozen=True)
class LogoutResult:
    name: str
    url: str
    removed: bool
    store: str
    where: str


def find_remote(paths: Paths, name: str, env: Mapping[str, str] | None = None) -> Remote:
    """The resolved http or sse server `name`; UsageError for any other name."""
    # lazy: config.resolution takes ~16 ms to import, only this path needs it
    from plugman.config.resolution import resolve

    resolved = resolve(paths, os.environ if env is None else env)
    server = resolved.servers.get(name)
    if server is None:
        raise UsageError(f"no MCP server named {name!r}", hint="run: plugman mcp list")
    kind = transport(server.entry)
    url = server.entry.get("url")
    if kind not in REMOTE or not isinstance(url, str) or not url:
        raise UsageError(
            f"{name} is a {kind or 'unknown'} server: OAuth login is for http and sse servers"
        )
    return Remote(name, kind, url, dict(server.entry))


def login(
    paths: Paths,
    name: str,
    *,
    browser: bool = True,
    timeout: float = 300.0,
    announce: Announce | None = None,
) -> LoginResult:
    """Log in to server `name` and store what the login gave; the browser (or `announce`) gets
    the authorization URL, and the callback must arrive within `timeout` seconds."""
    remote = find_remote(paths, name)
    store = open_store(paths)
    started = time.monotonic()
    record = OAuthLogin(server_url=remote.url)
    tools = anyio.run(_login, remote, record, browser, timeout, announce or (lambda _: None))
    if record.tokens is None:
        raise PlugmanError(
            f"{name} did not ask for authorization: there is nothing to log in to",
            hint=f"run: plugman mcp probe {name}",
        )
    oauth_store.save(store, record)
    auth_cache.clear(paths, name)
    return LoginResult(
        name,
        remote.url,
        remote.kind,
        store.kind,
        store.where,
        record.expires_at,
        tools,
        time.monotonic() - started,
    )


def logout(paths: Paths, name: str) -> LogoutResult:
    """Forget the stored login of server `name` (the tokens stay valid at the server until they
    expire: plugman does not revoke them)."""
    remote = find_remote(paths, name)
    store = open_store(paths)
    removed = oauth_store.forget(store, remote.url)
    return LogoutResult(name, remote.url, removed, store.kind, store.where)


async def _login(
    remote: Remote, record: OAuthLogin, browser: bool, timeout: float, announce: Announce
) -> int:
    _quiet_sdk_logging()
    with Callback() as callback:

        async def redirect(url: str) -> None:
            if browser and _open_browser(url):
                announce(f"Opened a browser to log in to {remote.name}; if none opened, visit:")
            else:
                announce(f"To log in to {remote.name}, open this URL in a browser:")
            announce(url)
            announce(f"Waiting for the login (at most {timeout:g} s)...")

        async def answer() -> Any:
            # lazy: mcp takes ~595 ms to import, only this path needs it
            from mcp.shared.auth import AuthorizationCodeResult

            got = await callback.wait(timeout)
            return AuthorizationCodeResult(code=got.code or "", state=got.state, iss=got.iss)

        storage = TokenStore(record)
        auth = provider(remote.url, storage, [callback.redirect_uri], redirect, answer)
        trace = Trace()
        try:
            with anyio.fail_after(timeout + 2 * CONNECT_TIMEOUT):
                async with open_client(
                    remote.name,
                    remote.entry,
                    errlog=sys.stderr,  # used by stdio servers only
                    timeout=CONNECT_TIMEOUT,
                    trace=trace,
                    auth=auth,
                ) as client:
                    listed = await client.list_tools()
        except Exception as exc:
            raise _login_error(remote.name, exc, trace, failure) from None
        _keep_metadata(record, auth)
        return len(listed.tools)


def _quiet_sdk_logging() -> None:
    """The SDK logs a failed flow with its traceback: keep it off the user's terminal."""
    logger = logging.getLogger("mcp")
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())
    logger.propagate = False


def _open_browser(url: str) -> bool:
    try:
        return bool(webbrowser.open(url))
    except webbrowser.Error:
        return False


def _login_error(name: str, exc: BaseException, trace: Any, failure: Any) -> PlugmanError:
    # lazy: mcp takes ~655 ms to import, only this path needs it
    from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError

    found = list(leaves(exc))
    for leaf in found:
        if isinstance(leaf, PlugmanError):
            return leaf
    for leaf in found:
        if isinstance(leaf, OAuthFlowError | OAuthRegistrationError | OAuthTokenError):
            return PlugmanError(
                f"login to {name} failed: {leaf}",
                hint="run the login again; if it keeps failing, ask the server's operators",
            )
    if any(isinstance(leaf, TimeoutError) for leaf in found):
        return PlugmanError(f"login to {name} timed out", hint="raise --timeout")
    _, reason = failure(exc, trace, CONNECT_TIMEOUT)
    return PlugmanError(f"cannot log in to {name}: {reason}", hint=f"run: plugman mcp probe {name}")


def _keep_metadata(record: OAuthLogin, auth: Any) -> None:
    context = auth.context
    if context.oauth_metadata is not None:
        record.auth_metadata = context.oauth_metadata.model_dump(mode="json", exclude_none=True)
    if context.protected_resource_metadata is not None:
        prm = context.protected_resource_metadata
        record.resource_metadata = prm.model_dump(mode="json", exclude_none=True)

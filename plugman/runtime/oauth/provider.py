"""The `httpx2.Auth` of a remote MCP server's OAuth login: the mcp SDK's `OAuthClientProvider`,
with what it leaves out for a command line that runs again and again.

- The expiry the SDK forgets (credentials.md, pitfall 1): `_Provider` hands the stored expiry
  (plugman.runtime.oauth.store) and the metadata discovered at login back to the SDK before its
  first request, so a new process with an expired access token refreshes it first.
- A refresh after a 401 (which the SDK does not try): an access token the server refuses
  although it had not expired by our clock (revoked, or a clock that runs ahead) is refreshed
  once, and the request sent again, before the SDK starts a new authorization.
- `authorizer`: for probe, tools and the gateway, the provider of a server's stored login, in a
  non-interactive mode: where the SDK would start a new authorization, `NeedsLoginError` ends
  the connection instead (it has seen HTTP 401, so it is reported as `needs-auth`).
- One refresh at a time across processes: refresh tokens rotate, so of two processes refreshing
  with the same one the second is refused and would fall back to needs-auth. A process whose
  access token is due takes `<state>/locks/oauth-<url hash>.lock` first, then reloads the
  stored login: when another process refreshed meanwhile, it uses those tokens instead. Gateway
  replicas sharing logins (`--shared-oauth`) take a Redis lock instead
  (plugman.runtime.oauth.sealed).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any, NamedTuple

import anyio.to_thread

from plugman.core import progress
from plugman.core.errors import PlugmanError
from plugman.core.fs import FileLock
from plugman.core.paths import Paths
from plugman.core.secrets import Store, open_store
from plugman.manifest.mcp import transport
from plugman.runtime.oauth import store as oauth_store
from plugman.runtime.oauth.store import TokenStore

REMOTE = ("http", "sse")
CLIENT_NAME = "plugman"
AuthFor = Callable[[str, Mapping[str, Any]], Any]  # (name, entry) -> httpx2.Auth | None


class Shared(NamedTuple):
    """What processes using one stored login share: the lock a refresh takes (a new context
    manager each time: a FileLock, or plugman.runtime.oauth.sealed's Redis lock), and the login
    as the store holds it now."""

    lock: Callable[[], Any]
    reload: Callable[[], oauth_store.OAuthLogin | None]


class NeedsLoginError(PlugmanError):
    """The server wants an interactive login, and this is not `plugman mcp login`."""


def authorizer(
    paths: Paths,
    env: Mapping[str, str] | None = None,
    shared: Callable[[Store | None], Any] | None = None,
) -> AuthFor:
    """(name, entry) -> the `httpx2.Auth` of the server's stored login, or None. The secret
    store is opened at the first remote server, once; `shared` (the gateway's --shared-oauth)
    makes the store logins are kept in from it (plugman.runtime.oauth.sealed.SharedLogins)."""
    opened: list[Any] = []

    def store() -> Any:
        if not opened:
            try:
                local: Store | None = open_store(paths, env)
            except PlugmanError as exc:
                progress.warn(f"stored OAuth logins are not used: {exc.message}")
                local = None
            opened.append(local if shared is None else shared(local))
        return opened[0]

    def auth_for(name: str, entry: Mapping[str, Any]) -> Any:
        url = entry.get("url")
        if transport(entry) not in REMOTE or not isinstance(url, str) or not url:
            return None
        found = store()
        try:
            record = None if found is None else oauth_store.load(found, url)
        except PlugmanError as exc:
            progress.warn(f"{name}: {exc.message}")
            return None
        if found is None or record is None or record.tokens is None:
            return None
        storage = TokenStore(record, functools.partial(oauth_store.save, found))
        redirects = (record.client_info or {}).get("redirect_uris") or ["http://127.0.0.1/callback"]

        async def no_login(url: str) -> None:
            raise NeedsLoginError(f"{name} needs a new login", hint=f"plugman mcp login {name}")

        async def no_callback() -> Any:
            raise NeedsLoginError(f"{name} needs a new login", hint=f"plugman mcp login {name}")

        digest = hashlib.sha256(url.encode()).hexdigest()[:16]
        local = functools.partial(FileLock, paths.state_dir / "locks" / f"oauth-{digest}.lock")
        lock = local
        if hasattr(found, "lock"):  # shared by replicas: a Redis lock, the file one without it
            lock = functools.partial(found.lock, oauth_store.key_of(url), local())
        together = Shared(lock, functools.partial(_reload, found, url))
        return provider(url, storage, list(redirects), no_login, no_callback, together)

    return auth_for


def _reload(found: Store, url: str) -> oauth_store.OAuthLogin | None:
    """The login as the store holds it now; None if it cannot be read (a refresh then goes on
    with the tokens it has)."""
    try:
        return oauth_store.load(found, url)
    except PlugmanError:
        return None


def provider(
    url: str,
    storage: TokenStore,
    redirect_uris: list[str],
    redirect: Callable[[str], Any],
    callback: Callable[[], Any],
    shared: Shared | None = None,
) -> Any:
    # lazy: mcp takes ~665 ms to import, only this path needs it
    from mcp.shared.auth import OAuthClientMetadata

    metadata = OAuthClientMetadata.model_validate(
        {
            "client_name": CLIENT_NAME,
            "redirect_uris": redirect_uris,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        }
    )
    provider: Any = _provider_class()(url, metadata, storage, redirect, callback)
    provider.shared = shared
    return provider


@functools.cache
def _provider_class() -> Any:
    """`OAuthClientProvider`, restoring what the record keeps and the SDK does not reload."""
    # lazy: mcp takes ~592 ms to import, only this path needs it
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthMetadata, OAuthToken, ProtectedResourceMetadata

    class _Provider(OAuthClientProvider):
        shared: Shared | None = None

        async def _initialize(self) -> None:
            await super()._initialize()
            storage = self.context.storage
            if not isinstance(storage, TokenStore):
                return
            record = storage.record
            self.context.token_expiry_time = record.refresh_due()
            if record.auth_metadata and self.context.oauth_metadata is None:
                self.context.oauth_metadata = OAuthMetadata.model_validate(record.auth_metadata)
            if record.resource_metadata and self.context.protected_resource_metadata is None:
                prm = ProtectedResourceMetadata.model_validate(record.resource_metadata)
                self.context.protected_resource_metadata = prm

        async def _refresh_turn(self) -> Any:
            """When the access token is due: the shared lock, held, and the tokens another
            process stored while this one waited for it (None: no refresh is due)."""
            if self.shared is None:
                return None
            async with self.context.lock:
                if not self._initialized:
                    await self._initialize()
                if self.context.is_token_valid() or not self.context.can_refresh_token():
                    return None
            lock = self.shared.lock()
            await anyio.to_thread.run_sync(lock.__enter__)
            record, storage = self.shared.reload(), self.context.storage
            if (
                record is not None
                and record.tokens
                and isinstance(storage, TokenStore)
                and record.tokens != storage.record.tokens
            ):
                storage.record = record
                self.context.current_tokens = OAuthToken.model_validate(record.tokens)
                self.context.token_expiry_time = record.refresh_due()
            return lock

        async def _auth_flow(self, request: Any) -> AsyncGenerator[Any, Any]:
            """The SDK's flow, its refresh taken in turns (`_refresh_turn`); and a 401 to a
            bearer token is first answered by one refresh."""
            held = await self._refresh_turn()
            inner = super()._auth_flow(request)
            retried = False
            try:
                outgoing = await inner.__anext__()
                while True:
                    response = yield outgoing
                    if (
                        outgoing is request
                        and response.status_code == 401
                        and not retried
                        and "authorization" in request.headers
                        and self.context.can_refresh_token()
                    ):
                        retried = True
                        refreshed = yield await self._refresh_token()
                        if await self._handle_refresh_response(refreshed):
                            self._add_auth_header(request)
                            response = yield request
                    outgoing = await inner.asend(response)
            except StopAsyncIteration:
                return
            finally:
                await inner.aclose()
                if held is not None:
                    held.__exit__(None, None, None)

    return _Provider

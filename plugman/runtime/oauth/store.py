"""A remote MCP server's OAuth login, kept in the secret store (plugman.core.secrets).

One value per server URL, under the key `oauth:<server url>`: a JSON object with the tokens,
the dynamic client registration, the absolute expiry of the access token, and the metadata
discovered at login (the authorization server's, so a refresh in a new process goes to the right
token endpoint; the protected resource's, so it carries the `resource` parameter).

`TokenStore` is the mcp SDK's `TokenStorage` protocol over one such record. The SDK does not
restore the expiry of stored tokens (credentials.md, pitfall 1), so the record keeps it and
plugman.runtime.oauth.provider hands it back to the provider before its first request.

Nothing here imports the SDK at module level: its types are built inside the methods.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from plugman.core.errors import PlugmanError
from plugman.core.jsonvalue import JSONObject
from plugman.core.secrets import Store

if TYPE_CHECKING:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

PREFIX = "oauth:"
SKEW = 30.0  # refresh this long before the access token expires (at most a tenth of its life)


def key_of(url: str) -> str:
    return PREFIX + url


@dataclass
class OAuthLogin:
    """What one login left; the dicts are the SDK models' JSON (a JSON boundary)."""

    server_url: str
    tokens: JSONObject | None = None
    client_info: JSONObject | None = None
    expires_at: float | None = None  # absolute, seconds since the epoch; None: never expires
    lifetime: float | None = None  # the access token's expires_in when it was issued
    auth_metadata: JSONObject | None = None
    resource_metadata: JSONObject | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str, url: str) -> OAuthLogin:
        try:
            data = json.loads(text)
            if not isinstance(data, dict):
                raise ValueError("not an object")
            fields = {k: data.get(k) for k in cls.__dataclass_fields__ if k != "server_url"}
            return cls(server_url=url, **fields)
        except (ValueError, TypeError):
            raise PlugmanError(
                f"the stored OAuth login for {url} is unreadable",
                hint="log in again: plugman mcp login NAME",
            ) from None

    def refresh_due(self) -> float | None:
        """When to treat the access token as expired: a little before it is."""
        if self.expires_at is None:
            return None
        margin = min(SKEW, (self.lifetime or 0.0) / 10)
        return self.expires_at - margin


def load(store: Store, url: str) -> OAuthLogin | None:
    text = store.get(key_of(url))
    return None if text is None else OAuthLogin.from_json(text, url)


def save(store: Store, record: OAuthLogin) -> None:
    store.set(key_of(record.server_url), record.to_json())


def forget(store: Store, url: str) -> bool:
    return store.delete(key_of(url))


class TokenStore:
    """The SDK's `TokenStorage` over one `OAuthLogin`; `on_change` persists it (None: memory only,
    as during a login until it succeeds)."""

    def __init__(
        self, record: OAuthLogin, on_change: Callable[[OAuthLogin], None] | None = None
    ) -> None:
        self.record = record
        self.on_change = on_change

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.record)

    async def get_tokens(self) -> OAuthToken | None:
        # lazy: mcp takes ~567 ms to import, only this path needs it
        from mcp.shared.auth import OAuthToken

        found = self.record.tokens
        return None if found is None else OAuthToken.model_validate(found)

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.record.tokens = tokens.model_dump(mode="json", exclude_none=True)
        life = tokens.expires_in
        self.record.lifetime = None if life is None else float(life)
        self.record.expires_at = None if life is None else time.time() + float(life)
        self._changed()

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        # lazy: mcp takes ~567 ms to import, only this path needs it
        from mcp.shared.auth import OAuthClientInformationFull

        found = self.record.client_info
        return None if found is None else OAuthClientInformationFull.model_validate(found)

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.record.client_info = client_info.model_dump(mode="json", exclude_none=True)
        self._changed()

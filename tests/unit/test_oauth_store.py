"""The stored OAuth login (runtime/oauth_store) over the real file store, the provider's restored
expiry, and the needs-auth cache (runtime/auth_cache). The whole flow against a real server is
tests/integration/test_oauth.py."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path

import anyio
import pytest

from plugman.core.errors import PlugmanError
from plugman.core.paths import Paths
from plugman.core.secrets import FileStore
from plugman.runtime.oauth import auth_cache
from plugman.runtime.oauth import store as oauth_store
from plugman.runtime.oauth.provider import authorizer
from plugman.runtime.oauth.store import OAuthLogin, TokenStore

URL = "https://mcp.example.com/mcp"


@pytest.fixture
def paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Paths:
    monkeypatch.setenv("PLUGMAN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PLUGMAN_SECRETS", "file")
    return Paths.from_env(project=tmp_path)


def test_token_store_keeps_tokens_registration_and_expiry(tmp_path: Path) -> None:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

    store = FileStore(tmp_path / "secrets.json")
    storage = TokenStore(OAuthLogin(URL), lambda record: oauth_store.save(store, record))
    before = time.time()
    token = OAuthToken(access_token="at-1", refresh_token="rt-1", expires_in=600)
    anyio.run(storage.set_tokens, token)
    client = OAuthClientInformationFull(client_id="c1", redirect_uris=["http://127.0.0.1:1/cb"])
    anyio.run(storage.set_client_info, client)
    assert stat.S_IMODE((tmp_path / "secrets.json").stat().st_mode) == 0o600

    loaded = oauth_store.load(store, URL)
    assert loaded is not None and loaded.expires_at is not None
    assert before + 600 <= loaded.expires_at <= time.time() + 600
    assert loaded.refresh_due() == pytest.approx(loaded.expires_at - 30)
    again = TokenStore(loaded)
    tokens = anyio.run(again.get_tokens)
    assert tokens is not None and (tokens.access_token, tokens.refresh_token) == ("at-1", "rt-1")
    info = anyio.run(again.get_client_info)
    assert info is not None and info.client_id == "c1"
    assert oauth_store.forget(store, URL) and oauth_store.load(store, URL) is None


def test_a_short_lived_token_is_refreshed_a_tenth_of_its_life_early() -> None:
    record = OAuthLogin(URL, expires_at=1000.0, lifetime=2.0)
    assert record.refresh_due() == pytest.approx(999.8)
    assert OAuthLogin(URL).refresh_due() is None  # no expires_in: never refreshed by time


def test_an_unreadable_record_is_an_error_with_the_fix(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "secrets.json")
    store.set(oauth_store.key_of(URL), "[1, 2]")
    with pytest.raises(PlugmanError, match="unreadable") as caught:
        oauth_store.load(store, URL)
    assert caught.value.hint is not None and "plugman mcp login" in caught.value.hint


def test_the_provider_gets_the_stored_expiry_back(paths: Paths) -> None:
    """credentials.md pitfall 1: the SDK reloads tokens without their expiry."""
    from plugman.core.secrets import open_store

    store = open_store(paths)
    expired = OAuthLogin(
        URL,
        tokens={"access_token": "at-old", "token_type": "Bearer", "refresh_token": "rt"},
        client_info={"client_id": "c1", "redirect_uris": ["http://127.0.0.1:1/callback"]},
        expires_at=time.time() - 5,
        lifetime=3600,
        auth_metadata={
            "issuer": "https://auth.example.com",
            "authorization_endpoint": "https://auth.example.com/authorize",
            "token_endpoint": "https://auth.example.com/oauth/token",
            "response_types_supported": ["code"],
        },
    )
    oauth_store.save(store, expired)
    auth_for = authorizer(paths)
    assert auth_for("stdio", {"command": "x"}) is None
    assert auth_for("unknown", {"type": "http", "url": "https://other.example.com/mcp"}) is None
    provider = auth_for("remote", {"type": "http", "url": URL})
    anyio.run(provider._initialize)
    context = provider.context
    assert context.token_expiry_time == pytest.approx(expired.expires_at - 30)
    assert not context.is_token_valid() and context.can_refresh_token()
    refresh = anyio.run(provider._refresh_token)  # to the stored endpoint, not <origin>/token
    assert str(refresh.url) == "https://auth.example.com/oauth/token"


def test_needs_auth_cache_expires_follows_the_url_and_holds_no_url(paths: Paths) -> None:
    secret_url = "https://mcp.example.com/mcp?key=sk-in-the-query"
    now = time.time()
    auth_cache.update(paths, {"a": secret_url, "b": URL}, [], now=now)
    assert auth_cache.cached(paths, {"a": secret_url, "b": URL}, now=now + 899) == {
        "a": now,
        "b": now,
    }
    assert auth_cache.cached(paths, {"a": secret_url}, now=now + 900) == {}
    assert auth_cache.cached(paths, {"a": URL + "/other"}, now=now + 1) == {}  # url changed
    text = (paths.state_dir / auth_cache.FILE).read_text()
    assert "sk-in-the-query" not in text and "example.com" not in text
    auth_cache.clear(paths, "a")
    assert set(json.loads((paths.state_dir / auth_cache.FILE).read_text())) == {"b"}

"""`plugman mcp login` and `plugman mcp logout`: what was stored or forgotten, and where (never
a token)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from plugman.output.common import envelope

if TYPE_CHECKING:
    from plugman.runtime.oauth.login import LoginResult, LogoutResult


def _store(kind: str, where: str) -> str:
    return "the OS keychain" if kind == "keyring" else where


def logged_in(result: LoginResult, as_json: bool) -> str:
    if as_json:
        return envelope(
            "mcp login",
            name=result.name,
            url=result.url,
            transport=result.transport,
            store={"kind": result.store, "where": result.where},
            expires_at=result.expires_at,
            tools=result.tools,
            seconds=round(result.seconds, 3),
        )
    if result.expires_at is None:
        expiry = "the access token does not expire"
    else:
        left = max(0, round(result.expires_at - time.time()))
        expiry = f"the access token expires in {left} s and is refreshed as needed"
    return (
        f"logged in to {result.name} ({result.url}): {result.tools} tools; {expiry}\n"
        f"tokens stored in {_store(result.store, result.where)}"
    )


def logged_out(result: LogoutResult, as_json: bool) -> str:
    if as_json:
        return envelope(
            "mcp logout",
            name=result.name,
            url=result.url,
            removed=result.removed,
            store={"kind": result.store, "where": result.where},
        )
    if not result.removed:
        return f"{result.name} had no stored login"
    where = _store(result.store, result.where)
    return f"logged out of {result.name}: its tokens were removed from {where}"

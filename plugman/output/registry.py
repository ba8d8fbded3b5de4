"""`plugman registry login|logout`: what was stored or forgotten, and where (never a secret)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plugman.output.common import envelope

if TYPE_CHECKING:
    from plugman.core.oci.login import LoginResult, LogoutResult


def _store(kind: str, where: str) -> str:
    return "the OS keychain" if kind == "keyring" else where


def registry_logged_in(result: LoginResult, as_json: bool) -> str:
    if as_json:
        return envelope(
            "registry login",
            registry=result.registry,
            username=result.username,
            checked=result.checked,
            store={"kind": result.store, "where": result.where},
        )
    checked = "accepted by" if result.checked else "stored (it asked for none) for"
    return (
        f"logged in to {result.registry} as {result.username or '(no user name)'}: "
        f"credentials {checked} the registry\n"
        f"stored in {_store(result.store, result.where)}"
    )


def registry_logged_out(result: LogoutResult, as_json: bool) -> str:
    if as_json:
        return envelope(
            "registry logout",
            registry=result.registry,
            removed=result.removed,
            store={"kind": result.store, "where": result.where},
        )
    if not result.removed:
        return f"{result.registry} had no login stored by plugman"
    return f"logged out of {result.registry}: removed from {_store(result.store, result.where)}"

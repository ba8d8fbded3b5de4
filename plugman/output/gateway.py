"""`plugman mcp token`: the gateway's bearer token, by fingerprint; the value only with --show."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plugman.output.common import envelope

if TYPE_CHECKING:
    from plugman.runtime.gateway.token import Token


def _origin(found: Token) -> str:
    if found.source == "environment":
        return f"from {found.where}"
    store = "the OS keychain" if found.source == "keyring" else found.where
    made = "made and stored" if found.created else "replaced" if found.rotated else "stored"
    return f"{made} in {store}"


def gateway_token(found: Token, *, show: bool, as_json: bool) -> tuple[str, str | None]:
    """What `mcp token` prints on stdout, and a note for stderr (or None)."""
    restart = "; restart running gateways" if found.rotated else ""
    if as_json:
        body = {
            "fingerprint": found.fingerprint,
            "store": {"kind": found.source, "where": found.where},
            "created": found.created,
            "rotated": found.rotated,
        }
        return envelope("mcp token", **body, **({"token": found.value} if show else {})), None
    about = f"gateway token {found.fingerprint}, {_origin(found)}{restart}"
    if show:
        return found.value, about
    usage = (
        "clients of `plugman mcp serve --transport http --auth token` send it as "
        "`Authorization: Bearer <token>`; `plugman mcp token --show` prints it"
    )
    return f"{about}\n{usage}", None

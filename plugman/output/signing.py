"""Results of `plugman key generate` and `plugman sign`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plugman.output.common import display_path, envelope

if TYPE_CHECKING:
    from plugman.plugins.supply_chain.keys import Generated
    from plugman.plugins.supply_chain.signing import Signed


def key_generated(made: Generated, as_json: bool) -> str:
    private, public = display_path(str(made.private)), display_path(str(made.public))
    if as_json:
        return envelope(
            "key generate",
            private_key=private,
            public_key=public,
            fingerprint=made.fingerprint,
            encrypted=made.encrypted,
        )
    how = "encrypted with PLUGMAN_SIGNING_PASSWORD" if made.encrypted else "not encrypted"
    return "\n".join(
        [
            f"wrote {private} (private: keep it secret; {how})",
            f"wrote {public} (public: give it to those who verify)",
            f"  fingerprint  {made.fingerprint}",
            f"sign: plugman publish DIR oci://REF --sign {private}",
        ]
    )


def signed(done: Signed, as_json: bool) -> str:
    if as_json:
        return envelope(
            "sign",
            ref=done.ref,
            digest=done.digest,
            signer=done.signer,
            signature=done.signature,
        )
    return "\n".join(
        [
            f"signed {done.ref}@{done.digest}",
            f"  signer     {done.signer}",
            f"  signature  {done.signature}",
        ]
    )

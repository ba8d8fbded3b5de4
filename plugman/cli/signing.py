"""`plugman key generate` and `plugman sign`: signing keys and signing published artifacts."""

from __future__ import annotations

import os
from pathlib import Path

from plugman import output
from plugman.cli.argv import JSON, VALUE, Argument, Command, Context, Group, Option
from plugman.cli.common import paths_of
from plugman.plugins.supply_chain.keys import generate as make
from plugman.plugins.supply_chain.signing import sign as sign_it


def generate(
    prefix: Path = Path("plugman"),
    as_json: bool = False,
) -> None:
    """Make an ECDSA P-256 key pair: PREFIX.key (mode 0600; encrypted when
    PLUGMAN_SIGNING_PASSWORD is set) and PREFIX.pub. An existing file is never overwritten."""
    output.emit(output.key_generated(make(prefix, os.environ), as_json))


def sign(
    ctx: Context,
    target: str,
    key: Path,
    as_json: bool = False,
) -> None:
    """The signature is a Sigstore bundle attached to the artifact as an OCI referrer (the
    referrers API, or the sha256-<hex> tag where the registry has none). An encrypted key is
    opened with PLUGMAN_SIGNING_PASSWORD."""
    output.emit(output.signed(sign_it(target, key, paths_of(ctx), os.environ), as_json))


SIGN = Command(
    "sign",
    "",
    sign,
    (
        Argument(
            "target",
            "The published artifact: oci://REGISTRY/REPOSITORY:TAG (or @sha256:DIGEST).",
            metavar="OCI_REF",
        ),
    ),
    (
        Option(("--key", "-k"), "The private key (.key) to sign with.", VALUE, type="path"),
        JSON,
    ),
)

KEY_APP = Group(
    "key",
    "",
    (
        Command(
            "generate",
            "",
            generate,
            (),
            (
                Option(
                    ("--output", "-o"),
                    "Write PREFIX.key and PREFIX.pub (default: ./plugman).",
                    VALUE,
                    default=Path("plugman"),
                    type="path",
                    dest="prefix",
                ),
                JSON,
            ),
        ),
    ),
)

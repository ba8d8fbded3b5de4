"""`plugman key generate` and `plugman sign`: signing keys and signing published artifacts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from plugman import output
from plugman.cli.common import Json, paths_of

key_app = typer.Typer(no_args_is_help=True)  # its help: plugman.cli.commands


@key_app.command("generate")
def generate(
    prefix: Annotated[
        Path,
        typer.Option(
            "--output", "-o", help="Write PREFIX.key and PREFIX.pub (default: ./plugman)."
        ),
    ] = Path("plugman"),
    as_json: Json = False,
) -> None:
    """Make an ECDSA P-256 key pair: PREFIX.key (mode 0600; encrypted when
    PLUGMAN_SIGNING_PASSWORD is set) and PREFIX.pub. An existing file is never overwritten."""
    from plugman.plugins.keys import generate as make

    output.emit(output.key_generated(make(prefix, os.environ), as_json))


def sign(
    ctx: typer.Context,
    target: Annotated[
        str,
        typer.Argument(
            help="The published artifact: oci://REGISTRY/REPOSITORY:TAG (or @sha256:DIGEST).",
            metavar="OCI_REF",
        ),
    ],
    key: Annotated[
        Path,
        typer.Option(
            "--key", "-k", help="The private key (.key) to sign with.", show_default=False
        ),
    ],
    as_json: Json = False,
) -> None:
    """The signature is a Sigstore bundle attached to the artifact as an OCI referrer (the
    referrers API, or the sha256-<hex> tag where the registry has none). An encrypted key is
    opened with PLUGMAN_SIGNING_PASSWORD."""
    from plugman.plugins.signing import sign as sign_it

    output.emit(output.signed(sign_it(target, key, paths_of(ctx), os.environ), as_json))

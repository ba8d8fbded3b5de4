"""`plugman new`, `pack`, `publish` and `tag`: making, packing and releasing a plugin."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plugman import output
from plugman.cli.common import Json
from plugman.core.errors import UsageError

if TYPE_CHECKING:
    from plugman.manifest.diagnostics import Diagnostic

Strict = Annotated[bool, typer.Option("--strict", help="Refuse a plugin with warnings too.")]
Folder = Annotated[
    Path, typer.Argument(help="The plugin folder (default: this one).", show_default=False)
]


def new(
    name: Annotated[str, typer.Argument(help="The plugin's (or marketplace's) name, kebab-case.")],
    with_: Annotated[
        list[str] | None,
        typer.Option(
            "--with",
            help="Components to add, comma-separated: skill, command, agent, hook, mcp.",
        ),
    ] = None,
    marketplace: Annotated[
        bool, typer.Option("--marketplace", help="Make a marketplace instead of a plugin.")
    ] = False,
    directory: Annotated[
        Path | None, typer.Option("--dir", help="The folder to create (default: ./NAME).")
    ] = None,
    description: Annotated[
        str | None, typer.Option("--description", help="A one-line description.")
    ] = None,
    author: Annotated[
        str | None, typer.Option("--author", help="The author (a marketplace's owner).")
    ] = None,
    as_json: Json = False,
) -> None:
    from plugman.plugins import scaffold

    if marketplace and with_:
        raise UsageError(
            "--with adds components to a plugin, not to a marketplace",
            hint="make the marketplace, then its plugins: plugman new NAME --dir "
            "MARKETPLACE/plugins/NAME --with ...",
        )
    if marketplace:
        made = scaffold.new_marketplace(name, directory, description=description, owner=author)
    else:
        made = scaffold.new_plugin(
            name, directory, with_ or [], description=description, author=author
        )
    output.emit(output.scaffolded(made, as_json))


def pack(
    directory: Folder = Path(),
    to: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="The archive to write (default: ./NAME-VERSION.tgz)."),
    ] = None,
    strict: Strict = False,
    as_json: Json = False,
) -> None:
    from plugman.plugins.pack import pack_to

    packed = pack_to(directory, to, strict=strict)
    _emit(packed.warnings, output.packed(packed, as_json), as_json)


def publish(
    ctx: typer.Context,
    directory: Annotated[Path, typer.Argument(help="The plugin folder.", show_default=False)],
    target: Annotated[
        str, typer.Argument(help="Where to push: oci://REGISTRY/REPOSITORY:TAG.", metavar="OCI_REF")
    ],
    strict: Strict = False,
    sign: Annotated[
        Path | None,
        typer.Option(
            "--sign",
            metavar="KEY",
            help="Sign the artifact with this private key (plugman key generate); "
            "PLUGMAN_SIGNING_PASSWORD opens an encrypted one.",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Overwrite a tag that already names other content (refused without it: "
            "whoever follows the tag gets the new content).",
        ),
    ] = False,
    as_json: Json = False,
) -> None:
    import os

    from plugman.cli.common import paths_of
    from plugman.plugins.publish import publish as push

    paths = paths_of(ctx)
    done = push(directory, target, paths, os.environ, strict=strict, sign=sign, force=force)
    _emit(done.packed.warnings, output.published(done, as_json), as_json)


def tag(
    directory: Folder = Path(),
    message: Annotated[
        str | None,
        typer.Option("--message", "-m", help="The annotated tag's message."),
    ] = None,
    lightweight: Annotated[
        bool, typer.Option("--lightweight", help="A lightweight tag instead of an annotated one.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Check everything; create nothing.")
    ] = False,
    strict: Strict = False,
    as_json: Json = False,
) -> None:
    from plugman.plugins.tagging import tag as make_tag

    if message is not None and lightweight:
        raise UsageError(
            "--message and --lightweight do not go together",
            hint="a lightweight tag has no message: drop one of them",
        )
    done = make_tag(
        directory, message=message, lightweight=lightweight, strict=strict, dry_run=dry_run
    )
    _emit(done.warnings, output.tagged(done, as_json), as_json)


def _emit(warnings: Sequence[Diagnostic], text: str, as_json: bool) -> None:
    """A command's result, after the validation warnings on stderr (the JSON holds them)."""
    if warnings and not as_json:
        output.emit(output.plugin_warnings(warnings), err=True)
    output.emit(text)

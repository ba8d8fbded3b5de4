"""`plugman new`, `pack`, `publish` and `tag`: making, packing and releasing a plugin."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from plugman import output
from plugman.cli.argv import JSON, MANY, VALUE, Argument, Command, Context, Option
from plugman.cli.common import paths_of
from plugman.core.errors import UsageError
from plugman.plugins.authoring import scaffold
from plugman.plugins.authoring.pack import pack_to
from plugman.plugins.authoring.publish import publish as push
from plugman.plugins.authoring.tagging import tag as make_tag

if TYPE_CHECKING:
    from plugman.manifest.diagnostics import Diagnostic


def new(
    name: str,
    with_: list[str] | None = None,
    marketplace: bool = False,
    directory: Path | None = None,
    description: str | None = None,
    author: str | None = None,
    as_json: bool = False,
) -> None:
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
    directory: Path = Path(),
    to: Path | None = None,
    strict: bool = False,
    as_json: bool = False,
) -> None:
    packed = pack_to(directory, to, strict=strict)
    _emit(packed.warnings, output.packed(packed, as_json), as_json)


def publish(
    ctx: Context,
    directory: Path,
    target: str,
    strict: bool = False,
    sign: Path | None = None,
    force: bool = False,
    as_json: bool = False,
) -> None:
    paths = paths_of(ctx)
    done = push(directory, target, paths, os.environ, strict=strict, sign=sign, force=force)
    _emit(done.packed.warnings, output.published(done, as_json), as_json)


def tag(
    directory: Path = Path(),
    message: str | None = None,
    lightweight: bool = False,
    dry_run: bool = False,
    strict: bool = False,
    as_json: bool = False,
) -> None:
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


NEW = Command(
    "new",
    "",
    new,
    (Argument("name", "The plugin's (or marketplace's) name, kebab-case."),),
    (
        Option(
            ("--with",),
            "Components to add, comma-separated: skill, command, agent, hook, mcp.",
            MANY,
            dest="with_",
        ),
        Option(("--marketplace",), "Make a marketplace instead of a plugin."),
        Option(
            ("--dir",),
            "The folder to create (default: ./NAME).",
            VALUE,
            type="path",
            dest="directory",
        ),
        Option(("--description",), "A one-line description.", VALUE),
        Option(("--author",), "The author (a marketplace's owner).", VALUE),
        JSON,
    ),
)

PACK = Command(
    "pack",
    "",
    pack,
    (
        Argument(
            "directory",
            "The plugin folder (default: this one).",
            required=False,
            type="path",
            default=Path(),
        ),
    ),
    (
        Option(
            ("--output", "-o"),
            "The archive to write (default: ./NAME-VERSION.tgz).",
            VALUE,
            type="path",
            dest="to",
        ),
        Option(("--strict",), "Refuse a plugin with warnings too."),
        JSON,
    ),
)

PUBLISH = Command(
    "publish",
    "",
    publish,
    (
        Argument("directory", "The plugin folder.", type="path"),
        Argument("target", "Where to push: oci://REGISTRY/REPOSITORY:TAG.", metavar="OCI_REF"),
    ),
    (
        Option(("--strict",), "Refuse a plugin with warnings too."),
        Option(
            ("--sign",),
            "Sign the artifact with this private key (plugman key generate); "
            "PLUGMAN_SIGNING_PASSWORD opens an encrypted one.",
            VALUE,
            type="path",
            metavar="KEY",
        ),
        Option(
            ("--force",),
            "Overwrite a tag that already names other content (refused without "
            "it: whoever follows the tag gets the new content).",
        ),
        JSON,
    ),
)

TAG = Command(
    "tag",
    "",
    tag,
    (
        Argument(
            "directory",
            "The plugin folder (default: this one).",
            required=False,
            type="path",
            default=Path(),
        ),
    ),
    (
        Option(("--message", "-m"), "The annotated tag's message.", VALUE),
        Option(("--lightweight",), "A lightweight tag instead of an annotated one."),
        Option(("--dry-run",), "Check everything; create nothing."),
        Option(("--strict",), "Refuse a plugin with warnings too."),
        JSON,
    ),
)

"""`plugman configure`: a plugin's userConfig values."""

from __future__ import annotations

from typing import Annotated

import typer

from plugman import output
from plugman.cli.common import Json, paths_of
from plugman.core import state


def configure(
    ctx: typer.Context,
    plugin: Annotated[str, typer.Argument(help="NAME or NAME@MARKETPLACE.")],
    pairs: Annotated[
        list[str] | None, typer.Argument(help="KEY=VALUE values to set (none: list them).")
    ] = None,
    unset: Annotated[
        list[str] | None, typer.Option("--unset", help="KEY: remove the value (repeatable).")
    ] = None,
    scope: Annotated[
        state.Scope | None,
        typer.Option("--scope", "-s", help="user, project or local (default: where installed)."),
    ] = None,
    as_json: Json = False,
) -> None:
    """Sensitive ones go to the secret store and are shown only as set or unset."""
    from plugman.plugins import reconfigure

    rows = reconfigure.run(paths_of(ctx), plugin, scope, pairs or [], unset or [])
    output.emit(output.configured(rows, as_json))

"""`plugman diff PLUGIN [FROM] [TO]`: what one content of an installed plugin can do that another
cannot (plugman.plugins.capabilities), by default what its source offers now against what is
installed; installs nothing."""

from __future__ import annotations

from typing import Annotated

import typer

from plugman import output
from plugman.cli.common import Json, paths_of
from plugman.core import state


def diff(
    ctx: typer.Context,
    plugin: Annotated[str, typer.Argument(help="An installed plugin (name or name@marketplace).")],
    start: Annotated[
        str,
        typer.Argument(
            metavar="[FROM]",
            help="installed (the default), available, locked (what plugman.lock pins) or a "
            "plugin folder.",
        ),
    ] = "installed",
    end: Annotated[
        str,
        typer.Argument(
            metavar="[TO]",
            help="available (the default): what its source offers now; or as FROM.",
        ),
    ] = "available",
    scope: Annotated[
        state.Scope | None,
        typer.Option(
            "--scope", "-s", help="user, project or local (default: the first holding it)."
        ),
    ] = None,
    as_json: Json = False,
) -> None:
    """Compares hooks (event, matcher, command), MCP servers (command and arguments, URL and
    host), bin/ executables, settings.json and always-on text (skill descriptions and command
    files). The marketplace is refreshed first, as `plugman outdated` does.

    Exit codes: 0 shown, 1 the plugin cannot be compared, 2 usage error."""
    from plugman.plugins import updates

    where, found = updates.diff(paths_of(ctx), plugin, scope, start, end)
    output.emit(output.capability_diff(where, found, start, end, as_json))

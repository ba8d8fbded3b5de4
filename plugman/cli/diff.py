"""`plugman diff PLUGIN [FROM] [TO]`: what an installed plugin's source now offers can do that
the installed content cannot (plugman.plugins.capabilities); installs nothing."""

from __future__ import annotations

from typing import Annotated

import typer

from plugman import output
from plugman.cli.common import Json, paths_of
from plugman.core import state
from plugman.core.errors import UsageError

ENDS = ("installed", "available")


def diff(
    ctx: typer.Context,
    plugin: Annotated[str, typer.Argument(help="An installed plugin (name or name@marketplace).")],
    start: Annotated[
        str, typer.Argument(metavar="[FROM]", help="installed (the default).")
    ] = "installed",
    end: Annotated[
        str,
        typer.Argument(metavar="[TO]", help="available (the default): what its source offers now."),
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

    if (start, end) != ENDS:
        raise UsageError(
            f"plugman diff compares the installed content with what its source offers now; "
            f"'{start} {end}' is not supported yet",
            hint=f"run: plugman diff {plugin} (or: plugman diff {plugin} installed available)",
        )
    where, found = updates.diff(paths_of(ctx), plugin, scope)
    output.emit(output.capability_diff(where, found, as_json))

"""`plugman diff PLUGIN [FROM] [TO]`: what one content of an installed plugin can do that another
cannot (plugman.plugins.supply_chain.capabilities), by default what its source offers now against
what is installed; installs nothing."""

from __future__ import annotations

from plugman import output
from plugman.cli.argv import JSON, VALUE, Argument, Command, Context, Option
from plugman.cli.common import paths_of
from plugman.core import state
from plugman.plugins.lifecycle import updates


def diff(
    ctx: Context,
    plugin: str,
    start: str = "installed",
    end: str = "available",
    scope: state.Scope | None = None,
    as_json: bool = False,
) -> None:
    """Compares hooks (event, matcher, command), MCP servers (command and arguments, URL and
    host), bin/ executables, settings.json and always-on text (skill descriptions and command
    files). The marketplace is refreshed first, as `plugman outdated` does.

    Exit codes: 0 shown, 1 the plugin cannot be compared, 2 usage error."""
    where, found = updates.diff(paths_of(ctx), plugin, scope, start, end)
    output.emit(output.capability_diff(where, found, start, end, as_json))


DIFF = Command(
    "diff",
    "",
    diff,
    (
        Argument("plugin", "An installed plugin (name or name@marketplace)."),
        Argument(
            "start",
            "installed (the default), available, locked (what "
            "plugman.lock pins) or a plugin folder.",
            required=False,
            metavar="[FROM]",
            default="installed",
        ),
        Argument(
            "end",
            "available (the default): what its source offers now; or as FROM.",
            required=False,
            metavar="[TO]",
            default="available",
        ),
    ),
    (
        Option(
            ("--scope", "-s"),
            "user, project or local (default: the first holding it).",
            VALUE,
            choices=("user", "project", "local"),
        ),
        JSON,
    ),
)

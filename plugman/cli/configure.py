"""`plugman configure`: a plugin's userConfig values."""

from __future__ import annotations

from plugman import output
from plugman.cli.argv import JSON, MANY, VALUE, Argument, Command, Context, Option
from plugman.cli.common import paths_of
from plugman.commands import configure as configuring
from plugman.core import state


def configure(
    ctx: Context,
    plugin: str,
    pairs: list[str] | None = None,
    unset: list[str] | None = None,
    scope: state.Scope | None = None,
    as_json: bool = False,
) -> None:
    """Sensitive ones go to the secret store and are shown only as set or unset."""
    rows = configuring.run(paths_of(ctx), plugin, scope, pairs or [], unset or [])
    output.emit(output.configured(rows, as_json))


CONFIGURE = Command(
    "configure",
    "",
    configure,
    (
        Argument("plugin", "NAME or NAME@MARKETPLACE."),
        Argument("pairs", "KEY=VALUE values to set (none: list them).", many=True, required=False),
    ),
    (
        Option(("--unset",), "KEY: remove the value (repeatable).", MANY),
        Option(
            ("--scope", "-s"),
            "user, project or local (default: where installed).",
            VALUE,
            choices=("user", "project", "local"),
        ),
        JSON,
    ),
)

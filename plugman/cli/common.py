"""Shared pieces of the typer commands: the paths of this run, common options, and the typer
form of a fast command."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.main
from typer.core import TyperCommand, TyperOption

from plugman.cli import fast, running
from plugman.cli.argv import FLAG, MANY
from plugman.core import state

if TYPE_CHECKING:
    from plugman.cli.argv import FastCommand
    from plugman.core.paths import Paths

Scope = Annotated[
    state.Scope, typer.Option("--scope", "-s", help="user, project or local.", show_default=True)
]
Json = Annotated[bool, typer.Option("--json", help="Print a JSON document.")]


def project_of(ctx: typer.Context) -> str | None:
    """The root option --project, as given."""
    project: str | None = (ctx.find_root().obj or {}).get("project")
    return project


def paths_of(ctx: typer.Context) -> Paths:
    """The paths of this run (plugman.cli.running.paths_for)."""
    return running.paths_for(project_of(ctx))


def forwarded(command: FastCommand) -> Any:
    """A fast command (plugman.cli.commands) as a click command of typer's, derived from its
    declaration: its words go to plugman.cli.fast as they are; its options complete."""

    def run(ctx: typer.Context) -> None:
        raise typer.Exit(fast.run(command, ctx.args, project_of(ctx)))

    run.__doc__ = command.summary
    single = typer.Typer(add_completion=False)
    single.command(command.words.split()[-1], cls=Forwarded, add_help_option=False)(run)
    built = typer.main.get_command(single)
    built.params += [  # for completion only: Forwarded.parse_args reads none of them
        TyperOption(
            param_decls=list(option.names),
            help=option.help,
            is_flag=option.takes == FLAG,
            multiple=option.takes == MANY,
            expose_value=False,
        )
        for option in command.options
    ]
    return built


class Forwarded(TyperCommand):
    """A command that keeps its words as given (`--` included) for plugman.cli.fast."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.args = words = list(args)
        return words

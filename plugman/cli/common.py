"""Shared pieces of the typer commands: the paths of this run, common options, and the typer
form of a fast command."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.main
from typer.core import TyperCommand

from plugman.cli import fast, running
from plugman.cli.argv import FLAG, MANY, VALUE
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
    declaration: its words go to plugman.cli.fast as they are; its options are typer options
    too, for shell completion only (Forwarded parses none of them)."""

    def run(ctx: typer.Context, **_: object) -> None:
        raise typer.Exit(fast.run(command, ctx.args, project_of(ctx)))

    run.__doc__ = command.summary
    options = [
        inspect.Parameter(
            option.dest,
            inspect.Parameter.KEYWORD_ONLY,
            default=typer.Option(
                False if option.takes == FLAG else None, *option.names, help=option.help
            ),
            annotation=_TAKES[option.takes],
        )
        for option in command.options
    ]
    context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    run.__signature__ = inspect.Signature([context, *options])  # type: ignore[attr-defined]
    single = typer.Typer(add_completion=False)
    single.command(command.words.split()[-1], cls=Forwarded, add_help_option=False)(run)
    return typer.main.get_command(single)


_TAKES = {FLAG: bool, VALUE: str | None, MANY: list[str] | None}  # each option's typer type


class Forwarded(TyperCommand):
    """A command that keeps its words as given (`--` included) for plugman.cli.fast."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.args = words = list(args)
        return words

"""Shared pieces of the typer commands: the paths of this run and common options."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand

from plugman.cli import fast, running
from plugman.core import state

if TYPE_CHECKING:
    from plugman.cli.argv import Spec
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


def forward(app: typer.Typer, spec: Spec) -> None:
    """Mount a fast command on a typer app: its words go to plugman.cli.fast as they are."""

    def command(ctx: typer.Context) -> None:
        raise typer.Exit(fast.run(spec, ctx.args, project_of(ctx)))

    command.__doc__ = spec.summary
    kind = type("Forwarded", (Forwarded,), {"spec": spec})
    app.command(spec.words.split()[-1], cls=kind, add_help_option=False)(command)


class Forwarded(TyperCommand):
    """A command that keeps its words as given (`--` included) for plugman.cli.fast, and
    completes its options from its spec."""

    spec: Spec

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.args = words = list(args)
        return words

    def shell_complete(self, ctx: Any, incomplete: str) -> list[Any]:
        if not incomplete.startswith("-"):
            return list(super().shell_complete(ctx, incomplete))
        from typer._click.shell_completion import CompletionItem

        options = self.spec.options
        return [
            CompletionItem(name, help=o.help)
            for o in options
            for name in o.names
            if name.startswith(incomplete)
        ]

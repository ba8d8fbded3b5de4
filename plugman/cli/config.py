"""`plugman config resolve|explain` and `plugman trust list|approve|revoke`."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from plugman import output
from plugman.cli.common import Json, paths_of

config_app = typer.Typer(no_args_is_help=True)  # their help: plugman.cli.commands
trust_app = typer.Typer(no_args_is_help=True)
Secrets = Annotated[bool, typer.Option("--show-secrets", help="Show secret values unmasked.")]


@config_app.command("explain")
def explain_command(
    ctx: typer.Context, name: str, as_json: Json = False, show_secrets: Secrets = False
) -> None:
    """Why server NAME resolves as it does: the winner, what it shadows, what was dropped.

    NAME may be an installed plugin (NAME or NAME@MARKETPLACE): then each of its servers.
    """
    from plugman.config.resolution import resolve

    found = resolve(paths_of(ctx), os.environ).explain(name)
    output.emit(output.explained(found, as_json, show_secrets))


@trust_app.command("list")
def trust_list(ctx: typer.Context, as_json: Json = False) -> None:
    """What needs approval here: the project's servers and hooks and those of plugins `sync`
    installed, approved or pending, with what each approval covers: this project, the command,
    args or URL, and the files the command runs (with their digests)."""
    from plugman.config import trust

    paths = paths_of(ctx)
    output.emit(output.trusted(trust.listing(paths), as_json, trust.stale(paths)))


Names = Annotated[
    list[str] | None,
    typer.Argument(help="Server names, hook EVENT:MATCHER names, or plugins (all they bring)."),
]


@trust_app.command("approve")
def trust_approve(
    ctx: typer.Context,
    names: Names = None,
    everything: Annotated[bool, typer.Option("--all", help="Every pending entry.")] = False,
    as_json: Json = False,
) -> None:
    """Approve entries as they are now (a later change needs approval again). Without NAME or
    --all, nothing is approved: the pending entries are listed and the exit code is 2."""
    from plugman.commands import trust

    rows = trust.approve(paths_of(ctx), names or [], everything, os.environ)
    output.emit(output.trust_changed(rows, "approve", as_json))


@trust_app.command("revoke")
def trust_revoke(
    ctx: typer.Context,
    names: Names = None,
    everything: Annotated[bool, typer.Option("--all", help="Every approval here.")] = False,
    as_json: Json = False,
) -> None:
    """Withdraw approvals (without NAME or --all: list the approved entries, exit code 2)."""
    from plugman.commands import trust

    rows = trust.revoke(paths_of(ctx), names or [], everything, os.environ)
    output.emit(output.trust_changed(rows, "revoke", as_json))

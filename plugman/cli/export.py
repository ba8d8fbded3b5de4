"""`plugman export` (write the resolved config into an agent's files) and `plugman doctor`."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from plugman import output
from plugman.cli.common import Json, paths_of
from plugman.core.errors import UsageError
from plugman.core.state import Scope


def export(
    ctx: typer.Context,
    target: Annotated[str, typer.Option("--target", "-t", metavar="AGENT", help="The agent.")],
    scope: Annotated[
        Scope, typer.Option("--scope", "-s", help="user, project or local (Claude Code).")
    ] = "user",
    write: Annotated[bool, typer.Option("--write", help="Edit the agent's files.")] = False,
    remove: Annotated[
        bool, typer.Option("--remove", help="Take out what plugman wrote there.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the diff; change nothing.")
    ] = False,
    show_secrets: Annotated[
        bool, typer.Option("--show-secrets", help="Show secret values in the diff unmasked.")
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="With --remove: go on when an entry was edited by hand."),
    ] = False,
    as_json: Json = False,
) -> None:
    from plugman.agents.export import export as run

    if (write and remove) or not (write or remove or dry_run):
        raise UsageError(
            "say --write or --remove (add --dry-run to see the diff first)",
            hint=f"plugman export --target {target} --write --dry-run",
        )
    if remove and not dry_run:
        from plugman.agents.handedits import remove_export

        outcome = remove_export(paths_of(ctx), os.environ, target, scope, force)
    else:
        outcome = run(paths_of(ctx), os.environ, target, scope, remove=remove, dry_run=dry_run)
    output.emit(output.exported(outcome, dry_run, as_json, show_secrets))
    if outcome.notes and not as_json:
        output.emit("\n".join(f"warning: {n}" for n in outcome.notes), err=True)


def doctor(
    ctx: typer.Context,
    no_check: Annotated[
        bool,
        typer.Option("--no-check", help="Do not ask the linked agents' CLIs what they loaded."),
    ] = False,
    as_json: Json = False,
) -> None:
    from plugman.core.secrets import describe
    from plugman.doctor import diagnose

    paths = paths_of(ctx)
    found = diagnose(paths, os.environ, ask=not no_check)
    problems = found.problems
    output.emit(output.doctor_report(problems, as_json, describe(paths, os.environ), found.agents))
    if any(p.severity == "error" for p in problems):
        raise typer.Exit(1)

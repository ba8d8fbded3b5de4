"""`plugman export` (write the resolved config into an agent's files) and `plugman doctor`."""

from __future__ import annotations

import os

from plugman import output
from plugman.agents.export import export as run
from plugman.agents.handedits import remove_export
from plugman.cli.argv import JSON, VALUE, Command, Context, Option
from plugman.cli.common import paths_of
from plugman.cli.running import Exit
from plugman.core.errors import UsageError
from plugman.core.secrets import describe
from plugman.core.state import Scope
from plugman.doctor import diagnose


def export(
    ctx: Context,
    target: str,
    scope: Scope = "user",
    write: bool = False,
    remove: bool = False,
    dry_run: bool = False,
    show_secrets: bool = False,
    force: bool = False,
    as_json: bool = False,
) -> None:
    if (write and remove) or not (write or remove or dry_run):
        raise UsageError(
            "say --write or --remove (add --dry-run to see the diff first)",
            hint=f"plugman export --target {target} --write --dry-run",
        )
    if remove and not dry_run:
        outcome = remove_export(paths_of(ctx), os.environ, target, scope, force)
    else:
        outcome = run(paths_of(ctx), os.environ, target, scope, remove=remove, dry_run=dry_run)
    output.emit(output.exported(outcome, dry_run, as_json, show_secrets))
    if outcome.notes and not as_json:
        output.emit("\n".join(f"warning: {n}" for n in outcome.notes), err=True)


def doctor(
    ctx: Context,
    no_check: bool = False,
    as_json: bool = False,
) -> None:
    paths = paths_of(ctx)
    found = diagnose(paths, os.environ, ask=not no_check)
    problems = found.problems
    output.emit(output.doctor_report(problems, as_json, describe(paths, os.environ), found.agents))
    if any(p.severity == "error" for p in problems):
        raise Exit(1)


EXPORT = Command(
    "export",
    "",
    export,
    (),
    (
        Option(("--target", "-t"), "The agent.", VALUE, metavar="AGENT"),
        Option(
            ("--scope", "-s"),
            "user, project or local (Claude Code).",
            VALUE,
            choices=("user", "project", "local"),
            default="user",
        ),
        Option(("--write",), "Edit the agent's files."),
        Option(("--remove",), "Take out what plugman wrote there."),
        Option(("--dry-run",), "Show the diff; change nothing."),
        Option(("--show-secrets",), "Show secret values in the diff unmasked."),
        Option(("--force",), "With --remove: go on when an entry was edited by hand."),
        JSON,
    ),
)

DOCTOR = Command(
    "doctor",
    "",
    doctor,
    (),
    (
        Option(("--no-check",), "Do not ask the linked agents' CLIs what they loaded."),
        JSON,
    ),
)

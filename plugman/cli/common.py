"""Shared pieces of the typer commands: the paths of this run and common options."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from plugman.core import state
from plugman.core.errors import UsageError
from plugman.core.paths import Paths

Scope = Annotated[
    state.Scope, typer.Option("--scope", "-s", help="user, project or local.", show_default=True)
]
Json = Annotated[bool, typer.Option("--json", help="Print a JSON document.")]


def paths_of(ctx: typer.Context) -> Paths:
    """The paths of this run: the --project folder (which must exist), or the project found
    from the working directory upward."""
    root = ctx.find_root()
    project = (root.obj or {}).get("project")
    if project is not None and not Path(project).is_dir():
        raise UsageError(
            f"--project {project}: no such folder",
            hint="pass an existing project folder (or leave --project out: plugman finds the "
            "project from the current folder upward)",
        )
    return Paths.from_env(project=Path(project) if project else None)

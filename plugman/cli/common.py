"""Shared pieces of the typer commands: the paths of this run and common options."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from plugman.paths import Paths

Scope = Annotated[
    str, typer.Option("--scope", "-s", help="user, project or local.", show_default=True)
]
Json = Annotated[bool, typer.Option("--json", help="Print a JSON document.")]


def paths_of(ctx: typer.Context) -> Paths:
    root = ctx.find_root()
    project = (root.obj or {}).get("project")
    return Paths.from_env(project=Path(project) if project else None)

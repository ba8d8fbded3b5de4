"""Shared pieces of the command functions: the paths of this run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plugman.cli import running

if TYPE_CHECKING:
    from plugman.cli.argv import Context
    from plugman.core.paths import Paths


def paths_of(ctx: Context) -> Paths:
    """The paths of this run (plugman.cli.running.paths_for), from its --project folder."""
    return running.paths_for(ctx.project)

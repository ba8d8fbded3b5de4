"""Plugin commands: install, uninstall, enable, disable, list."""

from __future__ import annotations

from typing import Annotated

import typer

from plugman import installer, output
from plugman.cli.common import Json, Scope, paths_of


def install(
    ctx: typer.Context,
    specs: Annotated[
        list[str],
        typer.Argument(
            help="NAME[@MARKETPLACE][SPECIFIER], a folder, a git URL or an archive URL."
        ),
    ],
    scope: Scope = "user",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would happen.")] = False,
    as_json: Json = False,
) -> None:
    """Install plugins (and their dependencies) into a scope."""
    changes = installer.install(paths_of(ctx), specs, scope, dry_run=dry_run)
    output.emit(output.changes("install", changes, as_json))


def uninstall(
    ctx: typer.Context,
    names: Annotated[list[str], typer.Argument(help="NAME or NAME@MARKETPLACE.")],
    scope: Scope = "user",
    keep_data: Annotated[
        bool, typer.Option("--keep-data", help="Keep the plugin's data folder.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Remove even if needed or changed.")
    ] = False,
    as_json: Json = False,
) -> None:
    """Uninstall plugins: remove exactly what their install wrote."""
    changes = installer.uninstall(paths_of(ctx), names, scope, keep_data=keep_data, force=force)
    output.emit(output.changes("uninstall", changes, as_json))


def enable(ctx: typer.Context, name: str, scope: Scope = "user", as_json: Json = False) -> None:
    """Enable an installed plugin in a scope."""
    change = installer.set_enabled(paths_of(ctx), name, scope, True)
    output.emit(output.changes("enable", [change], as_json))


def disable(ctx: typer.Context, name: str, scope: Scope = "user", as_json: Json = False) -> None:
    """Disable an installed plugin in a scope (it stays installed)."""
    change = installer.set_enabled(paths_of(ctx), name, scope, False)
    output.emit(output.changes("disable", [change], as_json))


def listing(ctx: typer.Context, as_json: Json = False) -> None:
    """List installed plugins in every scope."""
    output.emit(output.installed(installer.listing(paths_of(ctx)), as_json))

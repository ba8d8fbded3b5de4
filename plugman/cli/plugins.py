"""Plugin commands: install, uninstall, enable, disable, list."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from plugman import output
from plugman.cli.common import Json, Scope, paths_of
from plugman.core import state
from plugman.core.errors import UsageError

if TYPE_CHECKING:
    from plugman.manifest.model import UserOption


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
    config: Annotated[
        list[str] | None,
        typer.Option(
            "--config",
            "-c",
            help="KEY=VALUE: a userConfig value of the plugin (repeatable). On a terminal, "
            "required values not given are asked.",
        ),
    ] = None,
    as_json: Json = False,
) -> None:
    """Install plugins (and their dependencies) into a scope."""
    from plugman.plugins import install as installer

    ask = _ask if sys.stdin.isatty() and not as_json and not dry_run else None
    changes = installer.install(
        paths_of(ctx), specs, scope, dry_run=dry_run, config=config, ask=ask
    )
    output.emit(output.changes("install", changes, as_json))


def _ask(plugin_id: str, option: UserOption) -> str | None:
    """Ask a terminal for a required userConfig value (hidden when sensitive)."""
    about = f" ({option.description})" if option.description else ""
    answer: str = typer.prompt(
        f"{plugin_id}: {option.title}{about} [{option.key}, {option.type}]",
        hide_input=option.sensitive,
        default="",
        show_default=False,
    )
    return answer or None


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
    from plugman.plugins import install as installer

    changes = installer.uninstall(paths_of(ctx), names, scope, keep_data=keep_data, force=force)
    output.emit(output.changes("uninstall", changes, as_json))


def enable(ctx: typer.Context, name: str, scope: Scope = "user", as_json: Json = False) -> None:
    """Enable an installed plugin in a scope."""
    from plugman.plugins import install as installer

    change = installer.set_enabled(paths_of(ctx), name, scope, True)
    output.emit(output.changes("enable", [change], as_json))


def disable(ctx: typer.Context, name: str, scope: Scope = "user", as_json: Json = False) -> None:
    """Disable an installed plugin in a scope (it stays installed)."""
    from plugman.plugins import install as installer

    change = installer.set_enabled(paths_of(ctx), name, scope, False)
    output.emit(output.changes("disable", [change], as_json))


def listing(ctx: typer.Context, as_json: Json = False) -> None:
    """List installed plugins in every scope."""
    from plugman.plugins.listings import listing

    output.emit(output.installed(listing(paths_of(ctx)), as_json))


def sync(
    ctx: typer.Context,
    frozen: Annotated[
        bool, typer.Option("--frozen", help="Install plugman.lock as it is.")
    ] = False,
    locked: Annotated[
        bool, typer.Option("--locked", help="Fail if plugman.lock is stale.")
    ] = False,
    as_json: Json = False,
) -> None:
    """Install exactly what the project's plugman.toml / plugman.lock declare."""
    from plugman.plugins import sync as syncing

    if frozen and locked:
        raise UsageError("--frozen and --locked exclude each other", hint="pass one of them")
    mode = "frozen" if frozen else "locked" if locked else "default"
    output.emit(output.changes("sync", syncing.sync(paths_of(ctx), mode), as_json))


def lock(ctx: typer.Context, as_json: Json = False) -> None:
    """Resolve plugman.toml and write plugman.lock (installs nothing)."""
    from plugman.plugins import sync as syncing

    output.emit(output.locked(syncing.lock(paths_of(ctx)), as_json))


NoRefresh = Annotated[
    bool,
    typer.Option("--no-refresh", help="Use the cached marketplace catalogs; fetch none first."),
]


def update(
    ctx: typer.Context,
    names: Annotated[
        list[str] | None, typer.Argument(help="Plugins to update (default all).")
    ] = None,
    scope: Annotated[
        state.Scope | None,
        typer.Option("--scope", "-s", help="user, project or local (default: every scope)."),
    ] = None,
    no_refresh: NoRefresh = False,
    as_json: Json = False,
) -> None:
    """Refresh the marketplaces, then update installed plugins to what they offer now."""
    from plugman.plugins import updates

    done = updates.update(paths_of(ctx), names or [], scope, fetch_catalogs=not no_refresh)
    output.emit(output.changes("update", done, as_json))


def outdated(ctx: typer.Context, no_refresh: NoRefresh = False, as_json: Json = False) -> None:
    """Refresh the marketplaces, then list installed plugins they offer different content for."""
    from plugman.plugins import updates

    found = updates.outdated(paths_of(ctx), fetch_catalogs=not no_refresh)
    output.emit(output.outdated(found, as_json))


def search(ctx: typer.Context, query: str, as_json: Json = False) -> None:
    """Search the known marketplaces."""
    from plugman.plugins import updates

    output.emit(output.searched(updates.search(paths_of(ctx), query), query, as_json))


def info(ctx: typer.Context, plugin: str, as_json: Json = False) -> None:
    """Show a plugin's catalog entry and where it is installed."""
    from plugman.plugins import updates

    output.emit(output.plugin_info(updates.info(paths_of(ctx), plugin), as_json))

"""Plugin commands: enable, disable, sync, lock, update, outdated, search, info (install,
uninstall and list are fast commands: plugman.cli.fast)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from plugman import output
from plugman.cli.common import Json, Scope, paths_of
from plugman.core import state
from plugman.core.errors import UsageError

if TYPE_CHECKING:
    pass


def enable(ctx: typer.Context, name: str, scope: Scope = "user", as_json: Json = False) -> None:
    from plugman.plugins import installed

    change = installed.set_enabled(paths_of(ctx), name, scope, True)
    output.emit(output.changes("enable", [change], as_json))


def disable(ctx: typer.Context, name: str, scope: Scope = "user", as_json: Json = False) -> None:
    from plugman.plugins import installed

    change = installed.set_enabled(paths_of(ctx), name, scope, False)
    output.emit(output.changes("disable", [change], as_json))


DryRun = Annotated[
    bool,
    typer.Option("--dry-run", help="Show what would change, and what it can do; change nothing."),
]
AllowDowngrade = Annotated[
    bool,
    typer.Option(
        "--allow-downgrade",
        help="Take a plugin back to an older release than the installed one (a lower version, "
        "or an older signed manifest of the same version): refused without it.",
    ),
]


def sync(
    ctx: typer.Context,
    frozen: Annotated[
        bool, typer.Option("--frozen", help="Install plugman.lock as it is.")
    ] = False,
    locked: Annotated[
        bool, typer.Option("--locked", help="Fail if plugman.lock is stale.")
    ] = False,
    dry_run: DryRun = False,
    allow_hidden_text: Annotated[
        bool,
        typer.Option(
            "--allow-hidden-text",
            help="Let in plugins that hide text in invisible characters (plugman.lock never "
            "allows it: only you, here, or your own install of that content).",
        ),
    ] = False,
    allow_downgrade: AllowDowngrade = False,
    as_json: Json = False,
) -> None:
    """Each changed plugin is shown with what it can now do (hooks, MCP servers, executables,
    settings, always-on text) that it could not before. A plugin its source now offers at an
    older release than the installed one is refused (unless --allow-downgrade), except where
    plugman.lock pins that exact release: the project's explicit request."""
    from plugman.commands import sync as syncing

    if frozen and locked:
        raise UsageError("--frozen and --locked exclude each other", hint="pass one of them")
    mode = "frozen" if frozen else "locked" if locked else "default"
    done = syncing.sync(
        paths_of(ctx),
        mode,
        dry_run=dry_run,
        allow_hidden=allow_hidden_text,
        allow_downgrade=allow_downgrade,
    )
    output.emit(output.updated("sync", done, as_json, dry_run))
    if done.failed:  # the rest is synced; exit 1 says some plugin was not (docs/cli.md)
        raise typer.Exit(1)


def lock(ctx: typer.Context, as_json: Json = False) -> None:
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
    dry_run: DryRun = False,
    allow_hidden_text: Annotated[
        bool,
        typer.Option(
            "--allow-hidden-text",
            help="Update to new content with hidden text (invisible characters) too; recorded.",
        ),
    ] = False,
    allow_signer_change: Annotated[
        bool,
        typer.Option(
            "--allow-signer-change",
            help="Update to content signed by another key than the recorded one (or unsigned); "
            "the new signer is recorded.",
        ),
    ] = False,
    allow_downgrade: AllowDowngrade = False,
    as_json: Json = False,
) -> None:
    """Each updated plugin is shown with what it can now do (hooks, MCP servers, executables,
    settings, always-on text) that it could not before. An older release than the installed
    one (a tag or catalog gone back) is refused unless --allow-downgrade."""
    from plugman.commands import update as updates

    paths = paths_of(ctx)
    refresh = not no_refresh
    done = updates.update(
        paths,
        names or [],
        scope,
        fetch_catalogs=refresh,
        dry_run=dry_run,
        allow_hidden=allow_hidden_text,
        allow_signer_change=allow_signer_change,
        allow_downgrade=allow_downgrade,
    )
    output.emit(output.updated("update", done, as_json, dry_run))
    if done.failed:  # the rest is updated; exit 1 says some plugin was not (docs/cli.md)
        raise typer.Exit(1)


def outdated(ctx: typer.Context, no_refresh: NoRefresh = False, as_json: Json = False) -> None:
    from plugman.plugins import updates

    found = updates.outdated(paths_of(ctx), fetch_catalogs=not no_refresh)
    output.emit(output.outdated(found, as_json))
    if any(row.failed for row in found):  # each is its own row; exit 1 says some were not checked
        raise typer.Exit(1)


def search(
    ctx: typer.Context,
    query: str,
    registry: Annotated[
        str | None,
        typer.Option("--registry", metavar="URL", help="Search this MCP Registry's servers."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="With --registry: at most N.")] = 30,
    as_json: Json = False,
) -> None:
    if registry is not None:
        from plugman.plugins import mcp_registry

        found = mcp_registry.search(registry, query, limit)
        output.emit(output.registry_searched(found, query, registry, as_json))
        return
    from plugman.plugins import lookup
    from plugman.plugins.failed import Failed

    failed: list[Failed] = []
    hits = lookup.search(paths_of(ctx), query, failed)
    output.emit(output.searched(hits, query, as_json, failed))
    if failed:  # the other marketplaces are searched; exit 1 says some were not
        raise typer.Exit(1)


def info(
    ctx: typer.Context,
    plugin: str,
    check: Annotated[
        bool,
        typer.Option("--check", help="Also ask each linked agent's CLI what it loaded of it."),
    ] = False,
    as_json: Json = False,
) -> None:
    import os

    from plugman.plugins import lookup

    paths = paths_of(ctx)
    found = lookup.info(paths, plugin)
    checked = None
    if check:
        from plugman.agents.readback import ask

        checked = ask(paths, os.environ)
    output.emit(output.plugin_info(found, as_json, checked))

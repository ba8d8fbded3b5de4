"""Plugin commands: enable, disable, sync, lock, update, outdated, search, info (install,
uninstall and list are fast commands: plugman.cli.fast)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from plugman import output
from plugman.agents.readback import ask
from plugman.cli.argv import JSON, SCOPE, VALUE, Argument, Command, Context, Option
from plugman.cli.common import paths_of
from plugman.cli.running import Exit
from plugman.commands import enable as enabling
from plugman.commands import sync as syncing
from plugman.commands import update as updates
from plugman.core import state
from plugman.core.errors import UsageError
from plugman.core.state import Scope
from plugman.plugins.catalog import mcp_registry
from plugman.plugins.catalog.failed import Failed
from plugman.plugins.lifecycle import lookup
from plugman.plugins.lifecycle import sync as locking
from plugman.plugins.lifecycle import updates as outdating

if TYPE_CHECKING:
    pass


def enable(ctx: Context, name: str, scope: Scope = "user", as_json: bool = False) -> None:
    change = enabling.set_enabled(paths_of(ctx), name, scope, True)
    output.emit(output.changes("enable", [change], as_json))


def disable(ctx: Context, name: str, scope: Scope = "user", as_json: bool = False) -> None:
    change = enabling.set_enabled(paths_of(ctx), name, scope, False)
    output.emit(output.changes("disable", [change], as_json))


def sync(
    ctx: Context,
    frozen: bool = False,
    locked: bool = False,
    dry_run: bool = False,
    allow_hidden_text: bool = False,
    allow_downgrade: bool = False,
    as_json: bool = False,
) -> None:
    """Each changed plugin is shown with what it can now do (hooks, MCP servers, executables,
    settings, always-on text) that it could not before. A plugin its source now offers at an
    older release than the installed one is refused (unless --allow-downgrade), except where
    plugman.lock pins that exact release: the project's explicit request."""
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
        raise Exit(1)


def lock(ctx: Context, as_json: bool = False) -> None:
    output.emit(output.locked(locking.lock(paths_of(ctx)), as_json))


def update(
    ctx: Context,
    names: list[str] | None = None,
    scope: state.Scope | None = None,
    no_refresh: bool = False,
    dry_run: bool = False,
    allow_hidden_text: bool = False,
    allow_signer_change: bool = False,
    allow_downgrade: bool = False,
    as_json: bool = False,
) -> None:
    """Each updated plugin is shown with what it can now do (hooks, MCP servers, executables,
    settings, always-on text) that it could not before. An older release than the installed
    one (a tag or catalog gone back) is refused unless --allow-downgrade."""
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
        raise Exit(1)


def outdated(ctx: Context, no_refresh: bool = False, as_json: bool = False) -> None:
    found = outdating.outdated(paths_of(ctx), fetch_catalogs=not no_refresh)
    output.emit(output.outdated(found, as_json))
    if any(row.failed for row in found):  # each is its own row; exit 1 says some were not checked
        raise Exit(1)


def search(
    ctx: Context,
    query: str,
    registry: str | None = None,
    limit: int = 30,
    as_json: bool = False,
) -> None:
    if registry is not None:
        found = mcp_registry.search(registry, query, limit)
        output.emit(output.registry_searched(found, query, registry, as_json))
        return

    failed: list[Failed] = []
    hits = lookup.search(paths_of(ctx), query, failed)
    output.emit(output.searched(hits, query, as_json, failed))
    if failed:  # the other marketplaces are searched; exit 1 says some were not
        raise Exit(1)


def info(
    ctx: Context,
    plugin: str,
    check: bool = False,
    as_json: bool = False,
) -> None:
    paths = paths_of(ctx)
    found = lookup.info(paths, plugin)
    checked = None
    if check:
        checked = ask(paths, os.environ)
    output.emit(output.plugin_info(found, as_json, checked))


ENABLE = Command(
    "enable",
    "",
    enable,
    (Argument("name"),),
    (
        SCOPE,
        JSON,
    ),
)

DISABLE = Command(
    "disable",
    "",
    disable,
    (Argument("name"),),
    (
        SCOPE,
        JSON,
    ),
)

UPDATE = Command(
    "update",
    "",
    update,
    (Argument("names", "Plugins to update (default all).", many=True, required=False),),
    (
        Option(
            ("--scope", "-s"),
            "user, project or local (default: every scope).",
            VALUE,
            choices=("user", "project", "local"),
        ),
        Option(("--no-refresh",), "Use the cached marketplace catalogs; fetch none first."),
        Option(("--dry-run",), "Show what would change, and what it can do; change nothing."),
        Option(
            ("--allow-hidden-text",),
            "Update to new content with hidden text (invisible characters) too; recorded.",
        ),
        Option(
            ("--allow-signer-change",),
            "Update to content signed by another key than the recorded "
            "one (or unsigned); the new signer is recorded.",
        ),
        Option(
            ("--allow-downgrade",),
            "Take a plugin back to an older release than the installed one (a lower version, "
            "or an older signed manifest of the same version): refused without it.",
        ),
        JSON,
    ),
)

OUTDATED = Command(
    "outdated",
    "",
    outdated,
    (),
    (
        Option(("--no-refresh",), "Use the cached marketplace catalogs; fetch none first."),
        JSON,
    ),
)

SYNC = Command(
    "sync",
    "",
    sync,
    (),
    (
        Option(("--frozen",), "Install plugman.lock as it is."),
        Option(("--locked",), "Fail if plugman.lock is stale."),
        Option(("--dry-run",), "Show what would change, and what it can do; change nothing."),
        Option(
            ("--allow-hidden-text",),
            "Let in plugins that hide text in invisible characters (plugman.lock never "
            "allows it: only you, here, or your own install of that content).",
        ),
        Option(
            ("--allow-downgrade",),
            "Take a plugin back to an older release than the installed one (a lower version, "
            "or an older signed manifest of the same version): refused without it.",
        ),
        JSON,
    ),
)

SEARCH = Command(
    "search",
    "",
    search,
    (Argument("query"),),
    (
        Option(("--registry",), "Search this MCP Registry's servers.", VALUE, metavar="URL"),
        Option(("--limit",), "With --registry: at most N.", VALUE, default=30, type="int", low=1),
        JSON,
    ),
)

INFO = Command(
    "info",
    "",
    info,
    (Argument("plugin"),),
    (
        Option(("--check",), "Also ask each linked agent's CLI what it loaded of it."),
        JSON,
    ),
)

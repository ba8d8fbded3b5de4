"""The hot commands' functions: each declared once in the command table (plugman.cli.commands)
and parsed by the one parser (plugman.cli.app, plugman.cli.argv).

`install`, `uninstall`, `list`, `paths`, `config resolve` and `validate` are what users and
scripts run most, and the launchers agents' files name, `hooks exec` and `mcp run`
(plugman.cli.hook_launcher, plugman.cli.server_launcher), run on every hook call and server
start: they import nothing but what they use. Every failure is reported by
plugman.cli.running.report, the one place that turns a PlugmanError into `error:` / `hint:`
(and an error envelope under JSON).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

from plugman import output
from plugman.cli.running import paths_for
from plugman.core.errors import UsageError

if TYPE_CHECKING:
    from plugman.cli.argv import Context
    from plugman.core.state import Scope
    from plugman.manifest.model import UserOption


def run_install(
    ctx: Context,
    specs: list[str],
    scope: str,
    dry_run: bool,
    config: list[str],
    allow_hidden_text: bool,
    as_json: bool,
) -> None:
    # lazy: commands.install not loaded by plugman list (+106 ms)
    from plugman.commands import install as installer

    ask = _ask if sys.stdin.isatty() and not as_json and not dry_run else None
    changes = installer.install(
        paths_for(ctx.project),
        specs,
        cast("Scope", scope),  # one of its choices, parsed
        dry_run=dry_run,
        config=config or None,
        ask=ask,
        allow_hidden=allow_hidden_text,
    )
    output.emit(output.changes("install", changes, as_json))


def _ask(plugin_id: str, option: UserOption) -> str | None:
    """Ask a terminal for a required userConfig value (hidden when sensitive)."""
    about = f" ({option.description})" if option.description else ""
    question = f"{plugin_id}: {option.title}{about} [{option.key}, {option.type}]: "
    return output.ask(question, hidden=option.sensitive) or None


def run_uninstall(
    ctx: Context, names: list[str], scope: str, keep_data: bool, force: bool, as_json: bool
) -> None:
    # lazy: commands.uninstall not loaded by plugman list (+22 ms)
    from plugman.commands.uninstall import uninstall

    changes = uninstall(
        paths_for(ctx.project), names, cast("Scope", scope), keep_data=keep_data, force=force
    )
    output.emit(output.changes("uninstall", changes, as_json))


def run_list(ctx: Context, check: bool, as_json: bool) -> int:
    """Every installed plugin; exit 1 when a scope's plugman.toml is broken (stderr says it)."""
    # lazy: config.declarations, plugins.catalog.listings not loaded by plugman validate (+43 ms)
    from plugman.config.declarations import problems
    from plugman.plugins.catalog.listings import listing

    paths = paths_for(ctx.project)
    checked = None
    if check:  # opt-in: asking the agents' CLIs takes seconds
        # lazy: agents.readback not loaded by plugman list (+148 ms)
        from plugman.agents.readback import ask

        checked = ask(paths, os.environ)
    broken = problems(paths)
    output.emit(output.installed(listing(paths, os.environ), as_json, checked, broken))
    if broken and not as_json:
        output.emit(output.problems(broken), err=True)
    return 1 if broken else 0


def run_paths(ctx: Context, as_json: bool) -> None:
    # lazy: core.secrets, core.paths not loaded by plugman list (+9 ms)
    from plugman.core import secrets
    from plugman.core.paths import project_marker

    paths = paths_for(ctx.project)
    store = secrets.open_store(paths)
    found = {
        **paths.as_dict(),
        "project_marker": project_marker(paths.project_dir) or "",
        "secret_store": f"{store.kind}: {store.where}",
    }
    output.emit(output.located(found, as_json))


def run_resolve(
    ctx: Context, as_json: bool, explain: bool, show_secrets: bool, target: str | None
) -> int:
    """The resolved config; exit 1 when a file of yours it reads is broken, as mcp list."""
    secret, paths = show_secrets, paths_for(ctx.project)
    if target is not None:
        # lazy: agents.export not loaded by plugman list (+143 ms)
        from plugman.agents.export import native

        if as_json or explain:
            raise UsageError(
                "--target prints the agent's own config file; it takes no --json or --explain",
                hint="plugman config resolve --json (plugman's document), or --target alone",
            )
        text, notes = native(paths, os.environ, target, secret)
        output.emit(text)
        output.emit(output.warnings(notes), err=True)
        return 0
    # lazy: config.resolution not loaded by plugman list (+18 ms)
    from plugman.config.resolution import resolve

    resolution = resolve(paths, os.environ)
    output.emit(output.resolved(resolution, as_json, explain, secret))
    if resolution.diagnostics and not as_json:
        output.emit(output.problems(resolution.diagnostics), err=True)
    return 1 if resolution.broken(paths) else 0


def run_validate(_ctx: Context, paths: list[str], strict: bool, format: str, as_json: bool) -> int:
    # lazy: manifest.validate not loaded by plugman list (+11 ms)
    from plugman.manifest.validate import validate

    fmt = "json" if as_json else format
    result = validate([Path(p) for p in paths], strict=strict, source_keys=_source_keys)
    output.emit(output.validation(result, fmt))
    return 1 if result.errors else 0


def _source_keys(entry_points: bool = True) -> dict[str, str]:
    """The registered source kinds (the extensions' loaded only when a marketplace names a
    kind the built-ins lack: the plugin manager loads every entry point)."""
    # lazy: extensions not loaded by plugman list (<1 ms)
    from plugman import extensions

    return extensions.source_locations(entry_points)

"""The hot commands, run without typer: each declared once in the command table
(plugman.cli.commands), parsed here (plugman.cli.argv), run by its function here or in its own
module.

`install`, `uninstall`, `list`, `paths`, `config resolve` and `validate` are what users and
scripts run most, and the launchers agents' files name, `hooks exec` and `mcp run`
(plugman.cli.hook_launcher, plugman.cli.server_launcher), run on every hook call and server
start, so `plugman.cli.main` runs them from here directly; the typer application
(plugman.cli.app) derives from the same declarations commands that forward their words here,
for shell completion and for tests that drive the typer app. Every failure is reported by
`report`, the one place that turns a PlugmanError into `error:` / `hint:` (and an error
envelope under JSON): plugman.cli.running.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

from plugman.cli.argv import FastCommand, Values, help_text, parse
from plugman.cli.commands import COMMANDS
from plugman.cli.running import interrupted, listening, paths_for, reader_gone, report
from plugman.core.errors import PlugmanError, UsageError, from_os_error

if TYPE_CHECKING:
    from plugman.core.state import Scope
    from plugman.manifest.model import UserOption


def _scope(values: Values) -> Scope:
    return cast("Scope", values.text("scope"))  # one of its choices, parsed


def run_install(values: Values, project: str | None) -> None:
    from plugman import output
    from plugman.commands import install as installer

    as_json, dry_run = values.flag("json"), values.flag("dry_run")
    ask = _ask if sys.stdin.isatty() and not as_json and not dry_run else None
    config = values.words("config") or None
    changes = installer.install(
        paths_for(project),
        values.words("specs"),
        _scope(values),
        dry_run=dry_run,
        config=config,
        ask=ask,
        allow_hidden=values.flag("allow_hidden_text"),
    )
    output.emit(output.changes("install", changes, as_json))


def _ask(plugin_id: str, option: UserOption) -> str | None:
    """Ask a terminal for a required userConfig value (hidden when sensitive)."""
    from plugman import output

    about = f" ({option.description})" if option.description else ""
    question = f"{plugin_id}: {option.title}{about} [{option.key}, {option.type}]: "
    return output.ask(question, hidden=option.sensitive) or None


def run_uninstall(values: Values, project: str | None) -> None:
    from plugman import output
    from plugman.commands.uninstall import uninstall

    changes = uninstall(
        paths_for(project),
        values.words("names"),
        _scope(values),
        keep_data=values.flag("keep_data"),
        force=values.flag("force"),
    )
    output.emit(output.changes("uninstall", changes, values.flag("json")))


def run_list(values: Values, project: str | None) -> int:
    """Every installed plugin; exit 1 when a scope's plugman.toml is broken (stderr says it)."""
    from plugman import output
    from plugman.config.declarations import problems
    from plugman.plugins.listings import listing

    paths = paths_for(project)
    checked = None
    if values.flag("check"):  # opt-in: asking the agents' CLIs takes seconds
        from plugman.agents.readback import ask

        checked = ask(paths, os.environ)
    broken = problems(paths)
    output.emit(output.installed(listing(paths, os.environ), values.flag("json"), checked, broken))
    if broken and not values.flag("json"):
        output.emit(output.problems(broken), err=True)
    return 1 if broken else 0


def run_paths(values: Values, project: str | None) -> None:
    from plugman import output
    from plugman.core import secrets
    from plugman.core.paths import project_marker

    paths = paths_for(project)
    store = secrets.open_store(paths)
    found = {
        **paths.as_dict(),
        "project_marker": project_marker(paths.project_dir) or "",
        "secret_store": f"{store.kind}: {store.where}",
    }
    output.emit(output.located(found, values.flag("json")))


def run_resolve(values: Values, project: str | None) -> int:
    """The resolved config; exit 1 when a file of yours it reads is broken, as mcp list."""
    from plugman import output

    as_json, explain = values.flag("json"), values.flag("explain")
    secret, target, paths = values.flag("show_secrets"), values.text("target"), paths_for(project)
    if target is not None:
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
    from plugman.config.resolution import resolve

    resolution = resolve(paths, os.environ)
    output.emit(output.resolved(resolution, as_json, explain, secret))
    if resolution.diagnostics and not as_json:
        output.emit(output.problems(resolution.diagnostics), err=True)
    return 1 if resolution.broken(paths) else 0


def run_validate(values: Values, _project: str | None) -> int:
    from plugman import output
    from plugman.manifest.validate import validate

    paths = [Path(p) for p in values.words("paths")]
    strict, fmt = values.flag("strict"), values.text("format") or "text"
    if values.flag("json"):
        fmt = "json"
    result = validate(paths, strict=strict, source_keys=_source_keys)
    output.emit(output.validation(result, fmt))
    return 1 if result.errors else 0


def _source_keys(entry_points: bool = True) -> dict[str, str]:
    """The registered source kinds (the extensions' loaded only when a marketplace names a
    kind the built-ins lack: the plugin manager loads every entry point)."""
    from plugman import extensions

    return extensions.source_locations(entry_points)


def find(args: list[str]) -> FastCommand | None:
    """The fast command the first words of a command line name (`config resolve`, `install`)."""
    found = COMMANDS.get(" ".join(args[:2])) or COMMANDS.get(args[0] if args else "")
    return found if isinstance(found, FastCommand) else None


def run(command: FastCommand, args: list[str], project: str | None) -> int:
    """Run a fast command; PlugmanError and OSError propagate to the caller's `report`."""
    from plugman import output

    if {"-h", "--help"} & set(args[: args.index("--")] if "--" in args else args):
        output.emit(help_text(command))
        return 0
    values = parse(command, args)
    with listening():
        return command.runner()(values, project) or 0


def main(command: FastCommand, args: list[str], project: str | None) -> int:
    """`plugman [--project P] WORDS ARGS...` for a fast command: its exit code, every failure
    reported on stderr (and as an error envelope under JSON)."""
    try:
        return run(command, args, project)
    except BrokenPipeError:
        return reader_gone()
    except KeyboardInterrupt:
        return report(interrupted(), args, command.words)
    except (PlugmanError, OSError) as exc:
        failure = exc if isinstance(exc, PlugmanError) else from_os_error(exc)
        return report(failure, args, command.words)

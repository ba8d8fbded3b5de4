"""The hot commands, declared as data (plugman.cli.argv) and run without typer.

`install`, `uninstall`, `list`, `paths`, `config resolve` and `validate` are what users and
scripts run most, and the launchers agents' files name, `hooks exec` and `mcp run`
(plugman.cli.hook_launcher, plugman.cli.server_launcher), run on every hook call and server
start, so `plugman.cli.main` runs them from here directly; the typer application
(plugman.cli.app) mounts the same specs as commands that forward their words here, for shell
completion and for tests that drive the typer app. Every failure is reported by `report`, the
one place that turns a PlugmanError into `error:` / `hint:` (and an error envelope under JSON):
plugman.cli.running.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

from plugman.cli import hook_launcher, server_launcher
from plugman.cli.argv import (
    JSON,
    MANY,
    SCOPE,
    VALUE,
    Argument,
    Option,
    Spec,
    Values,
    help_text,
    parse,
)
from plugman.cli.running import interrupted, listening, paths_for, reader_gone, report
from plugman.core.errors import PlugmanError, UsageError, from_os_error

if TYPE_CHECKING:
    from plugman.core.state import Scope
    from plugman.manifest.model import UserOption


def _scope(values: Values) -> Scope:
    return cast("Scope", values.text("scope"))  # one of its choices, parsed


def _install(values: Values, project: str | None) -> None:
    from plugman import output
    from plugman.plugins import install as installer

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
    )
    output.emit(output.changes("install", changes, as_json))


def _ask(plugin_id: str, option: UserOption) -> str | None:
    """Ask a terminal for a required userConfig value (hidden when sensitive)."""
    from plugman import output

    about = f" ({option.description})" if option.description else ""
    question = f"{plugin_id}: {option.title}{about} [{option.key}, {option.type}]: "
    return output.ask(question, hidden=option.sensitive) or None


def _uninstall(values: Values, project: str | None) -> None:
    from plugman import output
    from plugman.plugins.uninstall import uninstall

    changes = uninstall(
        paths_for(project),
        values.words("names"),
        _scope(values),
        keep_data=values.flag("keep_data"),
        force=values.flag("force"),
    )
    output.emit(output.changes("uninstall", changes, values.flag("json")))


def _list(values: Values, project: str | None) -> int:
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
    output.emit(output.installed(listing(paths), values.flag("json"), checked, broken))
    if broken and not values.flag("json"):
        output.emit(output.problems(broken), err=True)
    return 1 if broken else 0


def _paths(values: Values, project: str | None) -> None:
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


def _resolve(values: Values, project: str | None) -> int:
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


def _validate(values: Values, _project: str | None) -> int:
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


SHOW_SECRETS = Option(("--show-secrets",), "Show secret values unmasked.")
SPECS = {
    spec.words: spec
    for spec in (
        Spec(
            "install",
            "Install plugins (and their dependencies) into a scope.",
            _install,
            (
                Argument(
                    "specs",
                    "NAME[@MARKETPLACE][SPECIFIER], a folder, a git URL, an archive URL or oci://REF.",
                    many=True,
                ),
            ),
            (
                SCOPE,
                Option(("--dry-run",), "Show what would happen."),
                Option(
                    ("--config", "-c"),
                    "KEY=VALUE: a userConfig value of the plugin. On a terminal, required "
                    "values not given are asked.",
                    MANY,
                    metavar="KEY=VALUE",
                ),
                JSON,
            ),
        ),
        Spec(
            "uninstall",
            "Uninstall plugins: remove exactly what their install wrote.",
            _uninstall,
            (Argument("names", "NAME or NAME@MARKETPLACE.", many=True),),
            (
                SCOPE,
                Option(("--keep-data",), "Keep the plugin's data folder."),
                Option(("--force",), "Remove even if needed or changed."),
                JSON,
            ),
        ),
        Spec(
            "list",
            "List installed plugins in every scope.",
            _list,
            options=(
                Option(
                    ("--check",),
                    "Also ask each linked agent's own CLI what it loaded, and show what it "
                    "failed to load.",
                ),
                JSON,
            ),
        ),
        Spec(
            "paths",
            "Show every location plugman reads or writes (PLUGMAN_HOME relocates them).",
            _paths,
            options=(JSON,),
        ),
        Spec(
            "config resolve",
            "Merge every scope into one config (managed, claude.ai, plugin, user, project, local).",
            _resolve,
            options=(
                JSON,
                Option(("--explain",), "Say why for every entry."),
                SHOW_SECRETS,
                Option(
                    ("--target",), "Print the MCP config in AGENT's format.", VALUE, metavar="AGENT"
                ),
            ),
        ),
        Spec(
            "validate",
            "Check plugins, marketplaces, hooks, MCP configs and SKILL.md files.",
            _validate,
            (Argument("paths", "Plugin or marketplace folders, or manifest files.", many=True),),
            (
                Option(("--strict",), "Treat warnings as errors."),
                Option(
                    ("--format",),
                    "text, json, sarif or github (workflow annotations).",
                    VALUE,
                    choices=("text", "json", "sarif", "github"),
                    default="text",
                    metavar="FORMAT",
                ),
                Option(("--json",), "The same as --format json."),
            ),
            epilog="A folder is validated as a marketplace (with every local plugin it lists) "
            "and/or a plugin; a file (plugin.json, marketplace.json, gemini-extension.json, "
            "hooks.json, .mcp.json, SKILL.md, agents/ or commands/ *.md) on its own. Every issue "
            "is reported at once with its file, line:column and key path.\n\nExit codes: 0 "
            "no errors, 1 errors found, 2 usage error.",
        ),
    )
}
SPECS[hook_launcher.SPEC.words] = hook_launcher.SPEC  # an agent runs it on every hook call
SPECS[server_launcher.SPEC.words] = server_launcher.SPEC  # and on every server start


def find(args: list[str]) -> Spec | None:
    """The spec the first words of a command line name (`config resolve`, `install`)."""
    return SPECS.get(" ".join(args[:2])) or SPECS.get(args[0] if args else "")


def run(spec: Spec, args: list[str], project: str | None) -> int:
    """Run a fast command; PlugmanError and OSError propagate to the caller's `report`."""
    from plugman import output

    if {"-h", "--help"} & set(args[: args.index("--")] if "--" in args else args):
        output.emit(help_text(spec))
        return 0
    values = parse(spec, args)
    with listening():
        return spec.run(values, project) or 0


def main(spec: Spec, args: list[str], project: str | None) -> int:
    """`plugman [--project P] WORDS ARGS...` for a fast command: its exit code, every failure
    reported on stderr (and as an error envelope under JSON)."""
    try:
        return run(spec, args, project)
    except BrokenPipeError:
        return reader_gone()
    except KeyboardInterrupt:
        return report(interrupted(), args, spec.words)
    except (PlugmanError, OSError) as exc:
        failure = exc if isinstance(exc, PlugmanError) else from_os_error(exc)
        return report(failure, args, spec.words)

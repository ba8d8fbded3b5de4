"""The typer application: the root group catches every PlugmanError once."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from plugman import __version__, output, progress
from plugman.cli import config, export, hooks, marketplace, mcp, plugins, runtime, serve
from plugman.cli.common import paths_of
from plugman.errors import PlugmanError, from_os_error


class RootGroup(TyperGroup):
    """Turns a PlugmanError from any command into a message and its exit code."""

    def invoke(self, ctx: Any) -> Any:
        try:
            with (
                progress.listening(output.progress_listener()),
                progress.warnings_to(output.warning_listener()),
            ):
                return super().invoke(ctx)
        except PlugmanError as exc:
            output.emit(output.error(exc), err=True)
            ctx.exit(int(exc.exit_code))
        except OSError as exc:  # a full disk, a denied path: said plainly, never a traceback
            failure = from_os_error(exc)
            output.emit(output.error(failure), err=True)
            ctx.exit(int(failure.exit_code))


app = typer.Typer(
    cls=RootGroup,
    name="plugman",
    help="A package manager and marketplace CLI for agent plugins.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        output.emit(f"plugman {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
    project: Annotated[
        str | None,
        typer.Option("--project", help="Project folder (default: the current directory)."),
    ] = None,
) -> None:
    """A package manager and marketplace CLI for agent plugins."""
    ctx.obj = {"project": project}


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def validate(ctx: typer.Context) -> None:
    """Check plugins, marketplaces, hooks, MCP configs and SKILL.md files (see --help)."""
    from plugman.cli.validate import run

    raise typer.Exit(run(ctx.args))


@app.command()
def paths(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON document.")] = False,
) -> None:
    """Show every location plugman reads or writes (PLUGMAN_HOME relocates them)."""
    found = paths_of(ctx).as_dict()
    if as_json:
        output.emit(output.envelope("paths", paths=found))
    else:
        output.emit("\n".join(f"{name:18} {value}" for name, value in found.items()))


app.command()(plugins.install)
app.command()(plugins.uninstall)
app.command()(plugins.enable)
app.command()(plugins.disable)
app.command("list")(plugins.listing)
app.command()(plugins.update)
app.command()(plugins.outdated)
app.command()(plugins.sync)
app.command()(plugins.lock)
app.command()(plugins.search)
app.command()(plugins.info)
app.command()(export.export)
app.command()(export.doctor)
app.add_typer(marketplace.app, name="marketplace")
app.add_typer(config.config_app, name="config")
app.add_typer(config.trust_app, name="trust")
mcp.mcp_app.command("probe")(runtime.probe_command)
mcp.mcp_app.command("tools")(runtime.tools_command)
mcp.mcp_app.command("serve")(serve.serve)
app.add_typer(mcp.mcp_app, name="mcp")
app.add_typer(mcp.connectors_app, name="connectors")
app.add_typer(hooks.hooks_app, name="hooks")


def run_app(args: list[str]) -> int:
    try:
        app(args=args, prog_name="plugman")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0

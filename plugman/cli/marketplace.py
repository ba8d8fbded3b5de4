"""`plugman marketplace add|list|update|remove|build`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from plugman import output
from plugman.cli.common import Json, Scope, paths_of

app = typer.Typer(no_args_is_help=True)  # its help: plugman.cli.commands


@app.command()
def add(
    ctx: typer.Context,
    source: Annotated[
        str,
        typer.Argument(help="A folder, git URL[#ref], owner/repo[@ref] or marketplace.json URL."),
    ],
    name: Annotated[str | None, typer.Option("--name", help="Register it under this name.")] = None,
    scope: Scope = "user",
    headers_helper: Annotated[
        str | None,
        typer.Option(
            "--headers-helper",
            help="For a marketplace.json URL: a command printing a JSON object of HTTP "
            "headers (Claude Code's headersHelper), run each time it is fetched.",
        ),
    ] = None,
    as_json: Json = False,
) -> None:
    """Add a marketplace (project and local scope also name it in that scope's plugman.toml)."""
    from plugman.plugins import marketplaces

    market = marketplaces.add(paths_of(ctx), source, name, scope, headers_helper)
    output.emit(output.markets("marketplace add", [market], as_json, verb="added"))


@app.command("list")
def listing(ctx: typer.Context, as_json: Json = False) -> None:
    """List known marketplaces."""
    from plugman.plugins import registry

    found = list(registry.known(paths_of(ctx)).values())
    output.emit(output.markets("marketplace list", found, as_json))


@app.command()
def update(
    ctx: typer.Context,
    names: Annotated[list[str] | None, typer.Argument()] = None,
    as_json: Json = False,
) -> None:
    """Fetch marketplaces again (all, or the named ones)."""
    from plugman.plugins import marketplaces
    from plugman.plugins.failed import Failed

    failed: list[Failed] = []
    found = marketplaces.update(paths_of(ctx), names or [], failed)
    output.emit(output.markets("marketplace update", found, as_json, "updated", failed))
    if failed:  # the rest are updated; exit 1 says some were not
        raise typer.Exit(1)


@app.command()
def remove(
    ctx: typer.Context,
    name: str,
    force: Annotated[
        bool, typer.Option("--force", help="Remove even if plugins come from it.")
    ] = False,
    as_json: Json = False,
) -> None:
    """Forget a marketplace."""
    from plugman.plugins import marketplaces

    market = marketplaces.remove(paths_of(ctx), name, force=force)
    output.emit(output.markets("marketplace remove", [market], as_json, verb="removed"))


@app.command()
def build(
    directory: Annotated[
        Path,
        typer.Argument(help="The marketplace folder (default: this one).", show_default=False),
    ] = Path(),
    check: Annotated[
        bool,
        typer.Option("--check", help="Change nothing; fail when marketplace.json is out of date."),
    ] = False,
    as_json: Json = False,
) -> None:
    """List every plugin folder in marketplace.json (name, source, description, version)."""
    from plugman.plugins.market_build import build as build_catalog

    output.emit(output.built(build_catalog(directory, check=check), as_json))

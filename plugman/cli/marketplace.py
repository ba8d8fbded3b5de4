"""`plugman marketplace add|list|update|remove|build`."""

from __future__ import annotations

from pathlib import Path

from plugman import output
from plugman.cli.argv import JSON, SCOPE, VALUE, Argument, Command, Context, Group, Option
from plugman.cli.common import paths_of
from plugman.cli.running import Exit
from plugman.core.state import Scope
from plugman.plugins.authoring.market_build import build as build_catalog
from plugman.plugins.catalog import marketplaces, registry
from plugman.plugins.catalog.failed import Failed


def add(
    ctx: Context,
    source: str,
    name: str | None = None,
    scope: Scope = "user",
    headers_helper: str | None = None,
    as_json: bool = False,
) -> None:
    """Add a marketplace (project and local scope also name it in that scope's plugman.toml)."""
    market = marketplaces.add(paths_of(ctx), source, name, scope, headers_helper)
    output.emit(output.markets("marketplace add", [market], as_json, verb="added"))


def listing(ctx: Context, as_json: bool = False) -> None:
    """List known marketplaces."""
    found = list(registry.known(paths_of(ctx)).values())
    output.emit(output.markets("marketplace list", found, as_json))


def update(
    ctx: Context,
    names: list[str] | None = None,
    as_json: bool = False,
) -> None:
    """Fetch marketplaces again (all, or the named ones)."""
    failed: list[Failed] = []
    found = marketplaces.update(paths_of(ctx), names or [], failed)
    output.emit(output.markets("marketplace update", found, as_json, "updated", failed))
    if failed:  # the rest are updated; exit 1 says some were not
        raise Exit(1)


def remove(
    ctx: Context,
    name: str,
    force: bool = False,
    as_json: bool = False,
) -> None:
    """Forget a marketplace."""
    market = marketplaces.remove(paths_of(ctx), name, force=force)
    output.emit(output.markets("marketplace remove", [market], as_json, verb="removed"))


def build(
    directory: Path = Path(),
    check: bool = False,
    as_json: bool = False,
) -> None:
    """List every plugin folder in marketplace.json (name, source, description, version)."""
    output.emit(output.built(build_catalog(directory, check=check), as_json))


APP = Group(
    "marketplace",
    "",
    (
        Command(
            "add",
            "",
            add,
            (
                Argument(
                    "source", "A folder, git URL[#ref], owner/repo[@ref] or marketplace.json URL."
                ),
            ),
            (
                Option(("--name",), "Register it under this name.", VALUE),
                SCOPE,
                Option(
                    ("--headers-helper",),
                    "For a marketplace.json URL: a command printing a JSON object of HTTP "
                    "headers (Claude Code's headersHelper), run each time it is fetched.",
                    VALUE,
                ),
                JSON,
            ),
        ),
        Command("list", "", listing, (), (JSON,)),
        Command("update", "", update, (Argument("names", many=True, required=False),), (JSON,)),
        Command(
            "remove",
            "",
            remove,
            (Argument("name"),),
            (
                Option(("--force",), "Remove even if plugins come from it."),
                JSON,
            ),
        ),
        Command(
            "build",
            "",
            build,
            (
                Argument(
                    "directory",
                    "The marketplace folder (default: this one).",
                    required=False,
                    type="path",
                    default=Path(),
                ),
            ),
            (
                Option(("--check",), "Change nothing; fail when marketplace.json is out of date."),
                JSON,
            ),
        ),
    ),
)

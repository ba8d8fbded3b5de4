"""`plugman agents add|remove|list`: which agents each scope feeds."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from plugman import output
from plugman.cli.common import Json, Scope, paths_of

agents_app = typer.Typer(no_args_is_help=True)  # its help: plugman.cli.commands
Agents = Annotated[list[str], typer.Argument(help="Agents, e.g. claude-code gemini codex.")]


@agents_app.command("add")
def add(
    ctx: typer.Context,
    names: Agents,
    scope: Scope = "user",
    via_gateway: Annotated[
        bool,
        typer.Option(
            "--via-gateway",
            help="One MCP entry running `plugman mcp serve` instead of each server, so tool "
            "calls pass the resolved hooks and policy.",
        ),
    ] = False,
    notify_updates: Annotated[
        bool,
        typer.Option(
            "--notify-updates",
            help="A SessionStart hook that says in one line, from plugman's cache, which "
            "plugins have updates (`[notices] updates` in your plugman.toml sets it for all).",
        ),
    ] = False,
    as_json: Json = False,
) -> None:
    """Link agents to a scope (in its plugman.toml) and deploy what is resolved to them."""
    from plugman.agents.deploy import link

    done = link(paths_of(ctx), names, scope, os.environ, via_gateway, notify_updates)
    output.emit(output.deployed("agents add", done, as_json))


@agents_app.command("remove")
def remove(
    ctx: typer.Context,
    names: Agents,
    scope: Scope = "user",
    force: Annotated[
        bool,
        typer.Option("--force", help="Go on when an entry plugman wrote was edited by hand."),
    ] = False,
    as_json: Json = False,
) -> None:
    """Unlink agents from a scope, taking out everything plugman deployed to them there."""
    from plugman.agents.deploy import unlink

    done = unlink(paths_of(ctx), names, scope, os.environ, force)
    output.emit(output.deployed("agents remove", done, as_json))


@agents_app.command("list")
def listing(ctx: typer.Context, as_json: Json = False) -> None:
    """Every agent plugman can feed: whether it is on this machine, where it is linked, and
    what the linked agents cannot take (the warnings that stand)."""
    from plugman import extensions
    from plugman.agents.export import home_of
    from plugman.agents.links import listing as agents
    from plugman.agents.warnings import standing

    paths, home = paths_of(ctx), home_of(os.environ)
    found = agents(paths, home, os.environ)
    lost = extensions.shadowed()
    output.emit(output.agents_listed(found, standing(paths, home), as_json, lost))

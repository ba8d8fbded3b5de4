"""`plugman agents add|remove|list`: which agents each scope feeds."""

from __future__ import annotations

import os

from plugman import extensions, output
from plugman.agents.export import home_of
from plugman.agents.links import listing as agents
from plugman.agents.warnings import standing
from plugman.cli.argv import JSON, SCOPE, Argument, Command, Context, Group, Option
from plugman.cli.common import paths_of
from plugman.commands.agents import link, unlink
from plugman.core.state import Scope


def add(
    ctx: Context,
    names: list[str],
    scope: Scope = "user",
    via_gateway: bool = False,
    notify_updates: bool = False,
    as_json: bool = False,
) -> None:
    """Link agents to a scope (in its plugman.toml) and deploy what is resolved to them."""
    done = link(paths_of(ctx), names, scope, os.environ, via_gateway, notify_updates)
    output.emit(output.deployed("agents add", done, as_json))


def remove(
    ctx: Context,
    names: list[str],
    scope: Scope = "user",
    force: bool = False,
    as_json: bool = False,
) -> None:
    """Unlink agents from a scope, taking out everything plugman deployed to them there."""
    done = unlink(paths_of(ctx), names, scope, os.environ, force)
    output.emit(output.deployed("agents remove", done, as_json))


def listing(ctx: Context, as_json: bool = False) -> None:
    """Every agent plugman can feed: whether it is on this machine, where it is linked, and
    what the linked agents cannot take (the warnings that stand)."""
    paths, home = paths_of(ctx), home_of(os.environ)
    found = agents(paths, home, os.environ)
    lost = extensions.shadowed()
    output.emit(output.agents_listed(found, standing(paths, home), as_json, lost))


AGENTS_APP = Group(
    "agents",
    "",
    (
        Command(
            "add",
            "",
            add,
            (Argument("names", "Agents, e.g. claude-code gemini codex.", many=True),),
            (
                SCOPE,
                Option(
                    ("--via-gateway",),
                    "One MCP entry running `plugman mcp serve` instead of each "
                    "server, so tool calls pass the resolved hooks and policy.",
                ),
                Option(
                    ("--notify-updates",),
                    "A SessionStart hook that says in one line, "
                    "from plugman's cache, which plugins "
                    "have updates (`[notices] updates` in your plugman.toml sets it for all).",
                ),
                JSON,
            ),
        ),
        Command(
            "remove",
            "",
            remove,
            (Argument("names", "Agents, e.g. claude-code gemini codex.", many=True),),
            (
                SCOPE,
                Option(("--force",), "Go on when an entry plugman wrote was edited by hand."),
                JSON,
            ),
        ),
        Command("list", "", listing, (), (JSON,)),
    ),
)

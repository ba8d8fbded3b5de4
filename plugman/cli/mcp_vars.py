"""`plugman mcp vars list|set|unset`: values for the `${VAR}` references in MCP server entries
(plugman.config.server_vars). A value is read from stdin, or asked for without echo on a
terminal; never from the command line, where other users and the shell history would see it."""

from __future__ import annotations

import os
import sys

from plugman import output
from plugman.cli.argv import Context
from plugman.cli.common import paths_of
from plugman.config import server_vars


def listing(ctx: Context, as_json: bool = False) -> None:
    """The variables plugman keeps a value for (names only), and which the environment sets."""
    names = server_vars.names(paths_of(ctx))
    output.emit(output.vars_listed(names, [n for n in names if n in os.environ], as_json))


def set_value(ctx: Context, name: str, as_json: bool = False) -> None:
    """Keep a value for ${NAME} (from stdin, or asked without echo on a terminal)."""
    # lazy: commands.server_vars not loaded by plugman mcp run (+198 ms)
    from plugman.commands import server_vars as changing

    server_vars.check(name)
    if sys.stdin.isatty():
        value = output.ask(f"{name}: ", hidden=True)
    else:
        value = sys.stdin.read().rstrip("\r\n")
    changing.set_value(paths_of(ctx), os.environ, name, value)
    output.emit(output.var_changed("set", name, True, as_json))


def unset(ctx: Context, name: str, as_json: bool = False) -> None:
    """Forget the value kept for ${NAME}."""
    # lazy: commands.server_vars not loaded by plugman mcp run (+198 ms)
    from plugman.commands import server_vars

    had = server_vars.unset(paths_of(ctx), os.environ, name)
    output.emit(output.var_changed("unset", name, had, as_json))


def ask_for(ctx: Context, needs: list[str]) -> dict[str, str]:
    """On a terminal, ask for each variable in `needs` that neither the environment nor the
    secret store has (an empty answer leaves it to the environment); the values given, which
    `mcp add --from` keeps in the session that adds the server (plugman.commands.servers)."""
    kept = set(server_vars.names(paths_of(ctx)))
    asked = [n for n in needs if n not in os.environ and n not in kept]
    if not asked or not sys.stdin.isatty():
        return {}
    given = {}
    for name in asked:
        value = output.ask(f"{name} (empty: set it in the environment instead): ", hidden=True)
        if value:
            given[name] = value
    return given

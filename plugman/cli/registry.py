"""`plugman registry login|logout`: credentials for OCI registries (`oci://` sources).

The password or token is read from stdin (`--password-stdin`, or whenever stdin is not a
terminal) or asked for without echo; never from the command line, where other users and the
shell history would see it.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from plugman import output
from plugman.cli.common import Json, paths_of
from plugman.core.errors import UsageError

registry_app = typer.Typer(no_args_is_help=True)  # its help: plugman.cli.commands
Registry = Annotated[str, typer.Argument(help="The registry: HOST or HOST:PORT.")]


@registry_app.command("login")
def login(
    ctx: typer.Context,
    registry: Registry,
    username: Annotated[
        str | None, typer.Option("--username", "-u", help="User name (asked if not given).")
    ] = None,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password or token from stdin.")
    ] = False,
    as_json: Json = False,
) -> None:
    """Check a user name and password (or token) with REGISTRY, then store them.

    They go to plugman's secret store (the OS keychain, else a 0600 file), nowhere else."""
    from plugman.core.oci import login as logins

    terminal = sys.stdin.isatty()
    if username is None:
        if not terminal:
            raise UsageError("no user name given", hint="pass --username NAME")
        username = str(typer.prompt("Username"))
    if password_stdin or not terminal:
        password = sys.stdin.read().rstrip("\r\n")
    else:
        password = str(typer.prompt("Password (or token)", hide_input=True))
    result = logins.login(paths_of(ctx), registry, username, password)
    output.emit(output.registry_logged_in(result, as_json))


@registry_app.command("logout")
def logout(ctx: typer.Context, registry: Registry, as_json: Json = False) -> None:
    """Forget the credentials `plugman registry login` stored for REGISTRY."""
    from plugman.core.oci import login as logins

    output.emit(output.registry_logged_out(logins.logout(paths_of(ctx), registry), as_json))

"""`plugman registry login|logout`: credentials for OCI registries (`oci://` sources).

The password or token is read from stdin (`--password-stdin`, or whenever stdin is not a
terminal) or asked for without echo; never from the command line, where other users and the
shell history would see it.
"""

from __future__ import annotations

import sys

from plugman import output
from plugman.cli.argv import JSON, VALUE, Argument, Command, Context, Group, Option
from plugman.cli.common import paths_of
from plugman.core.errors import UsageError
from plugman.core.oci import login as logins


def login(
    ctx: Context,
    registry: str,
    username: str | None = None,
    password_stdin: bool = False,
    as_json: bool = False,
) -> None:
    """Check a user name and password (or token) with REGISTRY, then store them.

    They go to plugman's secret store (the OS keychain, else a 0600 file), nowhere else."""
    terminal = sys.stdin.isatty()
    if username is None:
        if not terminal:
            raise UsageError("no user name given", hint="pass --username NAME")
        username = output.ask("Username: ")
    if password_stdin or not terminal:
        password = sys.stdin.read().rstrip("\r\n")
    else:
        password = output.ask("Password (or token): ", hidden=True)
    result = logins.login(paths_of(ctx), registry, username, password)
    output.emit(output.registry_logged_in(result, as_json))


def logout(ctx: Context, registry: str, as_json: bool = False) -> None:
    """Forget the credentials `plugman registry login` stored for REGISTRY."""
    output.emit(output.registry_logged_out(logins.logout(paths_of(ctx), registry), as_json))


REGISTRY_APP = Group(
    "registry",
    "",
    (
        Command(
            "login",
            "",
            login,
            (Argument("registry", "The registry: HOST or HOST:PORT."),),
            (
                Option(("--username", "-u"), "User name (asked if not given).", VALUE),
                Option(("--password-stdin",), "Read the password or token from stdin."),
                JSON,
            ),
        ),
        Command(
            "logout",
            "",
            logout,
            (Argument("registry", "The registry: HOST or HOST:PORT."),),
            (JSON,),
        ),
    ),
)

"""The `plugman` command. `--version`, the root help and `validate` take fast paths that do
not import typer.

`plugman validate` runs in pre-commit hooks and CI on every change, and `--version` / `--help`
are what a user types first: importing typer alone costs ~40 ms here, more than the whole
validation of a plugin. Those are therefore answered by hand (the root help from the command
table, plugman.cli.commands); the typer app forwards `validate` to the same code.
"""

from __future__ import annotations

import os
import sys

HELP = (["--help"], ["-h"])
USAGE = 2  # ExitCode.USAGE (plugman.core.errors): `plugman` alone is a usage error
COMPLETION = "_PLUGMAN_COMPLETE"  # set when the shell asks typer for completions (no arguments)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["validate"]:
        from plugman.cli.validate import run

        return run(args[1:])
    if args == ["--version"]:
        from plugman import __version__

        sys.stdout.write(f"plugman {__version__}\n")
        return 0
    if (not args or args in HELP) and COMPLETION not in os.environ:
        from plugman.cli.commands import root_help

        sys.stdout.write(root_help() + "\n")
        return 0 if args else USAGE
    from plugman.cli.app import run_app

    return run_app(args)

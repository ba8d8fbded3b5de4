"""The `plugman` command. `validate` takes a fast path that does not import typer.

`plugman validate` runs in pre-commit hooks and CI on every change, so its start-up matters:
importing typer alone costs ~75 ms here, more than the whole validation of a plugin. The
validate command is therefore parsed by hand; the typer app forwards to the same code.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["validate"]:
        from plugman.cli.validate import run

        return run(args[1:])
    from plugman.cli.app import run_app

    return run_app(args)

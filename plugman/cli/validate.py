"""`plugman validate PATH... [--strict] [--format text|json|sarif|github]`."""

from __future__ import annotations

import argparse
from pathlib import Path

from plugman.errors import ExitCode, PlugmanError

HELP = """Check plugins, marketplaces, hooks.json, MCP configs and SKILL.md files.

A folder is validated as a marketplace (with every local plugin it lists) and/or a plugin.
Every issue is reported at once with its file, line:column and key path.
Exit codes: 0 no errors, 1 errors found, 2 usage error."""


def parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(
        prog="plugman validate",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cli.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="plugin or marketplace folder, or a single file",
    )
    cli.add_argument("--strict", action="store_true", help="treat warnings as errors")
    cli.add_argument(
        "--format",
        choices=("text", "json", "sarif", "github"),
        default="text",
        help="output format (default: text)",
    )
    return cli


def run(args: list[str]) -> int:
    options = parser().parse_args(args)  # exits 2 with a usage message on a bad command line
    from plugman import output
    from plugman.validate import validate

    try:
        result = validate(options.paths, strict=options.strict)
    except PlugmanError as exc:
        output.emit(output.error(exc), err=True)
        return int(exc.exit_code)
    output.emit(output.validation(result, options.format))
    return int(ExitCode.FAILED if result.errors else ExitCode.OK)

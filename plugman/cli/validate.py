"""`plugman validate PATH... [--strict] [--format text|json|sarif|github]`.

Parsed by hand: this command runs in pre-commit hooks and CI on every change, and argparse alone
costs ~9 ms of its ~40 ms here (bench/validate_speed.py).
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import NamedTuple

from plugman.core.errors import ExitCode, PlugmanError, UsageError

FORMATS = ("text", "json", "sarif", "github")
USAGE = "usage: plugman validate [--strict] [--format text|json|sarif|github] PATH..."
HELP = f"""{USAGE}

Check plugins, marketplaces, hooks.json, MCP configs and SKILL.md files.

A folder is validated as a marketplace (with every local plugin it lists) and/or a plugin;
a file (plugin.json, marketplace.json, gemini-extension.json, hooks.json, .mcp.json,
SKILL.md, agents/ or commands/ *.md) on its own. Every issue is reported at once with its
file, line:column and key path.

options:
  --strict         treat warnings as errors
  --format FORMAT  text (default), json, sarif or github (workflow annotations)
  -h, --help       show this help

exit codes: 0 no errors, 1 errors found, 2 usage error"""


class Options(NamedTuple):
    paths: list[Path]
    strict: bool
    format: str


def parse(args: list[str]) -> Options:
    """The options of a `validate` command line; UsageError when it is wrong."""
    paths: list[Path] = []
    strict, fmt = False, "text"
    items = iter(args)
    for arg in items:
        if arg == "--":
            paths += [Path(rest) for rest in items]
        elif arg == "--strict":
            strict = True
        elif arg == "--format" or arg.startswith("--format="):
            fmt = arg.partition("=")[2] if "=" in arg else next(items, "")
            if fmt not in FORMATS:
                raise UsageError(
                    f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}", hint=USAGE
                )
        elif arg.startswith("-") and arg != "-":
            raise UsageError(f"unknown option {arg!r}", hint=USAGE)
        else:
            paths.append(Path(arg))
    if not paths:
        raise UsageError("no PATH given", hint=USAGE)
    return Options(paths, strict, fmt)


def _source_kinds() -> dict[str, str]:
    """The source types installed extensions add (only loaded when a marketplace needs them:
    the plugin manager loads every entry point)."""
    from plugman import extensions

    return extensions.source_locations()


def run(args: list[str]) -> int:
    from plugman import output

    if {"-h", "--help"} & set(args[: args.index("--")] if "--" in args else args):
        output.emit(HELP)
        return int(ExitCode.OK)
    try:
        options = parse(args)
        from plugman.manifest.validate import validate

        result = validate(options.paths, strict=options.strict, extension_kinds=_source_kinds)
    except PlugmanError as exc:
        output.emit(output.error(exc), err=True)
        if "--format=json" in args or ("--format", "json") in pairwise(args):
            output.emit(output.error_envelope(exc, "validate"))
        return int(exc.exit_code)
    output.emit(output.validation(result, options.format))
    return int(ExitCode.FAILED if result.errors else ExitCode.OK)

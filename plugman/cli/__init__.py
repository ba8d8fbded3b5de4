"""The `plugman` command. `--version`, the root help and the hot commands (plugman.cli.fast:
`install`, `uninstall`, `list`, `paths`, `config resolve`, `validate`, `mcp run`) take paths
that do not import typer.

Importing typer alone costs ~30 ms here, more than validating a plugin and a third of an
install: `--version` and `--help` are answered from the command table (plugman.cli.commands),
where every command is declared once; the hot commands are parsed from their declarations
(plugman.cli.argv), and every other command goes to the typer application, which derives its
commands from the same table (for completion and its test runner).
"""

from __future__ import annotations

import os
import sys

from plugman.cli.completion import COMPLETION

HELP = (["--help"], ["-h"])
USAGE = 2  # ExitCode.USAGE (plugman.core.errors): `plugman` alone is a usage error


def main(argv: list[str] | None = None) -> int:
    """Run `plugman ARGS` (`argv`, or this process's own arguments) and return its exit code.
    Run as the program itself (no `argv`), a command answered without typer ends the process
    at once (`done`). Ctrl-C is one line on stderr and exit code 130, whenever it comes."""
    args = sys.argv[1:] if argv is None else argv
    try:
        return _main(args, argv is None)
    except KeyboardInterrupt:  # outside a command's own handling (while starting, say)
        from plugman.cli.running import interrupted, report

        return report(interrupted(), args, None)


def _main(args: list[str], alone: bool) -> int:
    if args == ["--version"]:
        from plugman import __version__

        sys.stdout.write(f"plugman {__version__}\n")
        return done(0) if alone else 0
    if (not args or args in HELP) and COMPLETION not in os.environ:
        from plugman.cli.commands import root_help

        sys.stdout.write(root_help() + "\n")
        return done(0 if args else USAGE) if alone else (0 if args else USAGE)
    project, words = _project(args)
    if COMPLETION not in os.environ and words:
        from plugman.cli import fast

        command = fast.find(words)
        if command is not None:
            code = fast.main(command, words[len(command.words.split()) :], project)
            return done(code) if alone else code
    from plugman.cli.app import run_app

    return run_app(args)


def done(code: int) -> int:
    """End this process now, its output flushed: everything a fast command writes is committed
    (journaled, fsynced) by then, and tearing the interpreter down (~110 modules) would cost
    ~3.5 ms, a tenth of `plugman validate`. Output whose reader left (`plugman list | head -1`)
    ends it with 1 (plugman.cli.running.reader_gone)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 1
    os._exit(code)


LOUDNESS = {"-q": -1, "--quiet": -1, "-v": 1, "--verbose": 1}  # the root options -q and -v


def _project(args: list[str]) -> tuple[str | None, list[str]]:
    """The root options `--project PATH` (or `--project=PATH`), `-q` and `-v` in front of a
    command, and the words after them; none when the line starts otherwise (typer then reads
    it). -q and -v are set here (plugman.output.common.set_verbosity)."""
    project, level = None, 0
    while args:
        if args[0] == "--project" and len(args) > 1:
            project, args = args[1], args[2:]
        elif args[0].startswith("--project="):
            project, args = args[0].partition("=")[2], args[1:]
        elif args[0] in LOUDNESS:
            level, args = LOUDNESS[args[0]], args[1:]
        else:
            break
    if level or "plugman.output.common" in sys.modules:  # (set again: main runs in tests too)
        from plugman.output.common import set_verbosity

        set_verbosity(level)
    if args[:1] and args[0].startswith("-"):
        return None, []  # another root option (--help with a command, say): typer's
    return project, args

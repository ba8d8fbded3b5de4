"""The `plugman` command: one parser for every command (plugman.cli.app), every command
declared once in the table (plugman.cli.commands). `--version` and the root help are answered
from the table alone; the hot commands (`install`, `uninstall`, `list`, `paths`, `config
resolve`, `validate`, `hooks exec`, `mcp run`) import no command module but their own.
"""

from __future__ import annotations

import os
import sys

from plugman import __version__

TYPE_CHECKING = False  # (not typing's: importing typing costs ~5 ms, a fifth of --version)
if TYPE_CHECKING:
    from collections.abc import Mapping

    from plugman.cli.runner import Result

HELP = (["--help"], ["-h"])
USAGE = 2  # ExitCode.USAGE (plugman.core.errors): `plugman` alone is a usage error


def main(argv: list[str] | None = None) -> int:
    """Run `plugman ARGS` (`argv`, or this process's own arguments) and return its exit code.
    Run as the program itself (no `argv`), a hot command ends the process at once (`done`).
    Ctrl-C is one line on stderr and exit code 130, whenever it comes."""
    args = sys.argv[1:] if argv is None else argv
    if argv is None and args[:2] in (["hooks", "exec"], ["mcp", "run"]):
        # lazy: the launchers' fast path, ahead of every other import (plugman.cli.fast_launch)
        from plugman.cli.fast_launch import launch

        code = launch(args)
        if code is not None:
            return done(code)
    try:
        return _main(args, argv is None)
    except KeyboardInterrupt:  # outside a command's own handling (while starting, say)
        # lazy: cli.running not loaded by plugman --help (+16 ms)
        from plugman.cli.running import interrupted, report

        return report(interrupted(), args, None)


def _main(args: list[str], alone: bool) -> int:
    if args == ["--version"]:
        sys.stdout.write(f"plugman {__version__}\n")
        return done(0) if alone else 0
    if not args or args in HELP:
        # lazy: cli.commands not loaded by plugman --version (<1 ms)
        from plugman.cli.commands import root_help

        sys.stdout.write(root_help() + "\n")
        return done(0 if args else USAGE) if alone else (0 if args else USAGE)
    if args[0] == "__complete":  # a shell's Tab (plugman.cli.completion): no help, no errors
        # lazy: cli.completion not loaded by plugman list (+2 ms)
        from plugman.cli.completion import answer

        return done(answer(args[1:])) if alone else answer(args[1:])
    # lazy: cli.app not loaded by plugman --help (+13 ms)
    from plugman.cli.app import hot, run

    code = run(args)
    return done(code) if alone and hot(args) else code


def invoke(
    argv: list[str], input: str | None = None, env: Mapping[str, str | None] | None = None
) -> Result:
    """Run `plugman ARGV` in this process, its stdin `input`, its environment `env` over this
    one's: the exit code, stdout, stderr and what was raised (plugman.cli.runner)."""
    # lazy: cli.runner not loaded by plugman list (+47 ms)
    from plugman.cli.runner import invoke as run_in_process

    return run_in_process(argv, input, env)


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

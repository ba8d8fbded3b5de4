"""How every command runs: the paths of the run (the --project folder), progress
and warnings shown while it runs, and a failure reported: `error:` / `hint:` on stderr and,
when JSON was asked for, an error envelope on stdout."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from plugman.core.errors import InterruptError, PlugmanError, UsageError

if TYPE_CHECKING:
    from plugman.core.paths import Paths


class Exit(Exception):  # noqa: N818 (not an error: an exit code)
    """Ends a command with `code` (its output so far stands)."""

    def __init__(self, code: int = 0) -> None:
        super().__init__(code)
        self.code = code


def paths_for(project: str | None) -> Paths:
    """The paths of this run: the --project folder (which must exist), or the project found
    from the working directory upward."""
    # lazy: core.paths not loaded by plugman validate (+9 ms)
    from plugman.core.paths import Paths

    if project is not None and not Path(project).is_dir():
        raise UsageError(
            f"--project {project}: no such folder",
            hint="pass an existing project folder (or leave --project out: plugman finds the "
            "project from the current folder upward)",
        )
    # lazy: core.fs not loaded by plugman validate (+14 ms)
    from plugman.core.fs import journal_left

    paths = Paths.from_env(project=Path(project) if project else None)
    if journal_left(paths.journal_dir):  # left by a killed command, or one running now
        # lazy: core.store, core.transaction not loaded by plugman hooks notify (+8 ms)
        from plugman.core.store import Store
        from plugman.core.transaction import hot

        hot(paths.journal_dir, paths.state_dir / "lock", Store(paths.store_dir))
    return paths


@contextmanager
def listening() -> Iterator[None]:
    """Progress (on a terminal) and warnings (always) shown while a command runs."""
    # lazy: output, core.progress not loaded by plugman __complete (+1 ms)
    from plugman import output
    from plugman.core import progress

    status, warner = output.progress_listener(), output.warning_listener()

    def warned(message: object) -> None:  # on a line of its own, not after the status line
        if status is not None:
            status.finish()
        warner(message)

    try:
        with progress.listening(status, warned):
            yield
    finally:
        if status is not None:
            status.finish()


def report(failure: PlugmanError, args: list[str], command: str | None) -> int:
    """`error:` and `hint:` on stderr, an error envelope on stdout when JSON was asked for;
    the failure's exit code."""
    # lazy: output not loaded by plugman __complete (<1 ms)
    from plugman import output

    output.emit(output.error(failure), err=True)
    if wants_json(args):
        output.emit(output.error_envelope(failure, command))
    return int(failure.exit_code)


def interrupted() -> InterruptError:
    """Ctrl-C, said in one line: by the time the interrupt reaches here the open transaction
    has rolled back (a second Ctrl-C in between leaves its journal, which the next command
    rolls back), so only what an earlier transaction of this command committed stands."""
    # lazy: core.transaction not loaded by plugman config resolve (<1 ms)
    from plugman.core.transaction import commits

    if not commits():
        return InterruptError("interrupted; nothing was changed")
    return InterruptError(
        "interrupted after part of its work was saved: that part stays (see: plugman list), "
        "the rest was not changed"
    )


def wants_json(args: list[str]) -> bool:
    """--json (or validate's --format json) among plugman's own arguments (not after `--`,
    where a server's command is)."""
    own = args[: args.index("--")] if "--" in args else args
    return (
        "--json" in own
        or "--format=json" in own
        or ["--format", "json"] in (own[i : i + 2] for i in range(len(own)))
    )


READER_GONE = 1  # as click ended a command whose reader left (silently, with 1)


def reader_gone() -> int:
    """The exit code when whoever read the output stopped reading (`plugman list | head -1`):
    not an error of the command (whose changes are committed by then), so nothing is said, as
    click did; the rest of the output goes nowhere."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return READER_GONE

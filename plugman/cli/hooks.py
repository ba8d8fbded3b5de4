"""`plugman hooks list`, `plugman hooks run EVENT` (for agents without a hook system), and
`plugman hooks exec` (the launcher agents' hooks files name: plugman.cli.hook_launcher).

`hooks run` reads the event JSON on stdin and exits like a Claude Code hook would: 2 with the
reason on stderr when the hooks together block, deny or stop (`continue: false`), else 0. A
usage error (an unknown event, bad JSON on stdin) also exits 2, as every usage error does; a
caller tells it apart by stderr, which then starts with `error: ` (and, under --json, by the
error envelope on stdout, which has `error` where a run has `blocked`).
"""

from __future__ import annotations

import os
import sys

from plugman import output
from plugman.cli.argv import JSON, Argument, Command, Context, Group
from plugman.cli.common import paths_of
from plugman.cli.running import Exit
from plugman.core.errors import UsageError

BLOCKED = 2


def list_command(ctx: Context, as_json: bool = False) -> None:
    """Every resolved hook, in the order it runs: event, matcher, type, command and origin."""
    # lazy: config.resolution not loaded by plugman hooks notify (+86 ms)
    from plugman.config.resolution import resolve

    output.emit(output.hooks_listed(resolve(paths_of(ctx), os.environ), as_json))


def run_command(
    ctx: Context,
    event: str,
    as_json: bool = False,
) -> None:
    """Run EVENT's hooks with the event JSON read from stdin; exit 2 when they block."""
    # lazy: runtime.hooks.run, runtime.launch.hook not loaded by plugman hooks notify (+147 ms)
    from plugman.runtime.hooks.run import check_event, run_here
    from plugman.runtime.launch.hook import read_payload

    check_event(event)  # before stdin is read: an unknown event is the error to report
    text = sys.stdin.read() if not sys.stdin.isatty() else ""
    payload = read_payload(text, UsageError, "run EVENT")
    run = run_here(paths_of(ctx), event, payload, os.environ)
    output.emit(output.hook_run(run, as_json))
    if run.blocked or not run.continue_:
        output.emit(output.hook_block_reason(run), err=True)
        raise Exit(BLOCKED)


HOOKS_APP = Group(
    "hooks",
    "",
    (
        Command("list", "", list_command, (), (JSON,)),
        Command(
            "run",
            "",
            run_command,
            (Argument("event", "The event, e.g. PreToolUse (case-sensitive)."),),
            (JSON,),
        ),
    ),
)

"""`plugman hooks list`, `plugman hooks run EVENT` (for agents without a hook system), and
`plugman hooks exec` (the launcher agents' hooks files name: plugman.cli.hook_launcher).

`hooks run` reads the event JSON on stdin and exits like a Claude Code hook would: 2 with the
reason on stderr when the hooks together block, deny or stop (`continue: false`), else 0. A
usage error (an unknown event, bad JSON on stdin) also exits 2, as every usage error does; a
caller tells it apart by stderr, which then starts with `error: ` (and, under --json, by the
error envelope on stdout, which has `error` where a run has `blocked`).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Annotated, Any

import typer

from plugman import output
from plugman.cli import fast
from plugman.cli.common import Json, forward, paths_of

hooks_app = typer.Typer(
    help="The resolved hooks: list them, or run an event's hooks.", no_args_is_help=True
)
BLOCKED = 2
forward(hooks_app, fast.SPECS["hooks exec"])


@hooks_app.command("list")
def list_command(ctx: typer.Context, as_json: Json = False) -> None:
    """Every resolved hook, in the order it runs: event, matcher, type, command and origin."""
    from plugman.config.resolution import resolve

    output.emit(output.hooks_listed(resolve(paths_of(ctx), os.environ), as_json))


@hooks_app.command("run")
def run_command(
    ctx: typer.Context,
    event: Annotated[str, typer.Argument(help="The event, e.g. PreToolUse (case-sensitive).")],
    as_json: Json = False,
) -> None:
    """Run EVENT's hooks with the event JSON read from stdin; exit 2 when they block."""
    from plugman.runtime.hooks import check_event, run_here

    check_event(event)  # before stdin is read: an unknown event is the error to report
    payload = _payload(sys.stdin.read() if not sys.stdin.isatty() else "")
    run = run_here(paths_of(ctx), event, payload, os.environ)
    output.emit(output.hook_run(run, as_json))
    if run.blocked or not run.continue_:
        output.emit(output.hook_block_reason(run), err=True)
        raise typer.Exit(BLOCKED)


def _payload(text: str) -> dict[str, Any]:
    from plugman.core.errors import UsageError

    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"the event JSON on stdin is invalid: {exc.msg} at line {exc.lineno} column "
            f"{exc.colno} (char {exc.pos})",
            hint='pipe one JSON object, e.g. echo \'{"tool_name": "Bash"}\' | plugman hooks run',
        ) from None
    if not isinstance(data, dict):
        raise UsageError(
            f"the event JSON on stdin must be an object, not {type(data).__name__}",
            hint='e.g. {"tool_name": "Bash", "tool_input": {"command": "ls"}}',
        )
    return data

"""`plugman hooks exec AGENT EVENT HOOK-ID`: the hook launcher an agent's hooks file names
(plugman.runtime.hook_exec), run without typer, as a hot command (plugman.cli.fast).

The event JSON comes on stdin; what the handler prints goes to stdout and stderr as it printed
it, and the launcher exits with the handler's own exit code (2 blocks in Claude Code, Codex,
Gemini CLI and Cursor alike), or 0 with no output when the event does not select the handler.
Its own failures (an unknown agent, event or hook id, stdin that is not a JSON object, a
handler that timed out or could not start) exit 1, which every one of these agents treats as
a non-blocking error: the hook did not run, the agent carries on, stderr says why.
"""

from __future__ import annotations

import sys

from plugman.cli.argv import Argument, Spec, Values

SPEC_EPILOG = (
    "Written by plugman into the hooks files of agents other than Claude Code; it runs the one "
    "handler HOOK-ID names exactly as Claude Code would (matcher, `if`, `async`, environment). "
    "Exit codes: the handler's own; 0 when the event does not select it; 1 when the launcher "
    "could not run it (never 2, which would block the agent)."
)


def run(values: Values, project: str | None) -> int:
    import os

    from plugman.cli.running import paths_for
    from plugman.runtime import hook_exec

    stdin = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    words = values.words("words")
    agent, event, ref = words if len(words) == 3 else ("", "", "")
    if not agent:
        from plugman.core.errors import PlugmanError

        raise PlugmanError("hooks exec takes AGENT EVENT HOOK-ID", hint=SPEC_EPILOG)
    raw = hook_exec.run_here(paths_for(project), agent, event, ref, stdin, os.environ)
    sys.stdout.write(raw.stdout)
    sys.stderr.write(raw.stderr)
    said = hook_exec.failure(raw)
    if said:
        sys.stderr.write(said + "\n")
    return hook_exec.exit_code(raw)


WORDS = Argument(
    "words", "AGENT (codex, copilot, cursor, gemini), EVENT and HOOK-ID.", many=True, required=False
)
WORDS.metavar = "AGENT EVENT HOOK-ID"  # taken as words: a missing one exits 1, not 2
SPEC = Spec(
    "hooks exec",
    "Run one hook for an agent, as Claude Code would (the command agents' hooks files name).",
    run,
    (WORDS,),
    epilog=SPEC_EPILOG,
)

"""`plugman hooks exec AGENT EVENT HOOK-ID`: the hook launcher an agent's hooks file names
(plugman.runtime.hook_exec), run without typer, as a hot command (plugman.cli.fast; declared
in plugman.cli.commands).

The event JSON comes on stdin; what the handler prints goes to stdout and stderr as it printed
it, and the launcher exits with the handler's own exit code (2 blocks in Claude Code, Codex,
Gemini CLI and Cursor alike), or 0 with no output when the event does not select the handler.
Its own failures (an unknown agent, event or hook id, stdin that is not a JSON object, a
handler that timed out or could not start) exit 1, which every one of these agents treats as
a non-blocking error: the hook did not run, the agent carries on, stderr says why.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plugman.cli.argv import Values


def run(values: Values, project: str | None) -> int:
    import os

    from plugman.cli.running import paths_for
    from plugman.runtime import hook_exec

    stdin = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    words = values.words("words")
    agent, event, ref = words if len(words) == 3 else ("", "", "")
    if not agent:
        from plugman.cli.fast import find
        from plugman.core.errors import PlugmanError

        declared = find(["hooks", "exec"])  # in plugman.cli.commands: words, help, epilog
        hint = declared.epilog if declared else None
        raise PlugmanError("hooks exec takes AGENT EVENT HOOK-ID", hint=hint)
    raw = hook_exec.run_here(paths_for(project), agent, event, ref, stdin, os.environ)
    sys.stdout.write(raw.stdout)
    sys.stderr.write(raw.stderr)
    said = hook_exec.failure(raw)
    if said:
        sys.stderr.write(said + "\n")
    return hook_exec.exit_code(raw)

"""`plugman hooks exec AGENT EVENT HOOK-ID`: the hook launcher an agent's hooks file names
(plugman.runtime.hook_exec), and `plugman hooks notify AGENT`, the update notice its
SessionStart hook names (plugman.runtime.notices), run without typer, as hot commands
(plugman.cli.fast; declared in plugman.cli.commands).

The event JSON comes on stdin; what the handler prints goes to stdout and stderr as it printed
it, and the launcher exits with the handler's own exit code (2 blocks in Claude Code, Codex,
Gemini CLI and Cursor alike), or 0 with no output when the event does not select the handler.
Its own failures (an unknown agent, event or hook id, a handler that waits for approval, stdin
that is not a JSON object, a handler that timed out or could not start) exit 1, which every
one of these agents treats as a non-blocking error: the hook did not run, the agent carries
on, stderr says why.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plugman.cli.argv import Context


def run(ctx: Context, words: list[str]) -> int:
    import os

    from plugman.cli.running import paths_for
    from plugman.runtime import hook_exec

    stdin = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    agent, event, ref = words if len(words) == 3 else ("", "", "")
    if not agent:
        from plugman.cli.argv import Command
        from plugman.cli.commands import COMMANDS
        from plugman.core.errors import PlugmanError

        declared = COMMANDS["hooks exec"]  # words, help, epilog
        hint = declared.epilog if isinstance(declared, Command) else None
        raise PlugmanError("hooks exec takes AGENT EVENT HOOK-ID", hint=hint)
    tools = tools_of(agent)
    background = agent not in hook_exec.ASYNC_ITSELF
    raw = hook_exec.run_here(
        paths_for(ctx.project), tools, event, ref, stdin, os.environ, background
    )
    sys.stdout.write(raw.stdout)
    sys.stderr.write(raw.stderr)
    said = hook_exec.failure(raw)
    if said:
        sys.stderr.write(said + "\n")
    return hook_exec.exit_code(raw)


def notify(ctx: Context, agent: str | None) -> int:
    """`plugman hooks notify [AGENT]`: the update notice (plugman.runtime.notices) in the
    agent's SessionStart output form; exit 0 whatever happens, so the session never fails for
    it (a failure is one line on stderr)."""
    try:
        from plugman.cli.running import paths_for
        from plugman.runtime.notices import notice

        sys.stdout.write(notice(paths_for(ctx.project), agent or ""))
    except Exception as exc:  # never fail the agent's session start
        sys.stderr.write(f"plugman: no update notice: {exc}\n")
    return 0


def tools_of(agent: str) -> Mapping[str, str]:
    """The AGENT word's renames of Claude's tool names: a built-in agent's from the launcher's
    own table (no extension is loaded on this hot path), else those of the registered target
    whose hooks name AGENT as their launcher (`HookSpelling.launcher`, a third-party target)."""
    from plugman.runtime.hook_exec import TOOL_NAMES

    if agent in TOOL_NAMES:
        return TOOL_NAMES[agent]
    from plugman import extensions
    from plugman.core.errors import PlugmanError

    words = {
        spec.hooks.launcher: spec.hooks.tools
        for spec in extensions.targets().values()
        if spec.hooks is not None and spec.hooks.launcher
    }
    if agent not in words:
        raise PlugmanError(
            f"hooks exec: unknown agent {agent!r}", hint="agents: " + ", ".join(sorted(words))
        )
    return words[agent]

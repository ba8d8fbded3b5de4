"""`plugman hooks exec AGENT EVENT HOOK-ID`: the hook launcher an agent's hooks file names
(plugman.runtime.launch.hook), and `plugman hooks notify AGENT`, the update notice its
SessionStart hook names (plugman.runtime.launch.notices), hot commands
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

import os
import sys
from typing import TYPE_CHECKING

from plugman.cli.argv import Command
from plugman.cli.commands import COMMANDS
from plugman.cli.running import paths_for
from plugman.core.errors import PlugmanError

if TYPE_CHECKING:
    from plugman.cli.argv import Context
    from plugman.config.merge import Hook
    from plugman.core.paths import Paths
    from plugman.runtime.launch.agent_facts import Launching


def run(ctx: Context, words: list[str]) -> int:
    # lazy: runtime.launch.hook not loaded by plugman hooks notify (+109 ms)
    from plugman.runtime.launch import hook as hook_exec

    stdin = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    agent, event, ref = words if len(words) == 3 else ("", "", "")
    if not agent:
        declared = COMMANDS["hooks exec"]  # words, help, epilog
        hint = declared.epilog if isinstance(declared, Command) else None
        raise PlugmanError("hooks exec takes AGENT EVENT HOOK-ID", hint=hint)
    paths = paths_for(ctx.project)
    launching = launching_of(paths, agent)
    background = not launching.async_itself
    # lazy: runtime.launch.plans, planfile not loaded by plugman hooks notify (+1 ms)
    from plugman.runtime.launch import planfile, plans

    planfile.trace(os.environ, "full", ["hooks", "exec", *words])

    def planned(hook: Hook) -> None:
        if ctx.project is None:  # the plan the fast path finds from the working folder
            plans.write_miss(paths, os.environ, agent, launching, ref, hook)

    raw = hook_exec.run_here(
        paths, launching.tools, event, ref, stdin, os.environ, background, planned
    )
    sys.stdout.write(raw.stdout)
    sys.stderr.write(raw.stderr)
    said = hook_exec.failure(raw)
    if said:
        sys.stderr.write(said + "\n")
    return hook_exec.exit_code(raw)


def notify(ctx: Context, agent: str | None) -> int:
    """`plugman hooks notify [AGENT]`: the update notice (plugman.runtime.launch.notices) in the
    agent's SessionStart output form; exit 0 whatever happens, so the session never fails for
    it (a failure is one line on stderr)."""
    try:
        # lazy: runtime.launch.notices not loaded by plugman hooks exec (+3 ms)
        from plugman.runtime.launch import notices

        paths = paths_for(ctx.project)
        text = notices.line(paths)
        if text is not None:  # the agent's form looked up only when there is something to say
            sys.stdout.write(notices.render(text, form_of(paths, agent or "")))
    except Exception as exc:  # never fail the agent's session start
        sys.stderr.write(f"plugman: no update notice: {exc}\n")
    return 0


def launching_of(paths: Paths, agent: str) -> Launching:
    """What the launcher needs of the agent whose hooks file names it by the word `agent`
    (`HookSpelling.launcher`): as the deployment wrote it (`runtime.agent_facts`), else from the
    registered targets' specs, a built-in first (no extension loaded for one)."""
    # lazy: runtime.launch.agent_facts not loaded by plugman hooks notify (+1 ms)
    from plugman.runtime.launch import agent_facts

    written = agent_facts.load(paths).launchers.get(agent)
    if written is not None:
        return written
    # lazy: extensions not loaded by plugman hooks exec (<1 ms)
    from plugman import extensions

    words: dict[str, Launching] = {}
    for entry_points in (False, True):
        words = {
            spec.hooks.launcher: spec.hooks.launching()
            for spec in extensions.targets(entry_points).values()
            if spec.hooks is not None and spec.hooks.launcher
        }
        if agent in words:
            return words[agent]
    raise PlugmanError(
        f"hooks exec: unknown agent {agent!r}", hint="agents: " + ", ".join(sorted(words))
    )


def form_of(paths: Paths, agent: str) -> str:
    """The notice form of the target named `agent` (`AgentSpec.notice`): as the deployment
    wrote it, else from its spec; plain for a name no target has."""
    # lazy: runtime.launch.agent_facts not loaded by plugman hooks notify (+1 ms)
    from plugman.runtime.launch import agent_facts

    written = agent_facts.load(paths).agents.get(agent)
    if written is not None:
        return written.notice
    # lazy: extensions not loaded by plugman hooks exec (<1 ms)
    from plugman import extensions

    for entry_points in (False, True):
        spec = extensions.targets(entry_points).get(agent)
        if spec is not None:
            return spec.notice
    return "plain"

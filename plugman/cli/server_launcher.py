"""`plugman mcp run NAME`: the server launcher an agent's file names in place of a plugin's stdio
server or a secret-bearing entry (plugman.runtime.launch.server), a hot
command (plugman.cli.fast; declared in plugman.cli.commands): an agent starts every such server
through it.

A stdio server replaces this process (its stdin, stdout and exit code are the server's own); a
remote one is bridged over stdio. A server that cannot be started here (pending approval,
disabled, denied by policy, an option unset, no such server) exits 1 with why, nothing started.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from plugman.cli.running import paths_for
from plugman.config.resolution import resolve
from plugman.core import secrets
from plugman.runtime.launch import planfile
from plugman.runtime.launch import server as launch

if TYPE_CHECKING:
    from plugman.cli.argv import Context


def run(ctx: Context, name: str) -> int:
    """Become NAME's stdio server (plugman.runtime.launch.server); returns only when it cannot.
    Started from the agent's folder (no --project), it writes the plan the next start takes
    (plugman.runtime.launch.server_plans, plugman.cli.fast_launch)."""
    paths = paths_for(ctx.project)
    planfile.trace(os.environ, "full", ["mcp", "run", name])
    with secrets.recording() as reads:  # the store keys a plan names (never values)
        resolution = resolve(paths, os.environ)
    ready = launch.prepare(paths, name, os.environ, resolution)
    if ready.remote is not None:
        launch.bridge(paths, ready)
        return 0
    if ctx.project is None:
        # lazy: runtime.launch.server_plans not loaded until a server is about to start (+1 ms)
        from plugman.runtime.launch import server_plans

        server_plans.write_miss(paths, os.environ, resolution, reads, name)
    try:
        launch.execute(ready)
    except OSError as exc:
        raise launch.NotStartedError(
            f"{ready.name}: cannot start {ready.command}: {exc.strerror or exc}",
            hint=f"run: plugman config explain {ready.name}",
        ) from None

"""`plugman mcp run NAME`: the server launcher an agent's file names in place of a plugin's stdio
server or a secret-bearing entry (plugman.runtime.launch), run without typer, as a hot command
(plugman.cli.fast): an agent starts every such server through it.

A stdio server replaces this process (its stdin, stdout and exit code are the server's own); a
remote one is bridged over stdio. A server that cannot be started here (pending approval,
disabled, denied by policy, an option unset, no such server) exits 1 with why, nothing started.
"""

from __future__ import annotations

import os

from plugman.cli.argv import Argument, Spec, Values


def run(values: Values, project: str | None) -> int:
    """Become NAME's stdio server (plugman.runtime.launch); returns only when it cannot."""
    from plugman.cli.running import paths_for
    from plugman.runtime import launch

    paths = paths_for(project)
    ready = launch.prepare(paths, values.text("name") or "", os.environ)
    if ready.remote is not None:
        launch.bridge(paths, ready)
        return 0
    try:
        launch.execute(ready)
    except OSError as exc:
        raise launch.NotStartedError(
            f"{ready.name}: cannot start {ready.command}: {exc.strerror or exc}",
            hint=f"run: plugman config explain {ready.name}",
        ) from None


SPEC = Spec(
    "mcp run",
    "Start a resolved server in this process: exec a stdio one, bridge a remote one.",
    run,
    (Argument("name", "The server's resolved name, e.g. plugin:PLUGIN:SERVER."),),
    epilog="Secrets come from plugman's secret store at start; nothing is written. "
    "Exit codes: the server's own once it starts; 1 when it is not started (pending "
    "approval, disabled, denied by policy, an option unset, no such server).",
)

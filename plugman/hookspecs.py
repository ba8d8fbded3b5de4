"""The hooks plugman extensions implement (pluggy project name and entry-point group: `plugman`)."""

from __future__ import annotations

import pluggy

from plugman.agents.targets import Target

hookspec = pluggy.HookspecMarker("plugman")
hookimpl = pluggy.HookimplMarker("plugman")


@hookspec
def plugman_targets() -> list[Target]:  # type: ignore[empty-body]
    """The agents this extension can write an MCP config for."""

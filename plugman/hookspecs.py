"""The hooks plugman extensions implement (pluggy project name and entry-point group: `plugman`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:  # the hooks name what they return; this module imports none of it
    from plugman.agents.targets import AgentSpec
    from plugman.plugins.sources.kind import SourceKind

hookspec = pluggy.HookspecMarker("plugman")
hookimpl = pluggy.HookimplMarker("plugman")


@hookspec
def plugman_targets() -> list[AgentSpec]:  # type: ignore[empty-body]
    """The agents this extension adds, one `AgentSpec` each (`plugman.agents.targets`): its MCP
    file and spelling, hooks, skills, commands and subagents folders, and presence."""


@hookspec
def plugman_sources() -> list[SourceKind]:  # type: ignore[empty-body]
    """The plugin source kinds this extension adds (`github`, `archive`, …): each a
    `SourceKind`, the whole contract of a kind (fetch, lock fields, words, local-file check,
    plugin name, install specs; see plugman.plugins.sources.kind)."""

"""The built-in targets, registered through the same hook third-party extensions use (the
function is named as the hook; plugman.extensions takes it without pluggy's marker, so looking
up a built-in target does not import pluggy)."""

from __future__ import annotations

from plugman.agents.targets.spec import AgentSpec
from plugman.agents.targets.table import SPECS


def plugman_targets() -> list[AgentSpec]:
    return list(SPECS)

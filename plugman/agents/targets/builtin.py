"""The built-in targets, registered through the same hook third-party extensions use."""

from __future__ import annotations

from plugman.agents.targets.model import Target
from plugman.agents.targets.render import target
from plugman.agents.targets.table import SPECS
from plugman.hookspecs import hookimpl


@hookimpl
def plugman_targets() -> list[Target]:
    return [target(spec) for spec in SPECS]

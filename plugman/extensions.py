"""The plugin manager: built-in targets plus every installed `plugman` entry point."""

from __future__ import annotations

import functools

import pluggy

from plugman import hookspecs
from plugman.agents.targets import Target
from plugman.core.errors import UsageError


@functools.cache
def manager() -> pluggy.PluginManager:
    """The one plugin manager of this process (built-ins register through the same hook)."""
    from plugman.agents.targets import builtin

    found = pluggy.PluginManager("plugman")
    found.add_hookspecs(hookspecs)
    found.register(builtin)
    found.load_setuptools_entrypoints("plugman")
    return found


def targets() -> dict[str, Target]:
    """Every target by name; on a clash the one registered first (a built-in) wins."""
    found: dict[str, Target] = {}
    for batch in manager().hook.plugman_targets():  # newest registration first
        for target in batch:
            found[target.name] = target
    return dict(sorted(found.items()))


def target(name: str) -> Target:
    available = targets()
    if name not in available:
        raise UsageError(
            f"unknown target {name!r}", hint="available targets: " + ", ".join(available)
        )
    return available[name]

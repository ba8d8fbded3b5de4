"""The plugin manager: built-in targets and source kinds plus every installed `plugman` entry
point.

The built-ins are registered the way an entry point is: by module name (`BUILTINS`), so this
seam, which the domain packages call, imports none of them. A built-in wins a clash, so looking
up one target or source kind asks the built-ins first (`builtin_manager()`) and reads
the installed entry points only for a name they lack: scanning them (importlib.metadata) costs
~30 ms of every install."""

from __future__ import annotations

import functools
import importlib
from typing import TYPE_CHECKING

import pluggy

from plugman import hookspecs
from plugman.core.errors import PlugmanError, UsageError

if TYPE_CHECKING:
    from plugman.agents.targets import Target
    from plugman.plugins.sources.kind import SourceKind

TARGETS, SOURCES = "plugman.agents.targets.builtin", "plugman.plugins.sources.builtin"
BUILTINS = (TARGETS, SOURCES)


@functools.cache
def manager() -> pluggy.PluginManager:
    """The one plugin manager of this process (built-ins register through the same hook)."""
    found = _registered()
    found.load_setuptools_entrypoints("plugman")
    return found


@functools.cache
def builtin_manager(name: str) -> pluggy.PluginManager:
    """A plugin manager with one built-in module alone (the agents' table is not loaded to
    look up a source kind: ~20 ms)."""
    return _registered((name,))


def _registered(names: tuple[str, ...] = BUILTINS) -> pluggy.PluginManager:
    found = pluggy.PluginManager("plugman")
    found.add_hookspecs(hookspecs)
    for name in names:
        found.register(importlib.import_module(name), name)
    return found


def targets(entry_points: bool = True) -> dict[str, Target]:
    """Every target by name; on a clash the one registered first (a built-in) wins."""
    found: dict[str, Target] = {}
    for batch in (
        manager() if entry_points else builtin_manager(TARGETS)
    ).hook.plugman_targets():  # newest registration first
        for target in batch:
            found[target.name] = target
    return dict(sorted(found.items()))


def target(name: str) -> Target:
    builtin = targets(entry_points=False).get(name)
    if builtin is not None:
        return builtin
    available = targets()
    if name not in available:
        raise UsageError(
            f"unknown target {name!r}", hint="available targets: " + ", ".join(available)
        )
    return available[name]


def source_kinds(entry_points: bool = True) -> dict[str, SourceKind]:
    """Every source kind by its `source` value; on a clash a built-in wins."""
    found: dict[str, SourceKind] = {}
    for batch in (
        manager() if entry_points else builtin_manager(SOURCES)
    ).hook.plugman_sources():  # newest registration first
        for kind in batch:
            found.update(dict.fromkeys(kind.kinds, kind))
    return found


def source_locations() -> dict[str, str]:
    """Every source kind by its `source` value: the key of a source object naming what to
    fetch (what `manifest.marketplace.load` takes as `extension_kinds`)."""
    return {name: kind.location for name, kind in source_kinds().items()}


def source_kind(name: str) -> SourceKind:
    builtin = source_kinds(entry_points=False).get(name)
    if builtin is not None:
        return builtin
    available = source_kinds()
    if name not in available:
        raise PlugmanError(
            f"unknown plugin source type {name!r}",
            hint="supported types: " + ", ".join(sorted(available)),
        )
    return available[name]

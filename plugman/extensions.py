"""The plugin manager: built-in targets and source kinds plus every installed `plugman` entry
point.

The built-ins are registered the way an entry point is: by module name (`BUILTINS`), so this
seam, which the domain packages call, imports none of them. Their hook functions carry no
pluggy marker: the manager takes a built-in module's functions named as a hook (as pytest takes
`pytest_*` functions), so a built-in wins a clash and looking one up (`builtin(...)`) calls the
module's function directly, without pluggy (~3 ms) or the installed entry points (scanning
them, importlib.metadata, costs ~30 ms of every install); those are read only for a name the
built-ins lack."""

from __future__ import annotations

import functools
import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from plugman.core.errors import PlugmanError, UsageError

if TYPE_CHECKING:
    import pluggy

    from plugman.agents.targets import AgentSpec
    from plugman.plugins.sources.kind import SourceKind

TARGETS, SOURCES = "plugman.agents.targets.builtin", "plugman.plugins.sources.builtin"
BUILTINS = (TARGETS, SOURCES)
HOOKS = ("plugman_targets", "plugman_sources")


@functools.cache
def manager() -> pluggy.PluginManager:
    """The one plugin manager of this process: the built-ins, then every entry point."""
    import pluggy  # lazy: pluggy takes ~13 ms to import, only this path needs it

    from plugman import hookspecs  # lazy: hookspecs takes ~29 ms to import, only this path needs it

    class Manager(pluggy.PluginManager):
        def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
            if isinstance(plugin, ModuleType) and plugin.__name__ in BUILTINS and name in HOOKS:
                return {}  # a built-in's hook function, unmarked: pluggy's defaults
            return super().parse_hookimpl_opts(plugin, name)

    found = Manager("plugman")
    found.add_hookspecs(hookspecs)
    for name in BUILTINS:
        found.register(importlib.import_module(name), name)
    found.load_setuptools_entrypoints("plugman")
    return found


def builtin(module: str, hook: str) -> list[Any]:
    """What one built-in module's hook gives, called directly."""
    found: list[Any] = getattr(importlib.import_module(module), hook)()
    return found


def targets(entry_points: bool = True) -> dict[str, AgentSpec]:
    """Every agent plugman can deliver to, by name (each an `AgentSpec`: everything plugman
    needs of it); on a clash the one registered first (a built-in) wins."""
    found: dict[str, AgentSpec] = {}
    batches = (
        manager().hook.plugman_targets()  # newest registration first
        if entry_points
        else [builtin(TARGETS, "plugman_targets")]
    )
    for batch in batches:
        for target in batch:
            found[target.name] = target
    return dict(sorted(found.items()))


class Shadowed(NamedTuple):
    """An extension's target that is never used: a target registered before it (a built-in,
    or another extension's) has its name."""

    name: str  # the name both give their target
    extension: str  # the extension whose target is not used (its distribution's name)
    by: str  # what holds the name: "built-in", or the extension registered first

    @property
    def holder(self) -> str:
        return "the built-in agent" if self.by == "built-in" else f"extension {self.by}'s target"

    @property
    def message(self) -> str:
        return (
            f"agent {self.name!r} of extension {self.extension} is shadowed by {self.holder} "
            "of that name: it is not used"
        )

    @property
    def hint(self) -> str:
        return f"rename the agent in extension {self.extension} (its plugman_targets hook)"


def shadowed() -> list[Shadowed]:
    """Every extension target `targets` leaves out because its name is taken (it is never
    dropped silently: `plugman agents list` and `plugman doctor` say so)."""
    found = manager()
    dists = {id(plugin): dist.project_name for plugin, dist in found.list_plugin_distinfo()}
    owners: dict[str, str] = {}
    lost: list[Shadowed] = []
    for impl in found.hook.plugman_targets.get_hookimpls():  # in registration order
        owner = (
            "built-in"
            if impl.plugin_name == TARGETS
            else dists.get(id(impl.plugin), impl.plugin_name)
        )
        given = cast("list[AgentSpec]", impl.function())
        for spec in given:
            held = owners.setdefault(spec.name, owner)
            if held != owner:
                lost.append(Shadowed(spec.name, owner, held))
    return lost


def target(name: str) -> AgentSpec:
    own = targets(entry_points=False).get(name)
    if own is not None:
        return own
    available = targets()
    if name not in available:
        raise UsageError(
            f"unknown target {name!r}", hint="available targets: " + ", ".join(available)
        )
    return available[name]


def source_kinds(entry_points: bool = True) -> dict[str, SourceKind]:
    """Every source kind by its `source` value, the built-ins first (in their order); on a
    clash a built-in wins."""
    own: dict[str, SourceKind] = {}
    for kind in builtin(SOURCES, "plugman_sources"):
        own.update(dict.fromkeys(kind.kinds, kind))
    if not entry_points:
        return own
    found: dict[str, SourceKind] = {}
    for batch in manager().hook.plugman_sources():  # newest registration first
        for kind in batch:
            found.update(dict.fromkeys(kind.kinds, kind))
    return own | {name: kind for name, kind in found.items() if name not in own}


def source_locations(entry_points: bool = True) -> dict[str, str]:
    """Every source kind by its `source` value: the key of a source object naming what to
    fetch ("" for a kind with no object form), in the order install specs are tried (what
    `manifest.marketplace.load` takes as `source_keys`; `entry_points=False`: the built-ins)."""
    return {name: kind.location for name, kind in source_kinds(entry_points).items()}


def found_source_kind(name: str) -> SourceKind | None:
    """The source kind registered as `name` (a built-in without loading any extension)."""
    own = source_kinds(entry_points=False).get(name)
    return own if own is not None else source_kinds().get(name)


def source_kind(name: str) -> SourceKind:
    """The source kind registered as `name`; PlugmanError naming the registered ones when
    none is (never a guess: an unknown kind is not fetched, locked or shown as another)."""
    found = found_source_kind(name)
    if found is None:
        raise PlugmanError(
            f"unknown plugin source type {name!r}",
            hint="supported types: "
            + ", ".join(sorted(source_kinds()))
            + "; an installed plugman extension can add others (hook plugman_sources)",
        )
    return found

"""The rows of `plugman list`, `info`, `outdated` and `search`: typed, with the JSON each one
shows."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from plugman.agents.delivered import by_scope, kept, loading
from plugman.config import policy, policy_plugins
from plugman.core.paths import Paths
from plugman.core.sources import LockedSource
from plugman.core.state import SCOPES, InstallRecord, Scope

if TYPE_CHECKING:
    from plugman.agents.gating import Loading


def pin_of(source: LockedSource | None) -> str | None:
    """What exactly a lock-file source fetched, as its source kind reads it: the git commit (of
    the plugin's repository, or of the marketplace holding its folder), the archive's sha256,
    the OCI digest, the npm tarball's integrity, or an extension kind's own pin."""
    from plugman.plugins.catalog import (
        pins,  # lazy: plugins.pins is not loaded by `plugman list` (+2 ms)
    )

    return pins.pin_of(source)


class Outdated(NamedTuple):
    """An installed plugin whose catalog offers a different tree, or one that cannot be checked
    (with why, in `problem`)."""

    id: str
    scope: str
    version: str
    available: str | None  # the version the catalog offers now
    problem: str | None = None
    content_hash: str | None = None  # what is installed
    available_hash: str | None = None  # what the catalog offers
    pin: str | None = None  # the commit / sha256 / digest installed (pin_of)
    available_pin: str | None = None  # and offered
    # why what is offered is an older release than the installed one
    # (plugman.plugins.lifecycle.rollback)
    downgrade: str | None = None
    hint: str | None = None  # with a `problem`: what to do about it

    @property
    def failed(self) -> bool:
        """It could not be checked (blocked, its marketplace gone or broken, unreachable)."""
        return self.problem is not None

    def as_json(self) -> dict[str, Any]:
        row = {"id": self.id, "scope": self.scope, "version": self.version}
        if self.problem is not None:
            return {**row, "available": None, "problem": self.problem, "hint": self.hint}
        hashes = {"content_hash": self.content_hash, "available_hash": self.available_hash}
        pins = {"pin": self.pin, "available_pin": self.available_pin}
        same = {"same_version": self.available == self.version, "downgrade": self.downgrade}
        return {**row, "available": self.available, **same, **hashes, **pins}


class SearchHit(NamedTuple):
    """A catalog entry a search query matches; `version` is the one install would install
    (plugin.json's, else the catalog entry's), the other two what each of them says."""

    id: str
    version: str | None
    description: str | None
    catalog_version: str | None = None
    plugin_json_version: str | None = None  # None: not readable before it is fetched

    def as_json(self) -> dict[str, Any]:
        return self._asdict()


class Listed(NamedTuple):
    """An installed plugin as one scope's record has it (`plugman list`)."""

    id: str
    scope: Scope
    version: str
    enabled: bool
    source: LockedSource | None  # the lock-file source
    content_hash: str
    installed_at: str | None
    components: dict[str, list[str]] | None  # kind -> names, as the record has them
    agents: dict[str, list[str]]  # agent → the kinds of components it received
    signer: str | None = (
        None  # who signed it (plugman.plugins.supply_chain.signing); None: unsigned
    )
    blocked: str | None = None  # why managed policy blocks it (the rule, in which file)
    # agent → whether it loads what it received: loaded | waits (its folder trust) | shadowed
    loading: Mapping[str, Loading] = {}  # never mutated

    @property
    def pin(self) -> str | None:
        """What exactly was installed (`pin_of`)."""
        return pin_of(self.source)

    def as_json(self) -> dict[str, Any]:
        keys = ("id", "version", "scope", "enabled", "source", "content_hash", "installed_at")
        row = {key: getattr(self, key) for key in keys}
        row["source"] = self.source.table() if self.source is not None else None
        row |= {"components": self.components, "pin": self.pin, "agents": self.agents}
        row |= {"loading": {agent: said.as_json() for agent, said in self.loading.items()}}
        return (
            row
            | ({"signer": self.signer} if self.signer else {})
            | ({"blocked": self.blocked} if self.blocked else {})
        )


class Info(NamedTuple):
    """What `plugman info` knows of a plugin: its catalog entry (or its record, for a direct
    install) and where it is installed; `version` is the one install would install."""

    id: str
    name: str | None
    marketplace: str | None
    version: str | None
    description: str | None
    source: LockedSource | None  # the lock-file source
    components: dict[str, list[str]] | None  # kind -> names; None: not known before install
    installed: dict[str, str]  # scope -> version
    enabled: dict[str, bool]  # scope -> enabled
    catalog_version: str | None = None  # what the catalog entry says
    plugin_json_version: str | None = None  # what its plugin.json says, when read before install
    refused: str | None = None  # why install would refuse it (a local plugin, read before install)

    def as_json(self) -> dict[str, Any]:
        found = self._asdict()
        found["source"] = self.source.table() if self.source is not None else None
        return found


def listing(paths: Paths, env: Mapping[str, str] | None = None) -> list[Listed]:
    """Every installed plugin in every scope that applies here, and what reached which agent;
    with `env`, whether each agent loads it (its folder trust, Claude's own installs)."""
    reached = by_scope(paths)
    records = [(scope, InstallRecord.load(paths, scope)) for scope in SCOPES]
    loads = loading(paths, env, reached) if env is not None else {}
    if env is not None:
        every = [(plugin_id, scope) for scope, record in records for plugin_id in record.plugins]
        for key, said in kept(paths, env, every).items():
            loads.setdefault(key, {})["claude-code"] = said
    blocked = _blocked(paths)
    return [
        Listed(
            plugin_id,
            scope,
            entry.version,
            entry.enabled,
            entry.source,
            entry.content_hash,
            entry.installed_at,
            dict(entry.components),
            reached.get((plugin_id, scope), {}),
            entry.signer,
            blocked(plugin_id),
            loads.get((plugin_id, scope), {}),
        )
        for scope, record in records
        for plugin_id, entry in sorted(record.plugins.items())
    ]


def _blocked(paths: Paths) -> Callable[[str], str | None]:
    """Why managed policy blocks a plugin, with the rule's file and key path (None: it does
    not); the marketplace registry is read only when the policy speaks of plugins."""
    rules = policy.managed(paths)
    if not policy_plugins.speaks(rules):
        return lambda _plugin_id: None
    known = policy_plugins.markets(paths)

    def why(plugin_id: str) -> str | None:
        found = policy_plugins.blocked(rules, plugin_id, known)
        return None if found is None else f"{found.why} ({found.origin})"

    return why

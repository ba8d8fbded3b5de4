"""`plugman outdated` and `update`: installed plugins against their catalogs.

An update is content-hash aware: a changed tree under an unchanged version string is still an
update. A plugin installed directly from an OCI tag follows that tag.
"""

from __future__ import annotations

import os

from plugman.agents import deploy
from plugman.core import progress
from plugman.core.errors import PlugmanError
from plugman.core.fs import tree_hash
from plugman.core.paths import Paths
from plugman.core.session import Session, session
from plugman.core.state import SCOPES, InstalledPlugin, InstallRecord, Scope
from plugman.plugins import marketplaces, registry
from plugman.plugins import planner as resolver
from plugman.plugins.install import content_of
from plugman.plugins.installed import PluginChange, save
from plugman.plugins.listings import Outdated, pin_of
from plugman.plugins.sources.oci import following, unmoved


def _fresh(work: Session, plugin_id: str, entry: InstalledPlugin) -> resolver.Planned:
    spec = resolver.PluginRequest(plugin_id, entry.name, entry.marketplace)
    if entry.marketplace == resolver.DIRECT:
        spec = resolver.PluginRequest(plugin_id, direct=following(entry))
    found = resolver.plan(work.paths, work.store, [spec], {})
    fresh = next((p for p in found if p.id == plugin_id), None)
    if fresh is None:
        raise PlugmanError(
            f"{plugin_id} is no longer what its source offers: it now holds "
            + ", ".join(p.id for p in found),
            hint=f"uninstall {plugin_id} and install the new plugin",
        )
    return fresh


def _candidates(records: list[InstallRecord], names: list[str]) -> list[tuple[InstallRecord, str]]:
    """(record, id) of every plugin from a marketplace (or an OCI tag) in `records` (the
    named ones)."""
    found = []
    for record in records:
        for plugin_id, entry in record.plugins.items():
            wanted = not names or plugin_id in names or entry.name in names
            direct = entry.marketplace == resolver.DIRECT
            if wanted and (not direct or following(entry) is not None):
                found.append((record, plugin_id))
    return found


def refresh(paths: Paths, scopes: tuple[Scope, ...], names: list[str]) -> list[str]:
    """Fetch again the remote marketplaces the installed plugins (the named ones) come from,
    as `npm outdated` asks the registry; one that cannot be reached is a warning, and its
    cached catalog is used. The names of the marketplaces refreshed."""
    records = [InstallRecord.load(paths, scope) for scope in scopes]
    wanted = {r.plugins[i].marketplace for r, i in _candidates(records, names)}
    markets = registry.known(paths)
    done = []
    for name in sorted(wanted & set(markets)):
        if markets[name].source.kind == "directory":
            continue  # read in place: always current
        try:
            marketplaces.update(paths, [name])
        except PlugmanError as exc:
            progress.warn(f"could not refresh marketplace {name}: {exc.message}; using its cache")
        else:
            done.append(name)
    return done


def _gone(paths: Paths, entry: InstalledPlugin) -> str | None:
    """Why a plugin can no longer be looked up in its marketplace, if it cannot."""
    if entry.marketplace == resolver.DIRECT:
        return None
    market = registry.known(paths).get(entry.marketplace)
    if market is None:
        return f"marketplace {entry.marketplace} is not known any more"
    if all(e.name != entry.name for e in marketplaces.load(market).plugins):
        return f"not in marketplace {market.name} any more"
    return None


def outdated(paths: Paths, *, fetch_catalogs: bool = True) -> list[Outdated]:
    """Installed plugins whose catalog now offers a different tree, in every scope here, and
    those that cannot be checked (with why, in `problem`)."""
    if fetch_catalogs:
        refresh(paths, SCOPES, [])
    rows = []
    with session(paths) as work:
        records = [InstallRecord.load(paths, scope) for scope in SCOPES]
        for record, plugin_id in _candidates(records, []):
            entry = record.plugins[plugin_id]
            version = entry.version
            problem = _gone(paths, entry)
            if problem is not None:
                rows.append(Outdated(plugin_id, record.scope, version, None, problem))
                continue
            if unmoved(paths, entry):
                continue
            fresh = _fresh(work, plugin_id, entry)
            available = tree_hash(fresh.tree)
            if available != entry.content_hash:
                installed = entry.content_hash
                row = Outdated(plugin_id, record.scope, version, fresh.version)
                rows.append(
                    row._replace(
                        content_hash=installed,
                        available_hash=available,
                        pin=pin_of(entry.source),
                        available_pin=pin_of(fresh.source),
                    )
                )
    return rows


def update(
    paths: Paths, names: list[str], scope: Scope | None = None, *, fetch_catalogs: bool = True
) -> list[PluginChange]:
    """Bring installed plugins (all, or the named ones) up to their catalogs, in `scope` or
    in every scope here, after refreshing the marketplaces they come from."""
    scopes = (scope,) if scope else SCOPES
    if fetch_catalogs:
        refresh(paths, scopes, names)
    changes = []
    with session(paths) as work:
        records = [InstallRecord.load(paths, s) for s in scopes]
        candidates = _candidates(records, names)
        if names and not candidates:
            where = f"the {scope} scope" if scope else "any scope here"
            raise PlugmanError(
                f"none of {', '.join(names)} is installed from a marketplace in {where}",
                hint="run: plugman list",
            )
        hashes: dict[str, tuple[resolver.Planned, str]] = {}  # one fetch per plugin
        for record, plugin_id in candidates:
            change = _update_one(work, record, plugin_id, hashes)
            if change is not None:
                changes.append(change)
        for record in records:
            if any(c.scope == record.scope for c in changes):
                save(work, record)
        if changes:
            deploy.refresh(work, os.environ)
    return changes


def _update_one(
    work: Session,
    record: InstallRecord,
    plugin_id: str,
    hashes: dict[str, tuple[resolver.Planned, str]],
) -> PluginChange | None:
    entry = record.plugins[plugin_id]
    problem = _gone(work.paths, entry)
    if problem is not None:
        progress.warn(f"{plugin_id} ({record.scope}) is not updated: {problem}")
        return None
    if plugin_id not in hashes and unmoved(work.paths, entry):
        return None
    if plugin_id not in hashes:
        fresh = _fresh(work, plugin_id, entry)
        hashes[plugin_id] = (fresh, work.tx.add_tree(fresh.tree))
    fresh, content_hash = hashes[plugin_id]
    if content_hash == entry.content_hash:
        return None
    was = (entry.version, entry.content_hash, pin_of(entry.source))
    record.plugins[plugin_id] = InstalledPlugin.made(
        content_of(fresh),
        content_hash,
        entry,
        explicit=entry.explicit,
        consented=entry.consented,  # an update its user asked for: consent stands
        required_by=entry.required_by,
        declared=entry.declared,
    )
    moved = PluginChange("updated", plugin_id, fresh.version, record.scope, content_hash, *was)
    return moved._replace(pin=pin_of(fresh.source))

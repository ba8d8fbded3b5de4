"""`plugman outdated`, `update`, `search` and `info`: installed plugins against their catalogs.

An update is content-hash aware: a changed tree under an unchanged version string is still an
update. A plugin installed directly from an OCI tag follows that tag.
"""

from __future__ import annotations

import os
from typing import Any

from plugman.agents import deploy
from plugman.core import progress
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.fs import tree_hash
from plugman.core.paths import Paths
from plugman.core.session import Session, session
from plugman.core.state import SCOPES, Record, Scope
from plugman.manifest.model import MarketplaceEntry, Plugin
from plugman.plugins import marketplaces, pins, registry
from plugman.plugins import planner as resolver
from plugman.plugins.installed import Change, save
from plugman.plugins.listings import Info, Outdated, SearchHit
from plugman.plugins.sources.oci import following, unmoved


def _fresh(work: Session, plugin_id: str, entry: dict[str, Any]) -> resolver.Planned:
    spec = resolver.Spec(plugin_id, entry["name"], entry["marketplace"])
    if entry["marketplace"] == resolver.DIRECT:
        spec = resolver.Spec(plugin_id, direct=following(entry))
    found = resolver.plan(work.paths, work.store, [spec], {})
    fresh = next((p for p in found if p.id == plugin_id), None)
    if fresh is None:
        raise PlugmanError(
            f"{plugin_id} is no longer what its source offers: it now holds "
            + ", ".join(p.id for p in found),
            hint=f"uninstall {plugin_id} and install the new plugin",
        )
    return fresh


def _candidates(records: list[Record], names: list[str]) -> list[tuple[Record, str]]:
    """(record, id) of every plugin from a marketplace (or an OCI tag) in `records` (the
    named ones)."""
    found = []
    for record in records:
        for plugin_id, entry in record.plugins.items():
            wanted = not names or plugin_id in names or entry["name"] in names
            direct = entry["marketplace"] == resolver.DIRECT
            if wanted and (not direct or following(entry) is not None):
                found.append((record, plugin_id))
    return found


def refresh(paths: Paths, scopes: tuple[Scope, ...], names: list[str]) -> list[str]:
    """Fetch again the remote marketplaces the installed plugins (the named ones) come from,
    as `npm outdated` asks the registry; one that cannot be reached is a warning, and its
    cached catalog is used. The names of the marketplaces refreshed."""
    records = [Record.load(paths, scope) for scope in scopes]
    wanted = {r.plugins[i]["marketplace"] for r, i in _candidates(records, names)}
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


def _gone(paths: Paths, entry: dict[str, Any]) -> str | None:
    """Why a plugin can no longer be looked up in its marketplace, if it cannot."""
    if entry["marketplace"] == resolver.DIRECT:
        return None
    market = registry.known(paths).get(entry["marketplace"])
    if market is None:
        return f"marketplace {entry['marketplace']} is not known any more"
    if all(e.name != entry["name"] for e in marketplaces.load(market).plugins):
        return f"not in marketplace {market.name} any more"
    return None


def outdated(paths: Paths, *, fetch_catalogs: bool = True) -> list[Outdated]:
    """Installed plugins whose catalog now offers a different tree, in every scope here, and
    those that cannot be checked (with why, in `problem`)."""
    if fetch_catalogs:
        refresh(paths, SCOPES, [])
    rows = []
    with session(paths) as work:
        records = [Record.load(paths, scope) for scope in SCOPES]
        for record, plugin_id in _candidates(records, []):
            entry = record.plugins[plugin_id]
            version = entry["version"]
            problem = _gone(paths, entry)
            if problem is not None:
                rows.append(Outdated(plugin_id, record.scope, version, None, problem))
                continue
            if unmoved(paths, entry):
                continue
            fresh = _fresh(work, plugin_id, entry)
            available = tree_hash(fresh.tree)
            if available != entry["content_hash"]:
                installed = entry["content_hash"]
                row = Outdated(plugin_id, record.scope, version, fresh.version)
                rows.append(row._replace(content_hash=installed, available_hash=available))
    return rows


def update(
    paths: Paths, names: list[str], scope: Scope | None = None, *, fetch_catalogs: bool = True
) -> list[Change]:
    """Bring installed plugins (all, or the named ones) up to their catalogs, in `scope` or
    in every scope here, after refreshing the marketplaces they come from."""
    scopes = (scope,) if scope else SCOPES
    if fetch_catalogs:
        refresh(paths, scopes, names)
    changes = []
    with session(paths) as work:
        records = [Record.load(paths, s) for s in scopes]
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
    work: Session, record: Record, plugin_id: str, hashes: dict[str, tuple[resolver.Planned, str]]
) -> Change | None:
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
    if content_hash == entry["content_hash"]:
        return None
    entry.update(
        version=fresh.version, source=fresh.source, content_hash=content_hash, entry=fresh.entry
    )
    return Change("updated", plugin_id, fresh.version, record.scope, content_hash)


def search(paths: Paths, query: str) -> list[SearchHit]:
    """Catalog entries whose name, description, category or tags mention `query`."""
    needle = query.lower()
    rows = []
    for market in registry.known(paths).values():
        for entry in marketplaces.load(market).plugins:
            fields = entry.entry
            words = [
                entry.name,
                entry.description or "",
                str(fields.get("category", "")),
                *[str(t) for t in fields.get("tags", []) + fields.get("keywords", [])],
            ]
            if any(needle in word.lower() for word in words):
                hit = SearchHit(f"{entry.name}@{market.name}", entry.version, entry.description)
                rows.append(hit)
    return rows


def info(paths: Paths, text: str) -> Info:
    """A plugin's catalog entry (none for a direct install) and where it is installed: its
    version (the catalog's, else its plugin.json's), source, components and scopes."""
    name, _, market = text.partition("@")
    catalog = _catalog(paths, name, market or None)
    installed = _installed_as(paths, name, market or None, catalog)
    if catalog is None and not installed:
        listed = "" if market == resolver.DIRECT else " and no known marketplace lists it"
        raise PlugmanError(
            f"plugin {text!r} is not installed{listed}",
            hint=f"run: plugman search {name}, or plugman list",
        )
    ids = sorted({plugin_id for plugin_id, _entry in installed.values()})
    if catalog is None and len(ids) > 1:
        raise UsageError(f"{name!r} matches {', '.join(ids)}", hint="say which: NAME@MARKETPLACE")
    record = next((entry for _id, entry in installed.values()), None)
    found = _from_catalog(*catalog) if catalog else _from_record(ids[0], record or {})
    if record is not None:  # what is installed is what it has, whatever the catalog says now
        found = found._replace(
            components=record.get("components"), version=found.version or record["version"]
        )
    return found._replace(
        installed={scope: e["version"] for scope, (_id, e) in installed.items()},
        enabled={scope: e.get("enabled", True) for scope, (_id, e) in installed.items()},
    )


def _from_catalog(known: registry.Known, entry: MarketplaceEntry) -> Info:
    local = _local_plugin(known, entry)
    return Info(
        id=f"{entry.name}@{known.name}",
        name=entry.name,
        marketplace=known.name,
        version=entry.version or (local.version if local else None),
        description=entry.description or (local.description if local else None),
        source=pins.lock_source(entry.source, None, None) if entry.source else None,
        components=_components(local),
        installed={},
        enabled={},
    )


def _from_record(plugin_id: str, record: dict[str, Any]) -> Info:
    return Info(
        id=plugin_id,
        name=record.get("name"),
        marketplace=record.get("marketplace"),
        version=record.get("version"),
        description=(record.get("entry") or {}).get("description"),
        source=record.get("source"),
        components=record.get("components"),
        installed={},
        enabled={},
    )


def _catalog(
    paths: Paths, name: str, market: str | None
) -> tuple[registry.Known, MarketplaceEntry] | None:
    if market == resolver.DIRECT:
        return None
    try:
        return marketplaces.find(paths, name, market)
    except PlugmanError:
        return None


def _installed_as(
    paths: Paths,
    name: str,
    market: str | None,
    catalog: tuple[registry.Known, MarketplaceEntry] | None,
) -> dict[str, tuple[str, dict[str, Any]]]:
    """scope -> (id, record entry) of the plugin `name` (from `market`) in every scope here."""
    wanted = f"{catalog[1].name}@{catalog[0].name}" if catalog else None
    found: dict[str, tuple[str, dict[str, Any]]] = {}
    for scope in SCOPES:
        for plugin_id, entry in Record.load(paths, scope).plugins.items():
            same = (
                plugin_id == wanted
                if wanted
                else entry["name"] == name and (market is None or entry["marketplace"] == market)
            )
            if same:
                found[scope] = (plugin_id, entry)
    return found


def _local_plugin(known: registry.Known, entry: MarketplaceEntry) -> Plugin | None:
    """The plugin a local marketplace lists in one of its folders, loaded as install would."""
    source = entry.source
    if source is None or source.kind != "path" or registry.remote(known.source):
        return None
    root = (known.root / source.location).resolve()
    if not root.is_dir():
        return None
    try:
        return resolver.validate_tree(root, None if entry.strict else entry.entry, entry.name)
    except PlugmanError:
        return None


def _components(local: Plugin | None) -> dict[str, list[str]] | None:
    from plugman.plugins.install import components

    return components(local) if local else None

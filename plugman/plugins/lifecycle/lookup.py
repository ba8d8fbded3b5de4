"""`plugman search` and `info`: what the known catalogs offer, and where a plugin is installed.

The version shown is the one `install` would install, decided as Claude Code 2.1.328 decides it:
the plugin's own plugin.json version, else its catalog entry's (else, once fetched, its commit
or digest). Where both name one and they differ, both are kept, so the output can say so. A
plugin.json is read only from a folder of the marketplace itself (a local marketplace, or the
fetched copy of a remote one); other sources are known only once fetched.
"""

from __future__ import annotations

import json

from plugman.core.errors import PlugmanError, UsageError
from plugman.core.paths import Paths
from plugman.core.state import SCOPES, InstalledPlugin, InstallRecord
from plugman.manifest.model import MarketplaceEntry, Plugin
from plugman.plugins.catalog import marketplaces, pins, registry
from plugman.plugins.catalog.failed import Failed
from plugman.plugins.catalog.listings import Info, SearchHit
from plugman.plugins.lifecycle import planner as resolver
from plugman.plugins.lifecycle.install import components


def offered(known: registry.Known, entry: MarketplaceEntry) -> tuple[str | None, str | None]:
    """(the version install would install as far as known now, plugin.json's version when it
    can be read here)."""
    own = _plugin_json_version(known, entry)
    return own or entry.version, own


def _plugin_json_version(known: registry.Known, entry: MarketplaceEntry) -> str | None:
    """The version in the plugin.json of a plugin in one of the marketplace's own folders."""
    source = entry.source
    if source is None or source.kind != "path":
        return None
    base = known.root.resolve()
    file = (base / source.location / ".claude-plugin" / "plugin.json").resolve()
    if not file.is_relative_to(base) or not file.is_file():
        return None
    try:
        doc = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # install reports what is wrong with it
    version = doc.get("version") if isinstance(doc, dict) else None
    return version if isinstance(version, str) and version else None


def search(paths: Paths, query: str, failed: list[Failed] | None = None) -> list[SearchHit]:
    """Catalog entries whose name, description, category or tags mention `query`. A catalog
    that cannot be read goes into `failed` (when given) and the others are searched."""
    needle = query.lower()
    blocked = registry.blocked_plugins(paths)  # managed policy hides them, as Claude Code does
    rows = []
    for market in registry.known(paths).values():
        try:
            catalog = marketplaces.load(market)
        except PlugmanError as exc:
            if failed is None:
                raise
            failed.append(Failed.of(market.name, None, exc))
            continue
        for entry in catalog.plugins:
            words = [entry.name, entry.description or "", entry.category, *entry.tags]
            blocked_here = f"{entry.name}@{market.name}" in blocked
            if not blocked_here and any(needle in word.lower() for word in words):
                version, own = offered(market, entry)
                hit = SearchHit(
                    f"{entry.name}@{market.name}", version, entry.description, entry.version, own
                )
                rows.append(hit)
    return rows


def info(paths: Paths, text: str) -> Info:
    """A plugin's catalog entry (none for a direct install) and where it is installed: the
    version install would install (and the catalog's and plugin.json's, when known), source,
    components and scopes."""
    name, _, market = text.partition("@")
    try:
        catalog = _catalog(paths, name, market or None)
    except marketplaces.SharedNameError as shared:  # the one installed, else the user says which
        mine = {plugin_id for plugin_id, _e in _installed_as(paths, name, None, None).values()}
        if len(mine) != 1:
            raise UsageError(
                f"{name!r} is listed by several marketplaces: {', '.join(shared.candidates)}",
                hint=f"say which: plugman info {shared.candidates[0]}",
            ) from None
        market = mine.pop().partition("@")[2]
        catalog = _catalog(paths, name, market)
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
    if catalog is not None:
        found = _from_catalog(*catalog)
    else:  # not in a catalog: so installed
        assert record is not None
        found = _from_record(ids[0], record)
    if record is not None:  # what is installed is what it has, whatever the catalog says now
        found = found._replace(
            components=dict(record.components), version=found.version or record.version
        )
    return found._replace(
        installed={scope: e.version for scope, (_id, e) in installed.items()},
        enabled={scope: e.enabled for scope, (_id, e) in installed.items()},
    )


def _from_catalog(known: registry.Known, entry: MarketplaceEntry) -> Info:
    local, refused = None, None
    try:
        local = _local_plugin(known, entry)
    except PlugmanError as exc:
        refused = exc.message
    version, own = offered(known, entry)
    return Info(
        id=f"{entry.name}@{known.name}",
        name=entry.name,
        marketplace=known.name,
        version=version or (local.version if local else None),
        description=entry.description or (local.description if local else None),
        source=pins.lock_source(entry.source, None, None) if entry.source else None,
        components=_components(local),
        installed={},
        enabled={},
        catalog_version=entry.version,
        plugin_json_version=own,
        refused=refused,
    )


def _from_record(plugin_id: str, record: InstalledPlugin) -> Info:
    return Info(
        id=plugin_id,
        name=record.name,
        marketplace=record.marketplace,
        version=record.version,
        description=(record.entry or {}).get("description"),
        source=record.source,
        components=dict(record.components),
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
    except marketplaces.SharedNameError:
        raise
    except PlugmanError:
        return None


def _installed_as(
    paths: Paths,
    name: str,
    market: str | None,
    catalog: tuple[registry.Known, MarketplaceEntry] | None,
) -> dict[str, tuple[str, InstalledPlugin]]:
    """scope -> (id, record entry) of the plugin `name` (from `market`) in every scope here."""
    wanted = f"{catalog[1].name}@{catalog[0].name}" if catalog else None
    found: dict[str, tuple[str, InstalledPlugin]] = {}
    for scope in SCOPES:
        for plugin_id, entry in InstallRecord.load(paths, scope).plugins.items():
            same = (
                plugin_id == wanted
                if wanted
                else entry.name == name and (market is None or entry.marketplace == market)
            )
            if same:
                found[scope] = (plugin_id, entry)
    return found


def _local_plugin(known: registry.Known, entry: MarketplaceEntry) -> Plugin | None:
    """The plugin a local marketplace lists in one of its folders, loaded as install would
    (raising as install would refuse it)."""
    source = entry.source
    if source is None or source.kind != "path" or registry.remote(known.source):
        return None
    root = (known.root / source.location).resolve()
    if not root.is_dir():
        return None
    return resolver.validate_tree(root, None if entry.strict else entry.entry, entry.name)


def _components(local: Plugin | None) -> dict[str, list[str]] | None:
    return components(local) if local else None

"""`plugman outdated`, `update`, `search` and `info`: installed plugins against their catalogs.

An update is content-hash aware: a changed tree under an unchanged version string is still an
update.
"""

from __future__ import annotations

from typing import Any

from plugman import marketplaces, resolver
from plugman.errors import PlugmanError
from plugman.fs import tree_hash
from plugman.installer import Change, save
from plugman.paths import Paths
from plugman.session import Session, session
from plugman.state import SCOPES, Record


def _fresh(work: Session, plugin_id: str, entry: dict[str, Any]) -> resolver.Planned:
    spec = resolver.Spec(plugin_id, entry["name"], entry["marketplace"])
    found = resolver.plan(work.paths, work.store, [spec], {})
    return next(p for p in found if p.id == plugin_id)


def _candidates(
    paths: Paths, scopes: tuple[str, ...], names: list[str]
) -> list[tuple[Record, str]]:
    found = []
    for scope in scopes:
        record = Record.load(paths, scope)
        for plugin_id, entry in record.plugins.items():
            wanted = not names or plugin_id in names or entry["name"] in names
            if wanted and entry["marketplace"] != resolver.DIRECT:
                found.append((record, plugin_id))
    return found


def outdated(paths: Paths) -> list[dict[str, Any]]:
    """Installed plugins whose catalog now offers a different tree."""
    rows = []
    with session(paths) as work:
        for record, plugin_id in _candidates(paths, SCOPES, []):
            entry = record.plugins[plugin_id]
            fresh = _fresh(work, plugin_id, entry)
            available = tree_hash(fresh.tree)
            if available != entry["content_hash"]:
                rows.append(
                    {
                        "id": plugin_id,
                        "scope": record.scope,
                        "version": entry["version"],
                        "available": fresh.version,
                        "content_hash": entry["content_hash"],
                        "available_hash": available,
                    }
                )
    return rows


def update(paths: Paths, names: list[str], scope: str) -> list[Change]:
    """Bring installed plugins (all, or the named ones) in a scope up to their catalogs."""
    changes = []
    with session(paths) as work:
        record = Record.load(paths, scope)
        candidates = _candidates(paths, (scope,), names)
        if names and not candidates:
            raise PlugmanError(
                f"none of {', '.join(names)} is installed from a marketplace in the {scope} scope",
                hint="run: plugman list",
            )
        for _record, plugin_id in candidates:
            entry = record.plugins[plugin_id]
            fresh = _fresh(work, plugin_id, entry)
            content_hash = work.tx.add_tree(fresh.tree)
            if content_hash == entry["content_hash"]:
                continue
            entry.update(
                version=fresh.version,
                source=fresh.source,
                content_hash=content_hash,
                entry=fresh.entry,
            )
            changes.append(Change("updated", plugin_id, fresh.version, scope, content_hash))
        save(work, record)
    return changes


def search(paths: Paths, query: str) -> list[dict[str, Any]]:
    """Catalog entries whose name, description, category or tags mention `query`."""
    needle = query.lower()
    rows = []
    for market in marketplaces.known(paths).values():
        for entry in marketplaces.load(market).plugins:
            fields = entry.entry
            words = [
                entry.name,
                entry.description or "",
                str(fields.get("category", "")),
                *[str(t) for t in fields.get("tags", []) + fields.get("keywords", [])],
            ]
            if any(needle in word.lower() for word in words):
                rows.append(
                    {
                        "id": f"{entry.name}@{market.name}",
                        "version": entry.version,
                        "description": entry.description,
                    }
                )
    return rows


def _strings(value: Any) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []


def info(paths: Paths, text: str) -> dict[str, Any]:
    """One catalog entry, and where it is installed."""
    name, _, market = text.partition("@")
    known, entry = marketplaces.find(paths, name, market or None)
    plugin_id = f"{entry.name}@{known.name}"
    installed = {scope: Record.load(paths, scope).plugins.get(plugin_id) for scope in SCOPES}
    return {
        "id": plugin_id,
        "version": entry.version,
        "description": entry.description,
        "source": entry.source._asdict() if entry.source else None,
        "marketplace": known.name,
        "installed": {scope: value["version"] for scope, value in installed.items() if value},
    }

"""Marketplaces: `.claude-plugin/marketplace.json` and its plugin entries and sources."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plugman.manifest import components, schema
from plugman.manifest.diagnostics import KeyPath, Sink
from plugman.manifest.model import Marketplace, MarketplaceEntry, PluginSource
from plugman.manifest.names import RESERVED_MARKETPLACES, check_marketplace_name, check_plugin_name
from plugman.manifest.reader import Report, read_json

LOCATION_KEYS = {
    "github": "repo",
    "url": "url",
    "git-subdir": "url",
    "npm": "package",
    "archive": "url",
    "command": "command",
}


def root_of(file: Path) -> Path:
    """The marketplace root: the folder holding `.claude-plugin/`."""
    return file.parent.parent if file.parent.name == ".claude-plugin" else file.parent


def load(
    file: Path, report: Report, official: bool | None = None
) -> tuple[Marketplace | None, Sink]:
    """A marketplace catalog; `official` says whether it is one of Anthropic's own (by default:
    whether its name is reserved, as `claude plugin validate` decides)."""
    doc, sink = read_json(file, report)
    if doc is None:
        return None, sink
    schema.validate(doc.value, "marketplace.schema.json", sink)
    value = doc.value
    if not isinstance(value, dict):
        return None, sink
    name = value.get("name")
    if isinstance(name, str):
        check_marketplace_name(name, sink, ("name",))
    owner = value.get("owner")
    if official is None:
        official = isinstance(name, str) and name in RESERVED_MARKETPLACES
    entries = _entries(value, root_of(file), sink, official)
    if not entries:
        sink.warning("empty-marketplace", "the marketplace lists no plugins", ("plugins",))
    _check_renames(value.get("renames"), {e.name for e in entries}, sink)
    return Marketplace(
        name=name if isinstance(name, str) else root_of(file).name,
        root=root_of(file),
        owner=owner.get("name") if isinstance(owner, dict) else None,
        plugins=tuple(entries),
        manifest=value,
        official=official,
    ), sink


def _entries(
    value: dict[str, Any], root: Path, sink: Sink, official: bool
) -> list[MarketplaceEntry]:
    plugins = value.get("plugins")
    if not isinstance(plugins, list):
        return []
    metadata = value.get("metadata")
    plugin_root = metadata.get("pluginRoot") if isinstance(metadata, dict) else None
    seen: dict[str, int] = {}
    found = []
    for index, item in enumerate(plugins):
        path: KeyPath = ("plugins", index)
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(item, dict) or not isinstance(name, str):
            continue
        if not check_plugin_name(name, sink, (*path, "name"), official=official):
            continue
        if name in seen:
            sink.error(
                "duplicate-plugin",
                f"plugin {name!r} is listed twice",
                (*path, "name"),
                f"it is already listed at plugins[{seen[name]}]; keep one entry",
            )
            continue
        seen[name] = index
        source = parse_source(item.get("source"), root, plugin_root, sink, (*path, "source"))
        version, description = item.get("version"), item.get("description")
        found.append(
            MarketplaceEntry(
                name=name,
                source=source,
                strict=item.get("strict") is not False,
                version=version if isinstance(version, str) else None,
                description=description if isinstance(description, str) else None,
                entry=item,
                position=index,
            )
        )
    return found


def parse_source(
    value: Any, root: Path, plugin_root: Any, sink: Sink, path: KeyPath
) -> PluginSource | None:
    """A plugin source; relative paths must stay inside the marketplace."""
    if isinstance(value, str):
        rel = value
        if isinstance(plugin_root, str) and "/" not in value and not value.startswith("."):
            rel = f"{plugin_root.rstrip('/')}/{value}"
        if components.inside(root, rel, sink, path, "source", "marketplace") is None:
            return None
        return PluginSource("path", rel)
    if not isinstance(value, dict):
        return None
    kind = value.get("source")
    location = value.get(LOCATION_KEYS.get(kind, ""), "") if isinstance(kind, str) else ""
    if not isinstance(kind, str) or not isinstance(location, str) or not location:
        return None
    sha = value.get("sha") or value.get("sha256")
    fields = {key: value.get(key) for key in ("ref", "path", "version")}
    ref, subdir, version = (item if isinstance(item, str) else None for item in fields.values())
    return PluginSource(kind, location, ref, sha if isinstance(sha, str) else None, subdir, version)


def local_root(market: Marketplace, entry: MarketplaceEntry) -> Path | None:
    """The folder of a plugin with a relative-path source."""
    if entry.source is None or entry.source.kind != "path":
        return None
    return market.root / entry.source.location


def _check_renames(value: Any, names: set[str], sink: Sink) -> None:
    """Rename chains must end in null or a listed plugin, without cycles."""
    if not isinstance(value, dict):
        return
    for start in value:
        seen = [start]
        current: Any = value[start]
        while isinstance(current, str) and current in value and current not in seen:
            seen.append(current)
            current = value[current]
        if isinstance(current, str) and current in seen:
            sink.error(
                "bad-rename",
                f"renames form a cycle: {' -> '.join([*seen, current])}",
                ("renames", start),
                "end the chain in a listed plugin or null",
            )
        elif isinstance(current, str) and current not in names:
            sink.error(
                "bad-rename",
                f"rename of {start!r} ends in {current!r}, which is not listed",
                ("renames", start),
                "end the chain in a listed plugin or null",
            )

"""Marketplaces: `.claude-plugin/marketplace.json` and its plugin entries and sources."""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
    "oci": "ref",
    "command": "command",
}
# The source types extensions add, by name: the key of a source object that holds what to
# fetch. Asked for only when an entry names a type that is not built in (the caller knows the
# registered types; this layer does not).
ExtensionKinds = Callable[[], Mapping[str, str]]


def root_of(file: Path) -> Path:
    """The marketplace root: the folder holding `.claude-plugin/`."""
    return file.parent.parent if file.parent.name == ".claude-plugin" else file.parent


def load(
    file: Path,
    report: Report,
    official: bool | None = None,
    extension_kinds: ExtensionKinds | None = None,
) -> tuple[Marketplace | None, Sink]:
    """A marketplace catalog; `official` says whether it is one of Anthropic's own (by default:
    whether its name is reserved, as `claude plugin validate` decides). An entry of a source
    type neither built in nor in `extension_kinds` is an error (none: built-in types only)."""
    doc, sink = read_json(file, report)
    if doc is None:
        return None, sink
    value = doc.value
    name = value.get("name") if isinstance(value, dict) else None
    if isinstance(name, str):  # first: its finding says what Claude Code says of the name
        check_marketplace_name(name, sink, ("name",))
    schema.validate(value, "marketplace.schema.json", sink)
    if not isinstance(value, dict):
        return None, sink
    owner = value.get("owner")
    if official is None:
        official = isinstance(name, str) and name in RESERVED_MARKETPLACES
    kinds = _Kinds(extension_kinds)
    entries = _entries(value, root_of(file), sink, official, kinds)
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


class _Kinds:
    """The extensions' source types, asked for once, when the first entry needs them."""

    def __init__(self, given: ExtensionKinds | None) -> None:
        self.given = given
        self.found: Mapping[str, str] | None = None

    def __call__(self) -> Mapping[str, str]:
        if self.found is None:
            self.found = self.given() if self.given is not None else {}
        return self.found


def _entries(
    value: dict[str, Any], root: Path, sink: Sink, official: bool, kinds: ExtensionKinds
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
        components.check_paths(item, sink.child(path))
        where = (*path, "source")
        source = parse_source(item.get("source"), root, plugin_root, sink, where, kinds)
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
    value: Any,
    root: Path,
    plugin_root: Any,
    sink: Sink,
    path: KeyPath,
    extension_kinds: ExtensionKinds | None = None,
) -> PluginSource | None:
    """A plugin source; relative paths must stay inside the marketplace, and a source object's
    type must be built in or added by an extension (`extension_kinds`)."""
    if isinstance(value, str):
        rel = value
        if isinstance(plugin_root, str) and "/" not in value and not value.startswith("."):
            rel = f"{plugin_root.rstrip('/')}/{value}"
        elif not value.startswith("./") and value != "." and not value.startswith(("/", "~")):
            # as Claude Code 2.1.328 refuses it
            sink.error(
                "path-not-relative",
                f"source path {value!r} does not start with './'"
                + components.escapes(value, "marketplace"),
                path,
                "write it as './" + value.lstrip("./") + "', or set metadata.pluginRoot to "
                "allow bare names",
            )
            return None
        if components.inside(root, rel, sink, path, "source", "marketplace") is None:
            return None
        return PluginSource("path", rel)
    if not isinstance(value, dict):
        return None
    kind = value.get("source")
    if not isinstance(kind, str) or kind == "path":  # the schema says what is wrong
        return None
    key = LOCATION_KEYS.get(kind) or _extension_key(kind, extension_kinds, sink, path)
    location = value.get(key, "") if key else ""
    if not isinstance(location, str) or not location:
        if key and kind not in LOCATION_KEYS:
            sink.error(
                "schema-required",
                f"missing required key {key!r}",
                path,
                f"a {kind!r} source names what to fetch in {key!r}",
            )
        return None
    sha = value.get("sha") or value.get("sha256") or value.get("digest")
    fields = {key: value.get(key) for key in ("ref", "path", "version", "registry")}
    ref, subdir, version, npm = (v if isinstance(v, str) else None for v in fields.values())
    sha = sha if isinstance(sha, str) and kind != "npm" else None  # npm: only the lock pins
    return PluginSource(kind, location, ref, sha, subdir, version, npm if kind == "npm" else None)


def _extension_key(
    kind: str, extension_kinds: ExtensionKinds | None, sink: Sink, path: KeyPath
) -> str | None:
    """The key holding the location of an extension's source type; an error when no installed
    extension adds `kind`."""
    added = extension_kinds() if extension_kinds is not None else {}
    if kind in added:
        return added[kind]
    others = sorted(name for name in added if name not in LOCATION_KEYS and name != "path")
    known = ", ".join(repr(name) for name in [*LOCATION_KEYS, *others])
    sink.error(
        "schema-enum",
        f"unknown source type {kind!r}: must be one of {known}",
        (*path, "source"),
        "an installed plugman extension can add source types (hook plugman_sources)",
    )
    return None


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

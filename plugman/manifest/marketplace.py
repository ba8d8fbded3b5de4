"""Marketplaces: `.claude-plugin/marketplace.json` and its plugin entries and sources."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from plugman.core.jsonvalue import JSONObject
from plugman.manifest import components, schema
from plugman.manifest.diagnostics import KeyPath, Sink
from plugman.manifest.model import Marketplace, MarketplaceEntry, PluginSource
from plugman.manifest.names import RESERVED_MARKETPLACES, check_marketplace_name, check_plugin_name
from plugman.manifest.reader import Report, read_json


class SourceKeys(Protocol):
    """The registered source kinds by their `source` value: the key of a source object naming
    what to fetch ("" for a kind with no object form). This layer knows no kind: the caller
    passes `plugman.extensions.source_locations`. `entry_points=False` asks the built-in kinds
    only, which loads no extension; the rest are asked for only when an entry names another."""

    def __call__(self, entry_points: bool = True) -> Mapping[str, str]: ...


def root_of(file: Path) -> Path:
    """The marketplace root: the folder holding `.claude-plugin/`."""
    return file.parent.parent if file.parent.name == ".claude-plugin" else file.parent


def load(
    file: Path,
    report: Report,
    official: bool | None = None,
    *,
    source_keys: SourceKeys,
) -> tuple[Marketplace | None, Sink]:
    """A marketplace catalog; `official` says whether it is one of Anthropic's own (by default:
    whether its name is reserved, as `claude plugin validate` decides). An entry of a source
    type `source_keys` does not register is an error."""
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
    kinds = _Kinds(source_keys)
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
    """The registered source kinds, asked for once each (the built-ins when the first entry
    needs them, the extensions' when an entry names a kind the built-ins lack)."""

    def __init__(self, given: SourceKeys) -> None:
        self.given = given
        self.found: dict[bool, Mapping[str, str]] = {}

    def asked(self, entry_points: bool) -> Mapping[str, str]:
        if entry_points not in self.found:
            self.found[entry_points] = self.given(entry_points=entry_points)
        return self.found[entry_points]

    def key(self, kind: str) -> str | None:
        """The key naming what a `kind` source fetches; None when no kind is registered so."""
        own = self.asked(False)
        return own[kind] if kind in own else self.asked(True).get(kind)


def _entries(
    value: JSONObject, root: Path, sink: Sink, official: bool, kinds: _Kinds
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
                category=str(item.get("category", "")),
                tags=(*_words(item.get("tags")), *_words(item.get("keywords"))),
            )
        )
    return found


def _words(value: Any) -> tuple[str, ...]:
    """A list of words as text (a value of another type is the schema's finding, not one)."""
    return tuple(str(word) for word in value) if isinstance(value, list) else ()


def parse_source(
    value: Any, root: Path, plugin_root: Any, sink: Sink, path: KeyPath, kinds: _Kinds
) -> PluginSource | None:
    """A plugin source; relative paths must stay inside the marketplace, and a source object's
    type must be a registered source kind (built in, or added by an extension)."""
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
        return PluginSource("path", rel)  # a plain string names a folder of the marketplace
    if not isinstance(value, dict):
        return None
    kind = value.get("source")
    if not isinstance(kind, str):  # the schema says what is wrong
        return None
    key = kinds.key(kind)
    if key is None:
        _unknown(kind, kinds, sink, path)
        return None
    location = value.get(key, "") if key else ""  # "": a kind with no object form
    if not isinstance(location, str) or not location:
        if key and kind not in kinds.asked(False):  # the schema names the built-ins' keys
            sink.error(
                "schema-required",
                f"missing required key {key!r}",
                path,
                f"a {kind!r} source names what to fetch in {key!r}",
            )
        return None
    # the schema allows each of these keys only in the source types that take it
    sha = value.get("sha") or value.get("sha256") or value.get("digest")

    def text(key: str) -> str | None:
        found = value.get(key)
        return found if isinstance(found, str) else None

    return PluginSource(
        kind,
        location,
        ref=text("ref"),
        sha=sha if isinstance(sha, str) else None,
        subdir=text("path"),
        version=text("version"),
        registry=text("registry"),
    )


def _unknown(kind: str, kinds: _Kinds, sink: Sink, path: KeyPath) -> None:
    """An entry of a source type no registered kind (built in or an extension's) takes."""
    own = [name for name, key in kinds.asked(False).items() if key]
    others = sorted(name for name, key in kinds.asked(True).items() if key and name not in own)
    known = ", ".join(repr(name) for name in [*own, *others])
    sink.error(
        "schema-enum",
        f"unknown source type {kind!r}: must be one of {known}",
        (*path, "source"),
        "an installed plugman extension can add source types (hook plugman_sources)",
    )


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

"""Deploying to Claude Code: its plugins load natively (`claude_plugin.plan`), the rest as today.

For a claude-code link, the scope's enabled plugins that Claude can load as plugins (any but a
Gemini CLI extension, nothing of theirs waiting for approval, a free name) get the native plan:
its links and generated files are artifacts (`artifacts.Ledger`), its settings entries an export
of their own (`claude-code-plugins`, so `export.plan` owns exactly those entries). Their servers
and hooks are then left out of Claude's MCP and settings files: no component twice. Every other
plugin's servers and hooks are written into those files, as an export does, and a note says why
it is not loaded natively.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, NamedTuple

from plugman.agents import claude_own, claude_plugin, claude_secrets, export, export_record, links
from plugman.agents.artifacts import Artifact, Ledger
from plugman.agents.claude_plugin import NativePlan, NativePlugin
from plugman.agents.links import Link
from plugman.agents.targets import Given, Location, Place, Rendered, Target
from plugman.config import user_config
from plugman.config.resolution import Resolution
from plugman.core import secrets
from plugman.core.folders import Folders
from plugman.core.jsonvalue import PluginFields
from plugman.core.paths import Paths
from plugman.core.session import Session
from plugman.core.state import SCOPES, InstalledPlugin, InstallRecord
from plugman.core.store import Store
from plugman.manifest import plugin
from plugman.manifest.edit import Part

NAME = export_record.CLAUDE_NATIVE  # the record's name for the native plan's settings entries


class Native(NamedTuple):
    ids: frozenset[str]  # plugman ids Claude loads itself (or a same-named one in their place)
    artifacts: list[Artifact]
    outcome: export.Outcome  # the settings entries written
    notes: list[str]


def deploy(
    work: Session,
    place: Place,
    link: Link,
    exports: export_record.Exports,
    folders: Folders,
    ledger: Ledger,
    resolution: Resolution | None,  # None: the link is being taken out
) -> Native:
    paths = work.paths
    notes: list[str] = []
    held: dict[str, list[str]] = {}  # plugman id -> its sensitive keys that have a value
    plugins = [] if resolution is None else _loadable(paths, link, resolution, notes, held)
    plugins, theirs = _claude_keeps(place, link, plugins, paths.project_dir, notes)
    dropped, off = _precedence(paths, link, plugins, notes)
    dropped |= theirs
    plugins = [p for p in plugins if p.id not in dropped]

    def plan(plugins: list[NativePlugin]) -> NativePlan:
        home, project = place.home, paths.project_dir
        return claude_plugin.plan(link.scope, home, project, place.env, plugins, off)

    planned = plan(plugins)
    made = [(i.path, i.target) for i in planned.links] + [(c.path, c.root) for c in planned.copies]
    taken = {root for path, root in made if ledger.taken(path)}
    if taken:
        notes += [
            f"{path} is not plugman's, so {path.name} is not loaded as a plugin there: "
            "its servers and hooks are written into Claude's files instead"
            for path, root in made
            if root in taken
        ]
        plugins = [p for p in plugins if p.root not in taken]
        planned = plan(plugins)
    notes += planned.problems
    # a project's plugins waiting for Claude's folder trust: said by `deploy` (`agents.gating`)
    by_root = {p.root: p.id for p in plugins}
    artifacts = [
        Artifact(item.path, {}, by_root.get(item.target, ""), "plugin", item.target)
        for item in planned.links
    ] + [Artifact(item.path, {"": item.content.encode()}, "", "plugin") for item in planned.files]
    artifacts += [
        Artifact(c.path, _copied(c), by_root.get(c.root, ""), "plugin") for c in planned.copies
    ]
    # The only project file the plan edits is Claude's local settings, which name this
    # machine's marketplace (`plugman-<scope>-<hash of the project path>`): never committed.
    ledger.local.update(str(e.path) for e in planned.edits if paths.project_dir in e.path.parents)
    target = _settings(planned)
    given = _given(planned)
    how = export.How(given=given)
    outcome = export.plan(paths, target, place, exports, resolution is None, how)
    export.write(work, outcome, folders)
    wanted = _secrets(work, place, link, planned, held)
    key = export_record.key(NAME, link.scope, paths)
    storage = claude_secrets.secure_storage(place.home, place.env)
    notes += claude_secrets.sync(work, folders, key, storage, wanted)
    return Native(frozenset(planned.ids) | dropped, artifacts, outcome, notes)


def _secrets(
    work: Session, place: Place, link: Link, planned: NativePlan, held: dict[str, list[str]]
) -> dict[str, dict[str, str]]:
    """Claude id -> the sensitive option values of each plugin Claude loads, from plugman's
    secret store (read only when a plugin has one)."""
    wanted: dict[str, dict[str, str]] = {}
    if not any(held.get(i) for i in planned.ids):
        return wanted
    store = secrets.open_store(work.paths, place.env)
    tag = InstallRecord.load(work.paths, link.scope).path.stem
    for plugin_id, claude_id in planned.ids.items():
        for key in held.get(plugin_id, []):
            value = store.get(user_config.store_key(plugin_id, key, tag))
            if value is not None:
                wanted.setdefault(claude_id, {})[key] = value
    return wanted


def _claude_keeps(
    place: Place, link: Link, plugins: list[NativePlugin], project: Path, notes: list[str]
) -> tuple[list[NativePlugin], set[str]]:
    """The plugins Claude has installed itself under the same name are left to its copy (plugman's
    would be refused, or load twice): the rest, and the plugman ids left out, each with a note
    naming Claude's install and how to have plugman's copy instead."""
    if not plugins:
        return plugins, set()
    found = claude_own.installs(claude_plugin.config_dir(place.home, place.env), project)
    kept: set[str] = set()
    for item in plugins:
        own = claude_own.taking(found, item.name, link.scope)
        if own is not None:
            kept.add(item.id)
            notes.append(
                f"Claude Code keeps its own install of {own.id} ({own.scope} scope), so "
                f"plugman does not give it {item.id} as well (one copy per name); to have "
                f"plugman's copy instead: plugman import claude --apply, or {own.uninstall()}"
            )
    return [p for p in plugins if p.id not in kept], kept


def _precedence(
    paths: Paths, link: Link, plugins: list[NativePlugin], notes: list[str]
) -> tuple[set[str], list[str]]:
    """Claude loads two plugins of one name side by side when both come from marketplaces, and
    a skills-folder one gives way to a marketplace one ("Not loaded — the name ... is already
    taken"). So that Claude gets the one plugman's scopes put first (local, project, user): a
    project plugin whose name a local one has is left out (its plugman id, first), and a
    project or local one turns a same-named user one from `plugman-user` off in the project
    (its Claude id, second), a skills-folder one giving way by itself. A note says which one
    Claude gets."""
    dropped: set[str] = set()
    off: list[str] = []
    if link.scope == "user" or not plugins:
        return dropped, off
    claude = {item.scope for item in links.every(paths) if item.agent == link.agent}
    store, home = Store(paths.store_dir), paths.project_dir
    for other in ("local", "user"):
        if other == link.scope or other not in claude:
            continue
        record = InstallRecord.load(paths, other)
        for plugin_id, entry in record.plugins.items():
            theirs = _native(store, plugin_id, entry, record)
            if theirs is None or not entry.enabled:
                continue
            mine = next((p for p in plugins if p.name == theirs.name and p.id not in dropped), None)
            if mine is None:
                continue
            if other == "local":
                dropped.add(mine.id)
                notes.append(
                    f"Claude Code loads {plugin_id} (local) here, not {mine.id} (project): "
                    f"both are named {theirs.name!r} in Claude, and local comes first"
                )
                continue
            if theirs.entry is not None or theirs.listed:  # in plugman-user: beside this one
                off.append(f"{theirs.name}@{claude_plugin.marketplace_name('user', home)}")
            notes.append(
                f"Claude Code loads {mine.id} ({link.scope}) in this project, not {plugin_id} "
                f"(user): both are named {mine.name!r} in Claude, and {link.scope} comes first"
            )
    return dropped, off


def _loadable(
    paths: Paths, link: Link, resolution: Resolution, notes: list[str], held: dict[str, list[str]]
) -> list[NativePlugin]:
    """The scope's enabled plugins Claude can load itself; a note for each it cannot."""
    record = InstallRecord.load(paths, link.scope)
    store = Store(paths.store_dir)
    waiting = {d.origin.plugin for d in resolution.pending() if d.origin.plugin}
    found: list[NativePlugin] = []
    for row in resolution.plugins:
        entry = record.plugins.get(row.id)
        if not row.enabled or entry is None or row.scope != link.scope:
            continue
        if row.id in waiting:
            notes.append(f"{row.id} waits for approval (plugman trust approve {row.id})")
            continue
        if row.blocked:  # managed policy: not loaded, whatever id Claude would give it
            notes.append(f"{row.id} is not loaded: {row.blocked}")
            continue
        native = _native(store, row.id, entry, record)
        if native is None:
            notes.append(
                f"{row.id} is a Gemini CLI extension, which Claude Code cannot load as a "
                "plugin: its servers and hooks are written into Claude's files instead"
            )
            continue
        if plugin.manifest_file(native.root)[0] == "claude":
            refusal = plugin.claude_refusal(native.root, entry.entry)
            if refusal:
                notes.append(f"{row.id} is not loaded as a Claude Code plugin: {refusal}")
                continue
        held[row.id] = list(record.secrets.get(row.id, []))
        found.append(native)
    return found


def _native(
    store: Store, plugin_id: str, entry: InstalledPlugin, record: InstallRecord
) -> NativePlugin | None:
    """What Claude loads of one installed plugin (None: a Gemini CLI extension)."""
    root = store.path(entry.content_hash)
    kind, file = plugin.manifest_file(root)
    if kind == "gemini":
        return None
    # What defines it for Claude: its own plugin.json, else the entry that defined it at
    # install (strict: false), else a root plugin.json Claude does not read, else nothing
    # (its default folders), the last three carried by a marketplace entry.
    fields: PluginFields | None = entry.entry
    if fields is None and kind != "claude":
        fields = _json(file) if file is not None else {}
    manifest = fields if fields is not None else _json(root / ".claude-plugin" / "plugin.json")
    name, version = manifest.get("name"), manifest.get("version")
    schema = manifest.get("userConfig")
    return NativePlugin(
        plugin_id,
        name if isinstance(name, str) else plugin_id.split("@")[0],
        root,
        version if isinstance(version, str) else None,
        fields,
        _options(
            record.config.get(plugin_id, {}),
            schema if isinstance(schema, dict) else {},
        ),
        _not_object(root / "hooks" / "hooks.json"),
    )


def _options(stored: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """The non-sensitive values plugman holds, typed as Claude keeps them (a number as a
    number, a boolean as a boolean, a list as a list)."""
    found: dict[str, Any] = {}
    for key, value in stored.items():
        option = schema.get(key)
        kind = option.get("type") if isinstance(option, dict) else None
        if isinstance(option, dict) and option.get("sensitive") is True:
            continue
        if kind == "number" and isinstance(value, str):
            number = float(value)
            found[key] = int(number) if number.is_integer() else number
        elif kind == "boolean" and isinstance(value, str):
            found[key] = value == "true"
        else:
            found[key] = value
    return found


def _copied(copy: claude_plugin.Copy) -> dict[str, bytes]:
    """The files of a store tree, but for `skills/<x>` folders `copy.skills` does not name."""
    found: dict[str, bytes] = {}
    for folder, dirs, names in os.walk(copy.root):
        here = Path(folder).relative_to(copy.root)
        if here == Path("skills"):
            dirs[:] = [d for d in dirs if d in copy.skills]
        for name in names:
            if (Path(folder) / name).is_file():
                found[(here / name).as_posix()] = (Path(folder) / name).read_bytes()
    return found


def _settings(planned: NativePlan) -> Target:
    """The native plan's settings files as a target of their own, so that an export owns
    exactly its entries there."""
    located = {f"settings-{i}": Location(edit.path) for i, edit in enumerate(planned.edits)}

    def files(place: Place) -> dict[str, Location]:
        return located

    def render(source: Given) -> Rendered:
        return Rendered(_given(planned)[0], [])

    return Target(NAME, "json", render, files, SCOPES)


def _given(planned: NativePlan) -> tuple[dict[str, list[Part]], dict[str, str]]:
    """The settings parts, owned by no plugin: each deployment writes them afresh."""
    return {f"settings-{i}": edit.parts for i, edit in enumerate(planned.edits)}, {}


def _json(path: Path) -> dict[str, object]:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _not_object(path: Path) -> bool:
    """Whether `path` is a file that does not hold a JSON object."""
    try:
        return path.is_file() and not isinstance(json.loads(path.read_bytes()), dict)
    except (OSError, ValueError):
        return True

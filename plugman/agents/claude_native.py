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
from pathlib import Path
from typing import Any, NamedTuple

from plugman.agents import claude_plugin, export
from plugman.agents.artifacts import Artifact, Ledger
from plugman.agents.claude_plugin import NativePlan, NativePlugin
from plugman.agents.links import Link
from plugman.agents.targets import Location, Place, Rendered, Source, Target
from plugman.config import export_record
from plugman.config.resolution import Resolution
from plugman.core.folders import Folders
from plugman.core.paths import Paths
from plugman.core.session import Session
from plugman.core.state import SCOPES, Record
from plugman.core.store import Store
from plugman.manifest import plugin
from plugman.manifest.edit import Part

NAME = "claude-code-plugins"  # the export record's name for the native plan's settings entries


class Native(NamedTuple):
    ids: frozenset[str]  # plugman ids Claude loads itself
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
    plugins = [] if resolution is None else _loadable(paths, link, resolution, notes)
    planned = claude_plugin.plan(link.scope, place.home, paths.project_dir, place.env, plugins)
    taken = {item.target for item in planned.links if ledger.taken(item.path)}
    if taken:
        notes += [
            f"{item.path} is not plugman's, so {item.path.name} is not loaded as a plugin there: "
            "its servers and hooks are written into Claude's files instead"
            for item in planned.links
            if item.target in taken
        ]
        plugins = [p for p in plugins if p.root not in taken]
        planned = claude_plugin.plan(link.scope, place.home, paths.project_dir, place.env, plugins)
    notes += planned.problems
    if resolution is not None and link.scope != "user" and planned.ids:
        state = _json(claude_plugin.state_file(place.home, place.env))
        if claude_plugin.trust_missing(state, paths.project_dir):
            notes.append(
                "Claude Code loads this project's plugins once you trust the folder "
                "(accept its trust dialog); plugman never does that for you"
            )
    by_root = {p.root: p.id for p in plugins}
    artifacts = [
        Artifact(item.path, {}, by_root.get(item.target, ""), "plugin", item.target)
        for item in planned.links
    ] + [Artifact(item.path, {"": item.content.encode()}, "", "plugin") for item in planned.files]
    target = _settings(planned)
    given = _given(planned)
    how = export.How(given=given)
    outcome = export.plan(paths, target, place, exports, resolution is None, how)
    export.write(work, outcome, folders)
    return Native(frozenset(planned.ids), artifacts, outcome, notes)


def _loadable(
    paths: Paths, link: Link, resolution: Resolution, notes: list[str]
) -> list[NativePlugin]:
    """The scope's enabled plugins Claude can load itself; a note for each it cannot."""
    record = Record.load(paths, link.scope)
    store = Store(paths.store_dir)
    waiting = {d.origin.plugin for d in resolution.pending() if d.origin.plugin}
    found: list[NativePlugin] = []
    for row in resolution.plugins:
        entry = record.plugins.get(row.id)
        if not row.enabled or entry is None or row.scope != link.scope:
            continue
        root = store.path(entry["content_hash"])
        kind, file = plugin.manifest_file(root)
        if row.id in waiting:
            notes.append(f"{row.id} waits for approval (plugman trust approve {row.id})")
            continue
        if kind == "gemini":
            notes.append(
                f"{row.id} is a Gemini CLI extension, which Claude Code cannot load as a "
                "plugin: its servers and hooks are written into Claude's files instead"
            )
            continue
        refusal = plugin.claude_refusal(root, entry.get("entry")) if kind == "claude" else None
        if refusal:
            notes.append(f"{row.id} is not loaded as a Claude Code plugin: {refusal}")
            continue
        # What defines it for Claude: its own plugin.json, else the entry that defined it at
        # install (strict: false), else a root plugin.json Claude does not read, else nothing
        # (its default folders), the last three carried by a marketplace entry.
        fields: dict[str, Any] | None = entry.get("entry")
        if fields is None and kind != "claude":
            fields = _json(file) if file is not None else {}
        manifest = fields if fields is not None else _json(root / ".claude-plugin" / "plugin.json")
        name, version = manifest.get("name"), manifest.get("version")
        found.append(
            NativePlugin(
                row.id,
                name if isinstance(name, str) else row.id.split("@")[0],
                root,
                version if isinstance(version, str) else None,
                fields,
            )
        )
    return found


def _settings(planned: NativePlan) -> Target:
    """The native plan's settings files as a target of their own, so that an export owns
    exactly its entries there."""
    located = {f"settings-{i}": Location(edit.path) for i, edit in enumerate(planned.edits)}

    def files(place: Place) -> dict[str, Location]:
        return located

    def render(source: Source) -> Rendered:
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

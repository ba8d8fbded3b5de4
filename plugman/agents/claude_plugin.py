"""Claude Code loading plugman's installed plugins natively, as plugins (issue 13).

Pure planning: `plan` says which links, generated files and settings entries make Claude Code
2.1.328 load one scope's plugins from plugman's store, every session, without `claude plugin
install`. The deployment engine writes them through the journal and takes them out again. The
evidence behind each choice is in docs/claude-native.md:

- user: a link `<claude config>/skills/<name>` -> the plugin's store tree. Claude loads it as
  `<name>@skills-dir` (name from plugin.json), lists it in `claude plugin list`, and needs no
  settings entry. A plugin its marketplace entry defines (`strict: false`, or no
  `.claude-plugin/plugin.json`) does not load from a skills folder: it goes into the marketplace
  `plugman-user`, declared and enabled in the user's `settings.json`, with that entry.
- project and local: a user-declared directory marketplace plugman generates
  (`<data>/claude/plugman-<scope>-<hash>/`: `.claude-plugin/marketplace.json` and one link
  `plugins/<name>` -> the store tree per plugin), declared in the user's `settings.json`
  (`extraKnownMarketplaces`; Claude ignores one declared in a project's settings) and enabled in
  `<project>/.claude/settings.local.json` (`enabledPlugins`). A project `.claude/skills/<name>`
  plugin would lose its MCP servers, and a committed file would name this machine's store.

Claude reads both live through the link (nothing is copied to its cache, nothing is written into
the store); `${CLAUDE_PLUGIN_ROOT}` is the link's path, `${CLAUDE_PLUGIN_DATA}` is Claude's own
`<claude config>/plugins/data/<name>-<marketplace>` (see `claude_data`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from plugman.core.jsonvalue import PluginFields
from plugman.core.paths import Paths
from plugman.core.state import Scope
from plugman.manifest import components
from plugman.manifest.edit import Part

SKILLS_DIR = "skills-dir"  # the marketplace name Claude gives a plugin found in a skills folder


class NativePlugin(NamedTuple):
    id: str  # plugman's id for the installed plugin
    name: str  # the name in its .claude-plugin/plugin.json: Claude names it by this
    root: Path  # its tree in plugman's store
    version: str | None = None
    # None: its own .claude-plugin/plugin.json defines it. Otherwise the marketplace entry
    # that does (`strict: false`, or a plugin with no Claude manifest): only a marketplace
    # can carry it, never a skills-folder link.
    entry: Mapping[str, Any] | None = None
    # Its non-sensitive option values as Claude keeps them (`pluginConfigs[<id>].options` in
    # the user's settings.json; a sensitive one goes to Claude's secure storage instead,
    # `claude_secrets`). Claude reads them from user settings only, whatever the scope.
    options: Mapping[str, Any] | None = None
    # Through the marketplace despite its plugin.json: its hooks/hooks.json is no object, an
    # error for Claude's skills-folder loader, passed over by its marketplace one.
    listed: bool = False


class Link(NamedTuple):
    path: Path  # a symbolic link plugman creates ...
    target: Path  # ... pointing here


class File(NamedTuple):
    path: Path  # a file plugman generates whole (and removes whole)
    content: str


class Copy(NamedTuple):
    """A folder plugman writes as a copy of a store tree, leaving out the folders `skills/<x>`
    for every `<x>` not in `skills` (see `_replaces_skills`)."""

    path: Path
    root: Path
    skills: tuple[str, ...]


class Edit(NamedTuple):
    path: Path  # a Claude settings file (JSON) ...
    parts: list[Part]  # ... and the entries plugman owns in it (`manifest.edit`)


class NativePlan(NamedTuple):
    """One scope's wanted state: the engine creates what is missing and removes the rest."""

    scope: Scope
    links: list[Link]
    files: list[File]
    edits: list[Edit]
    ids: dict[str, str]  # plugman id -> Claude's plugin id (`name@marketplace`)
    data: dict[str, Path]  # plugman id -> the ${CLAUDE_PLUGIN_DATA} Claude gives it
    claude_writes: list[Path]  # what Claude itself creates on its next session and keeps
    problems: list[str]  # plugins left out, and why
    copies: tuple[Copy, ...] = ()  # plugins Claude must not see whole (`_replaces_skills`)


def config_dir(home: Path, env: Mapping[str, str]) -> Path:
    """Claude's user folder: `CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    given = env.get("CLAUDE_CONFIG_DIR")
    return Path(given) if given else home / ".claude"


def state_file(home: Path, env: Mapping[str, str]) -> Path:
    """Claude's own state (`~/.claude.json`), where it keeps folder trust."""
    given = env.get("CLAUDE_CONFIG_DIR")
    return Path(given) / ".claude.json" if given else home / ".claude.json"


def marketplace_name(scope: Scope, project: Path) -> str:
    """One marketplace per project and scope, so two projects may hold different trees of a
    plugin by the same name; one for the user scope."""
    if scope == "user":
        return "plugman-user"
    digest = hashlib.sha256(str(project.absolute()).encode()).hexdigest()[:10]
    return f"plugman-{scope}-{digest}"


def marketplace_dir(scope: Scope, project: Path, env: Mapping[str, str]) -> Path:
    paths = Paths.from_env(env, project)
    return paths.data_dir / "claude" / marketplace_name(scope, project)


def claude_data(home: Path, env: Mapping[str, str], claude_id: str) -> Path:
    """The `${CLAUDE_PLUGIN_DATA}` Claude sets for `claude_id` (it creates the folder when a hook
    or server uses it): `demo@skills-dir` -> `<config>/plugins/data/demo-skills-dir`."""
    safe = "".join(c if c.isalnum() or c in "_-" else "-" for c in claude_id)
    return config_dir(home, env) / "plugins" / "data" / safe


def trust_missing(state: Mapping[str, Any], project: Path) -> bool:
    """Whether Claude's state (`state_file`, parsed) lacks the project's folder trust. plugman
    only reports this: accepting Claude's trust dialog is the user's decision."""
    projects = state.get("projects")
    entry = projects.get(str(project.absolute())) if isinstance(projects, dict) else None
    return not (isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True)


def plan(
    scope: Scope,
    home: Path,
    project: Path,
    env: Mapping[str, str],
    plugins: list[NativePlugin],
    off: Iterable[str] = (),
) -> NativePlan:
    """What makes Claude load `plugins` (every plugin of `scope`) natively; empty for none.
    `off`: Claude ids a project or local scope turns off in the project (a user scope plugin
    of a name this scope takes)."""
    chosen, problems = _chosen(plugins)
    if scope != "user":
        listed = _marketplace(scope, home, project, env, chosen, problems, off)
        return _with_options(listed, home, env, chosen)
    folder = [p for p in chosen if p.entry is None and not p.listed]
    linked = _skills_dir(home, env, folder, problems)
    listed = _marketplace(scope, home, project, env, [p for p in chosen if p not in folder])
    planned = NativePlan(
        "user",
        linked.links + listed.links,
        listed.files,
        listed.edits,
        {**linked.ids, **listed.ids},
        {**linked.data, **listed.data},
        linked.claude_writes + listed.claude_writes,
        problems,
        listed.copies,
    )
    return _with_options(planned, home, env, chosen)


def _with_options(
    planned: NativePlan, home: Path, env: Mapping[str, str], plugins: list[NativePlugin]
) -> NativePlan:
    """`planned` with the plugins' option values in the user's settings.json, where Claude
    reads `pluginConfigs` (it ignores project and local settings for them)."""
    given = {planned.ids[p.id]: {"options": dict(p.options)} for p in plugins if p.options}
    if not given:
        return planned
    part = Part(("pluginConfigs",), given)
    user = config_dir(home, env) / "settings.json"
    edits = [e._replace(parts=[*e.parts, part]) if e.path == user else e for e in planned.edits]
    if all(e.path != user for e in edits):
        edits.insert(0, Edit(user, [part]))
    return planned._replace(edits=edits)


def _chosen(plugins: list[NativePlugin]) -> tuple[list[NativePlugin], list[str]]:
    chosen: dict[str, NativePlugin] = {}
    problems: list[str] = []
    for plugin in plugins:
        name = plugin.name
        if not name or name in (".", "..") or any(c in name for c in "/\\@: "):
            problems.append(f"{plugin.id}: Claude Code cannot load a plugin named {name!r}")
        elif name in chosen:
            problems.append(f"{plugin.id}: {chosen[name].id} already gives Claude a plugin {name}")
        else:
            chosen[name] = plugin
    return list(chosen.values()), problems


def _skills_dir(
    home: Path, env: Mapping[str, str], plugins: list[NativePlugin], problems: list[str]
) -> NativePlan:
    skills = config_dir(home, env) / "skills"
    links = [Link(skills / p.name, p.root) for p in plugins]
    ids = {p.id: f"{p.name}@{SKILLS_DIR}" for p in plugins}
    data = {p.id: claude_data(home, env, ids[p.id]) for p in plugins}
    return NativePlan("user", links, [], [], ids, data, list(data.values()), problems)


def _marketplace(
    scope: Scope,
    home: Path,
    project: Path,
    env: Mapping[str, str],
    plugins: list[NativePlugin],
    problems: list[str] | None = None,
    off: Iterable[str] = (),
) -> NativePlan:
    problems = problems or []
    if not plugins:
        return NativePlan(scope, [], [], [], {}, {}, [], problems)
    name = marketplace_name(scope, project)
    folder = marketplace_dir(scope, project, env)
    copied = {p.id: _replaces_skills(p.entry) for p in plugins}
    links = [Link(folder / "plugins" / p.name, p.root) for p in plugins if copied[p.id] is None]
    copies = tuple(
        Copy(folder / "plugins" / p.name, p.root, keep)
        for p in plugins
        if (keep := copied[p.id]) is not None
    )
    catalog = {
        "name": name,
        "owner": {"name": "plugman"},
        "description": f"plugman's {scope}-scope plugins"
        + ("" if scope == "user" else f" of {project.absolute()}")
        + " (generated)",
        "plugins": [_entry(p) for p in plugins],
    }
    text = json.dumps(catalog, indent=2) + "\n"
    files = [File(folder / ".claude-plugin" / "marketplace.json", text)]
    config = config_dir(home, env)
    declared = {name: {"source": {"source": "directory", "path": str(folder)}}}
    ids = {p.id: f"{p.name}@{name}" for p in plugins}
    known = Part(("extraKnownMarketplaces",), declared)
    turned = {claude_id: False for claude_id in off if claude_id}
    enabled = Part(("enabledPlugins",), {**turned, **{ids[p.id]: True for p in plugins}})
    if scope == "user":
        edits = [Edit(config / "settings.json", [known, enabled])]
    else:
        local = project.absolute() / ".claude" / "settings.local.json"
        edits = [Edit(config / "settings.json", [known]), Edit(local, [enabled])]
    data = {p.id: claude_data(home, env, ids[p.id]) for p in plugins}
    plugins_dir = config / "plugins"
    writes = [
        plugins_dir / "known_marketplaces.json",
        plugins_dir / "installed_plugins.json",
        plugins_dir / "marketplaces",
        *data.values(),
    ]
    return NativePlan(scope, links, files, edits, ids, data, writes, problems, copies)


def _entry(plugin: NativePlugin) -> PluginFields:
    """Its catalog entry: the fields of the entry that defines it (paths in it are relative to
    the plugin's root, as in its own marketplace), under its name and the link's path."""
    # Claude takes only a "./" path here (an absolute one is invalid), hence the link.
    entry: PluginFields = {**(plugin.entry or {})}
    entry.update(name=plugin.name, source=f"./plugins/{plugin.name}")
    if plugin.entry is not None:
        entry["strict"] = False  # the entry, not a plugin.json, defines it
    if plugin.version:
        entry["version"] = plugin.version
    keep = _replaces_skills(plugin.entry)
    if keep is not None:  # those load from the copy's skills/ folder, the rest from here
        listed = entry["skills"] if isinstance(entry["skills"], list) else [entry["skills"]]
        rest = [p for p in listed if components.relative(p) not in [f"skills/{k}" for k in keep]]
        entry.pop("skills")
        entry.update({"skills": rest} if rest else {})
    return entry


def _replaces_skills(entry: Mapping[str, Any] | None) -> tuple[str, ...] | None:
    """Claude 2.1.328 loads only the listed `skills` of an entry whose `source` is its
    marketplace's root (not the default `skills/` folder, unless listed); with plugman's
    `./plugins/<name>` they would add to it. So Claude gets a copy whose `skills/` holds only
    the listed `skills/<x>` (it refuses links out of a plugin): the `<x>`; None: no such entry."""
    paths = None if entry is None else components.only_listed_skills(dict(entry))
    if paths is None:
        return None
    return tuple(p.split("/")[1] for p in paths if p.count("/") == 1 and p.startswith("skills/"))

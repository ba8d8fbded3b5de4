"""Install, uninstall, enable and disable plugins in a scope: each one transaction.

Every mutating command holds the plugman lock, first recovers what a killed run left, then
journals its changes (store trees, the scope's record, the declaration file and, for the
project, plugman.lock) and commits them together, or rolls them all back.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from plugman.config import declarations, user_config
from plugman.core import progress
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.fs import remove_tree
from plugman.core.paths import Paths
from plugman.core.session import Session, session
from plugman.core.state import SCOPES, Record, Scope, installed_ids, timestamp
from plugman.manifest.model import Plugin
from plugman.plugins import configure, lockfile, marketplaces, registry
from plugman.plugins import planner as resolver


class Change(NamedTuple):
    action: str  # installed | uninstalled | enabled | disabled | unchanged | would install
    id: str
    version: str
    scope: Scope
    content_hash: str


def install(
    paths: Paths,
    specs: list[str],
    scope: Scope,
    *,
    dry_run: bool = False,
    config: list[str] | None = None,
    ask: configure.Ask | None = None,
) -> list[Change]:
    """`config`: KEY=VALUE userConfig values for the plugins named; `ask` is asked for required
    ones still missing (a terminal's prompt; none: they stay unset, their entries dropped)."""
    parsed = [resolver.parse_spec(text, paths.project_dir) for text in specs]
    with session(paths) as work:
        record = Record.load(paths, scope)
        planned = resolver.plan(paths, work.store, parsed, record.plugins)
        writes = _options(record, [p for p in planned if not p.required_by], config or [], ask)
        if dry_run:
            return [Change("would install", p.id, p.version, scope, "") for p in planned]
        with configure.writing(paths, os.environ, writes):
            changes = [_add(work, record, p, explicit=not p.required_by) for p in planned]
            declare(work, record, {p.id: p.specifier or "*" for p in planned if not p.required_by})
            if record.scope == "project":
                for name in dict.fromkeys(p.marketplace for p in planned):
                    if name != resolver.DIRECT:
                        _declare_marketplace(work, record, name)
            save(work, record)
            _deploy(work)
    return changes


def _options(
    record: Record, named: list[resolver.Planned], pairs: list[str], ask: configure.Ask | None
) -> list[configure.Writes]:
    """Each named plugin's userConfig values checked and put into `record`; the secret store's
    writes. A KEY goes to every named plugin that has that option; one none has is an error."""
    given = user_config.parse_pairs(pairs, ", ".join(p.id for p in named) or "install")
    keys = {p.id: {o.key for o in p.plugin.user_config} for p in named}
    stray = sorted(k for k in given if not any(k in mine for mine in keys.values()))
    if stray and len(named) == 1:  # the plugin's own check names it, and what it has
        keys[named[0].id] |= set(stray)
    elif stray:
        known = "; ".join(f"{i}: {', '.join(sorted(k)) or 'none'}" for i, k in keys.items())
        message = f"no plugin installed here has the option(s) {', '.join(stray)}"
        raise UsageError(message, hint=f"options: {known or 'none'}")
    return [
        configure.apply(
            record,
            p.id,
            p.plugin.user_config,
            {k: v for k, v in given.items() if k in keys[p.id]},
            ask=ask,
        )
        for p in named
        if p.plugin.user_config or keys[p.id]
    ]


def _add(work: Session, record: Record, planned: resolver.Planned, explicit: bool) -> Change:
    content_hash = work.tx.add_tree(planned.tree)
    previous = record.plugins.get(planned.id, {})
    record.plugins[planned.id] = {
        "name": planned.name,
        "marketplace": planned.marketplace,
        "version": planned.version,
        "source": planned.source,
        "content_hash": content_hash,
        "installed_at": timestamp(),
        "enabled": previous.get("enabled", True),
        "explicit": explicit or previous.get("explicit", False),
        "required_by": sorted(set(previous.get("required_by", [])) | set(planned.required_by[-1:])),
        "entry": planned.entry,
        "components": components(planned.plugin),
        # installed here by hand: its servers and hooks run (plugman.config.scopes)
        "consented": True,
    }
    return Change("installed", planned.id, planned.version, record.scope, content_hash)


def components(plugin: Plugin) -> dict[str, list[str]]:
    """What a plugin brings, by kind, as `list` shows it."""
    return {
        "skills": sorted(skill.name for skill in plugin.skills),
        "commands": sorted(path.stem for path in plugin.commands),
        "agents": sorted(path.stem for path in plugin.agents),
        "hooks": sorted({hook.event for hook in plugin.hooks}),
        "mcpServers": sorted(server.name for server in plugin.mcp_servers),
    }


def declare(work: Session, record: Record, wanted: dict[str, str]) -> None:
    """Add `plugin_id = specifier` for each of `wanted` to the scope's plugman.toml, in one
    edit, unless it is declared already (then what is there stays, and is what uninstall
    expects to find)."""
    current = declarations.declared(work.paths, record.scope, "plugins") if wanted else {}
    for plugin_id, specifier in wanted.items():
        record.plugins[plugin_id]["declared"] = current.get(plugin_id, specifier)
    new = {plugin_id: spec for plugin_id, spec in wanted.items() if plugin_id not in current}
    if new:
        declarations.set_entries(work.tx, work.paths, record, "plugins", new)


def _declare_marketplace(work: Session, record: Record, name: str) -> None:
    """Name the marketplace in the project's plugman.toml, so `plugman sync` finds it anywhere."""
    known = registry.known(work.paths).get(name)
    if known is not None and marketplaces.declare(work, record, name, known.source):
        record.data.setdefault("declared_marketplaces", []).append(name)


def _undeclare_marketplaces(work: Session, record: Record) -> None:
    """Drop the marketplaces plugman declared that no project plugin comes from any more."""
    declared: list[str] = record.data.get("declared_marketplaces", [])
    used = {entry["marketplace"] for entry in record.plugins.values()}
    for name in [n for n in declared if n not in used]:
        marketplaces.undeclare(work, record, name)
        declared.remove(name)
    if not declared:
        record.data.pop("declared_marketplaces", None)


def save(work: Session, record: Record) -> None:
    """Write the record and, for the project, the lock file that mirrors it."""
    if record.scope == "project":
        declarations.check_project_file(work.paths, work.paths.project_lock)
        pins = [{"id": key, **value} for key, value in record.plugins.items()]
        work.tx.write(work.paths.project_lock, lockfile.render(pins))
    work.tx.write(record.path, record.to_bytes())


def find_installed(record: Record, name: str) -> str:
    if name in record.plugins:
        return name
    hits = [key for key, value in record.plugins.items() if value["name"] == name]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise UsageError(f"{name!r} matches {', '.join(hits)}", hint="say which: NAME@MARKETPLACE")
    raise PlugmanError(
        f"plugin {name!r} is not installed in the {record.scope} scope",
        hint="run: plugman list (to see every scope), or pass --scope",
    )


def uninstall(
    paths: Paths, names: list[str], scope: Scope, *, keep_data: bool = False, force: bool = False
) -> list[Change]:
    with session(paths) as work:
        record = Record.load(paths, scope)
        ids = [find_installed(record, name) for name in names]
        removed = ids + _orphans(record, ids)
        changes = [_remove(work, record, plugin_id, ids, force) for plugin_id in removed]
        secret_keys = [key for plugin_id in removed for key in configure.forget(record, plugin_id)]
        _undeclare_marketplaces(work, record)
        save(work, record)
        _forget(work, {p for p in removed if not _installed_anywhere(paths, p)})
        _deploy(work)
        unused = sorted(set(removed) - installed_ids(paths))  # no scope of any project has them
    configure.delete(paths, secret_keys)  # after the commit, as the data folder
    if not keep_data:  # after the commit: data is not journaled, so it goes only if all else did
        for plugin_id in unused:
            _drop_data(paths, plugin_id)
    return changes


def _installed_anywhere(paths: Paths, plugin_id: str) -> bool:
    return any(plugin_id in Record.load(paths, scope).plugins for scope in SCOPES)


def _orphans(record: Record, removing: list[str]) -> list[str]:
    """Dependencies nobody else needs once `removing` are gone (installed only as deps)."""
    gone = set(removing)
    changed = True
    while changed:
        changed = False
        for key, value in record.plugins.items():
            needed_by = set(value.get("required_by", [])) - gone
            if key not in gone and not value.get("explicit") and not needed_by:
                gone.add(key)
                changed = True
    return sorted(gone - set(removing))


def _remove(
    work: Session, record: Record, plugin_id: str, removing: list[str], force: bool
) -> Change:
    entry = record.plugins[plugin_id]
    blocked = [k for k in entry.get("required_by", []) if k not in removing]
    if blocked and not force:
        raise PlugmanError(
            f"{plugin_id} is needed by {', '.join(blocked)}",
            hint="uninstall those first, or pass --force",
        )
    if "declared" in entry:
        _undeclare(work, record, plugin_id, entry["declared"], force)
    del record.plugins[plugin_id]
    for other in record.plugins.values():
        if plugin_id in other.get("required_by", []):
            other["required_by"].remove(plugin_id)
    return Change("uninstalled", plugin_id, entry["version"], record.scope, entry["content_hash"])


def _undeclare(work: Session, record: Record, plugin_id: str, declared: str, force: bool) -> None:
    current = declarations.declared(work.paths, record.scope, "plugins").get(plugin_id)
    if current is not None and current != declared and not force:
        target = declarations.path_for(work.paths, record.scope)
        raise PlugmanError(
            f"{target} declares {plugin_id} as {current!r}, not as plugman wrote it ({declared!r})",
            hint="someone changed it; remove the entry yourself, or pass --force",
        )
    declarations.drop_entry(work.tx, work.paths, record, "plugins", plugin_id)


def _drop_data(paths: Paths, plugin_id: str) -> None:
    """Remove the data folder (${CLAUDE_PLUGIN_DATA}) of a plugin no scope has any more. The
    uninstall is committed by then, so a folder that cannot go is a warning."""
    folder = paths.plugin_data(plugin_id)
    try:
        remove_tree(folder)
    except OSError as exc:
        progress.warn(f"could not remove {plugin_id}'s data folder {folder}: {exc.strerror}")


def set_enabled(paths: Paths, name: str, scope: Scope, enabled: bool) -> Change:
    with session(paths) as work:
        record = Record.load(paths, scope)
        plugin_id = find_installed(record, name)
        entry = record.plugins[plugin_id]
        entry["enabled"] = enabled
        save(work, record)
        _deploy(work)
    action = "enabled" if enabled else "disabled"
    return Change(action, plugin_id, entry["version"], scope, entry["content_hash"])


def _deploy(work: Session) -> None:
    """Rewrite every linked agent's files as resolved now. With no agent linked there is
    nothing to do, and the agents layer (~40 ms to import) is not loaded."""
    from plugman.agents import links

    if links.every(work.paths):
        from plugman.agents import deploy

        deploy.refresh(work, os.environ)


def _forget(work: Session, plugin_ids: set[str]) -> None:
    """Take what `plugin_ids` put into files `export` wrote (none exported: nothing to do)."""
    from plugman.config import export_record

    if plugin_ids and export_record.path(work.paths).exists():
        from plugman.agents import export

        export.forget(work, plugin_ids)

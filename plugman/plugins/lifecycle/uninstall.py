"""Uninstalling: remove exactly what a plugin's install wrote (and the dependencies nobody else
needs), in the session of the command that uninstalls (plugman.commands.uninstall); its data
folder and secrets go after the commit."""

from __future__ import annotations

import os
from typing import NamedTuple

from plugman.agents import links
from plugman.config import declarations, policy
from plugman.core import progress
from plugman.core.errors import PlugmanError
from plugman.core.fs import present, remove_tree
from plugman.core.paths import Paths
from plugman.core.session import Session
from plugman.core.state import SCOPES, InstallRecord, Scope, installed_ids
from plugman.plugins.lifecycle import configure
from plugman.plugins.lifecycle.installed import PluginChange, find_installed, forget_exports, save
from plugman.runtime.launch import notices


class Removed(NamedTuple):
    """What `remove` took out: the changes, and what goes only after the commit."""

    changes: list[PluginChange]
    secret_keys: list[str]  # the removed plugins' option values in the secret store
    unused: list[str]  # the removed plugins no scope of any project has: their data folders


def remove(work: Session, record: InstallRecord, names: list[str], force: bool) -> Removed:
    """Take the named plugins (and the dependencies nobody else needs) out of `record`'s scope,
    in the caller's session: the record, the declaration, the marketplaces declared for them,
    plugman.lock and what `export` wrote for them. The agents are not deployed to."""
    paths, scope = work.paths, record.scope
    ids = [find_installed(record, name) for name in names]
    _refuse_forced(paths, ids)
    removed = ids + _orphans(record, ids)
    _hand_edits(paths, set(removed), scope, f"uninstalling {', '.join(ids)}", force)
    changes = [_remove(work, record, plugin_id, ids, force) for plugin_id in removed]
    secret_keys = [key for plugin_id in removed for key in configure.forget(record, plugin_id)]
    _undeclare_marketplaces(work, record)
    save(work, record)
    forget_exports(work, {p for p in removed if not _installed_anywhere(paths, p)})
    unused = sorted(set(removed) - installed_ids(paths))  # no scope of any project has them
    return Removed(changes, secret_keys, unused)


def after_commit(paths: Paths, removed: Removed, keep_data: bool) -> None:
    """What goes once the uninstall is committed: the secrets, the update notices and (unless
    `keep_data`) the data folders: none of them is journaled, so each goes only if all else
    did."""
    configure.delete(paths, removed.secret_keys)
    notices.prune(paths)  # no update notice for what is gone (plugman.runtime.launch.notices)
    if not keep_data:
        for plugin_id in removed.unused:
            _drop_data(paths, plugin_id)


def _refuse_forced(paths: Paths, ids: list[str]) -> None:
    """Refuse to uninstall a plugin managed policy forces on: sync would bring it back."""
    rules = policy.managed(paths)
    for plugin_id in ids:
        rule = rules.plugin_rule(plugin_id)
        if rule is not None and rule.enabled:
            raise PlugmanError(
                f"plugin {plugin_id} is required by managed policy (enabledPlugins, "
                f"{rule.origin}): plugman sync installs it again",
                hint="ask your administrator; run: plugman policy explain " + plugin_id,
            )


def _hand_edits(paths: Paths, removed: set[str], scope: Scope, what: str, force: bool) -> None:
    """Refuse to leave an agent-file entry the user edited behind, unless `force` (then a
    warning each). Nothing linked or exported: nothing to look at, and nothing loaded."""
    # lazy: config.exported and agents.links are not loaded by uninstall unless agents are fed
    from plugman.config import exported

    if present(exported.path(paths)) or links.every(paths):
        # lazy: agents.handedits takes ~6 ms to import, only this path needs it
        from plugman.agents import handedits

        found = handedits.for_plugins(paths, removed, scope, os.environ)
        for note in handedits.refuse(found, what, force):
            progress.warn(note)


def _installed_anywhere(paths: Paths, plugin_id: str) -> bool:
    return any(plugin_id in InstallRecord.load(paths, scope).plugins for scope in SCOPES)


def _orphans(record: InstallRecord, removing: list[str]) -> list[str]:
    """Dependencies nobody else needs once `removing` are gone (installed only as deps)."""
    gone = set(removing)
    changed = True
    while changed:
        changed = False
        for key, value in record.plugins.items():
            needed_by = set(value.required_by) - gone
            if key not in gone and not value.explicit and not needed_by:
                gone.add(key)
                changed = True
    return sorted(gone - set(removing))


def _remove(
    work: Session, record: InstallRecord, plugin_id: str, removing: list[str], force: bool
) -> PluginChange:
    entry = record.plugins[plugin_id]
    blocked = [k for k in entry.required_by if k not in removing]
    if blocked and not force:
        raise PlugmanError(
            f"{plugin_id} is needed by {', '.join(blocked)}",
            hint="uninstall those first, or pass --force",
        )
    if entry.declared is not None:
        _undeclare(work, record, plugin_id, entry.declared, force)
    del record.plugins[plugin_id]
    for key, other in record.plugins.items():
        if plugin_id in other.required_by:
            left = tuple(k for k in other.required_by if k != plugin_id)
            record.plugins[key] = other._replace(required_by=left)
    return PluginChange("uninstalled", plugin_id, entry.version, record.scope, entry.content_hash)


def _undeclare(
    work: Session, record: InstallRecord, plugin_id: str, declared: object, force: bool
) -> None:
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


def _undeclare_marketplaces(work: Session, record: InstallRecord) -> None:
    """Drop the marketplaces plugman declared that no project plugin comes from any more."""
    declared = record.declared_marketplaces
    used = {entry.marketplace for entry in record.plugins.values()}
    for name in [n for n in declared if n not in used]:
        # lazy: plugins.marketplaces takes ~7 ms to import, only this path needs it
        from plugman.plugins.catalog import marketplaces

        marketplaces.undeclare(work, record, name)
        declared.remove(name)

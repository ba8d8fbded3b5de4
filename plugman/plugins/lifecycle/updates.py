"""`plugman outdated`, and what `update` (plugman.commands.update) does in its session:
installed plugins against their catalogs.

An update is content-hash aware: a changed tree under an unchanged version string is still an
update. A plugin installed directly (no marketplace) follows the moving ref of its source, as
its source kind says (`SourceKind.follow`: a git branch, an OCI tag, an npm dist-tag, an
extension's own): where the ref points now is only offered, and `update` installs it through
the same checks as any update; a source pinned to an exact commit, digest or version follows
nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from plugman import extensions
from plugman.config import declarations
from plugman.config.scopes import consented
from plugman.core import progress
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.fs import tree_hash
from plugman.core.jsonvalue import PluginFields
from plugman.core.paths import Paths
from plugman.core.session import Session, session
from plugman.core.state import SCOPES, InstalledPlugin, InstallRecord, Scope
from plugman.plugins.catalog import marketplaces, registry
from plugman.plugins.catalog.failed import Failed, said
from plugman.plugins.catalog.listings import Outdated, pin_of
from plugman.plugins.lifecycle import planner as resolver
from plugman.plugins.lifecycle import rollback
from plugman.plugins.lifecycle.install import content_of
from plugman.plugins.lifecycle.installed import PluginChange, save
from plugman.plugins.sources.kind import Followed
from plugman.plugins.supply_chain import lockfile, signing
from plugman.plugins.supply_chain.capabilities import Capabilities, compare
from plugman.runtime.launch import notices


def _followed(paths: Paths, entry: InstalledPlugin) -> Followed | None:
    """Where the moving ref of a directly installed plugin's source points now, as its source
    kind says (None: it follows none, or it is from a marketplace, whose catalog says)."""
    kind = extensions.found_source_kind(entry.source.kind)
    if entry.marketplace != resolver.DIRECT or kind is None:  # None: its extension is gone
        return None
    return kind.follow(entry.source, paths)


def _unmoved(paths: Paths, entry: InstalledPlugin) -> bool:
    """Whether there is nothing newer to fetch for a directly installed plugin: its source
    follows no ref, or the ref still names what is installed (asked without a download)."""
    if entry.marketplace != resolver.DIRECT:
        return False
    followed = _followed(paths, entry)
    return followed is None or followed.pin == pin_of(entry.source)


def _fresh(
    work: Session, plugin_id: str, entry: InstalledPlugin, allow_hidden: bool = False
) -> resolver.Planned:
    spec = resolver.PluginRequest(plugin_id, entry.name, entry.marketplace)
    if entry.marketplace == resolver.DIRECT:
        followed = _followed(work.paths, entry)
        if followed is None:
            raise PlugmanError(
                f"{plugin_id} was installed from a source that follows no moving ref (an exact "
                "commit, digest or version): nothing newer is offered for it",
                hint=f"install another version directly, or compare with a folder: plugman "
                f"diff {entry.name} installed PATH",
            )
        spec = resolver.PluginRequest(plugin_id, direct=followed.source)
    found = resolver.plan(work.paths, work.store, [spec], {}, allow_hidden=allow_hidden)
    fresh = next((p for p in found if p.id == plugin_id), None)
    if fresh is None:
        raise PlugmanError(
            f"{plugin_id} is no longer what its source offers: it now holds "
            + ", ".join(p.id for p in found),
            hint=f"uninstall {plugin_id} and install the new plugin",
        )
    return fresh


def _candidates(records: list[InstallRecord], names: list[str]) -> list[tuple[InstallRecord, str]]:
    """(record, id) of every installed plugin in `records` (the named ones): from a
    marketplace, or given directly (its source kind says whether it follows a ref)."""
    found = []
    for record in records:
        for plugin_id, entry in record.plugins.items():
            if not names or plugin_id in names or entry.name in names:
                found.append((record, plugin_id))
    return found


def refresh(paths: Paths, scopes: tuple[Scope, ...], names: list[str]) -> list[str]:
    """Fetch again the remote marketplaces the installed plugins (the named ones) come from,
    as `npm outdated` asks the registry; one that cannot be reached is a warning, and its
    cached catalog is used. The names of the marketplaces refreshed."""
    records = [InstallRecord.load(paths, scope) for scope in scopes]
    wanted = {r.plugins[i].marketplace for r, i in _candidates(records, names)} - {resolver.DIRECT}
    markets = registry.known(paths)
    done = []
    for name in sorted(wanted & set(markets)):
        if markets[name].source.kind == "directory":
            continue  # read in place: always current
        try:
            marketplaces.update(paths, [name])
        except PlugmanError as exc:
            progress.warn(f"could not refresh marketplace {name}: {exc.message}; using its cache")
        else:
            done.append(name)
    return done


def _gone(paths: Paths, entry: InstalledPlugin) -> str | None:
    """Why a plugin can no longer be looked up in its marketplace, if it cannot."""
    if entry.marketplace == resolver.DIRECT:
        return None
    market = registry.known(paths).get(entry.marketplace)
    if market is None:
        return f"marketplace {entry.marketplace} is not known any more"
    if all(e.name != entry.name for e in marketplaces.load(market).plugins):
        return f"not in marketplace {market.name} any more"
    return None


def outdated(paths: Paths, *, fetch_catalogs: bool = True) -> list[Outdated]:
    """Installed plugins whose catalog now offers a different tree, in every scope here, and
    those that cannot be checked (with why, in `problem`); an older release offered is marked
    a downgrade (`downgrade`: why), which `update` refuses. What it finds (downgrades aside) is
    kept for the agents' update notice (plugman.runtime.launch.notices)."""
    rows = _outdated(paths, fetch_catalogs)
    found = [
        notices.Row(r.id, r.scope, r.content_hash)
        for r in rows
        if r.problem is None and r.downgrade is None
    ]
    notices.save(paths, found)
    return rows


def _outdated(paths: Paths, fetch_catalogs: bool) -> list[Outdated]:
    """Each plugin checked on its own: one that is blocked, whose marketplace is gone or
    broken, or whose source cannot be reached is its own row (`problem`, `hint`), and the rest
    are checked."""
    if fetch_catalogs:
        refresh(paths, SCOPES, [])
    rows = []
    with session(paths) as work:
        records = [InstallRecord.load(paths, scope) for scope in SCOPES]
        for record, plugin_id in _candidates(records, []):
            entry = record.plugins[plugin_id]
            try:
                row = _outdated_one(work, record.scope, plugin_id, entry)
            except PlugmanError as exc:
                problem = said(exc)
                row = Outdated(plugin_id, record.scope, entry.version, None, problem, hint=exc.hint)
            if row is not None:
                rows.append(row)
    return rows


def _outdated_one(
    work: Session, scope: Scope, plugin_id: str, entry: InstalledPlugin
) -> Outdated | None:
    version = entry.version
    refused = registry.plugin_block(work.paths, plugin_id)
    if refused is not None:
        blocked = f"{refused.message}: not checked (it is not delivered)"
        return Outdated(plugin_id, scope, version, None, blocked, hint=refused.hint)
    problem = _gone(work.paths, entry)
    if problem is not None:
        hint = f"run: plugman marketplace list; or uninstall {plugin_id}"
        return Outdated(plugin_id, scope, version, None, problem, hint=hint)
    if _unmoved(work.paths, entry):
        return None
    fresh = _fresh(work, plugin_id, entry)
    available = tree_hash(fresh.tree)
    if available == entry.content_hash:
        return None
    return Outdated(
        plugin_id,
        scope,
        version,
        fresh.version,
        content_hash=entry.content_hash,
        available_hash=available,
        pin=pin_of(entry.source),
        available_pin=pin_of(fresh.source),
        downgrade=rollback.downgrade(entry, fresh.version, fresh.released),
    )


class Updated(NamedTuple):
    """What an update changed (or would change, dry run) and what each changed plugin gained
    and lost in capability (plugman.plugins.supply_chain.capabilities), in the same order."""

    changes: list[PluginChange]
    capabilities: list[Capabilities]
    # `id (scope)` of the changed plugins whose servers and hooks wait for `trust approve`
    waiting: set[str]
    # the plugins not updated, each with why and what to do (an update of every plugin goes on
    # past them); any makes the command exit 1
    failed: list[Failed] | None = None


class DryRunError(Exception):
    """Raised inside a session to roll it back: nothing a dry run staged stays."""


def updated(
    work: Session,
    names: list[str],
    scope: Scope | None,
    scopes: tuple[Scope, ...],
    done: Updated,
    dry_run: bool,
    allow: tuple[bool, bool, bool],  # hidden text, a signer change, a downgrade
) -> None:
    """Bring installed plugins (all, or the named ones) in `scopes` up to their catalogs in the
    caller's session, what changed added to `done`; with `dry_run`, raise `DryRunError` once
    `done` says what would change. The agents are not deployed to."""
    paths = work.paths
    changes = done.changes
    records = [InstallRecord.load(paths, s) for s in scopes]
    candidates = _candidates(records, names)
    if names and not candidates:
        where = f"the {scope} scope" if scope else "any scope here"
        raise PlugmanError(
            f"none of {', '.join(names)} is installed in {where}",
            hint="run: plugman list",
        )
    hashes: dict[str, tuple[resolver.Planned, str]] = {}  # one fetch per plugin
    failed = done.failed if done.failed is not None else []
    for record, plugin_id in candidates:
        entry = record.plugins[plugin_id]
        # named: what fails refuses the command; else it is that plugin's, the rest updated
        try:
            refused = registry.plugin_block(paths, plugin_id)
            if refused is not None:
                raise refused
            change = _update_one(work, record, plugin_id, hashes, allow)
        except PlugmanError as exc:
            if names:
                raise
            failed.append(Failed.of(plugin_id, record.scope, exc))
            continue
        if change is not None:
            changes.append(change)
            new = record.plugins[plugin_id]
            found = compare(
                plugin_id,
                work.store.path(entry.content_hash),
                work.store.path(change.content_hash),
                entry.entry,
                new.entry,
            )
            done.capabilities.append(found)
            if not consented(record.scope, new):
                done.waiting.add(f"{plugin_id} ({record.scope})")
    if dry_run:
        raise DryRunError
    for record in records:
        if any(c.scope == record.scope for c in changes):
            save(work, record)


def _update_one(
    work: Session,
    record: InstallRecord,
    plugin_id: str,
    hashes: dict[str, tuple[resolver.Planned, str]],
    allow: tuple[bool, bool, bool],  # hidden text, a signer change, a downgrade
) -> PluginChange | None:
    entry = record.plugins[plugin_id]
    problem = _gone(work.paths, entry)
    if problem is not None:
        hint = f"run: plugman marketplace list; or uninstall {plugin_id}"
        raise PlugmanError(problem, hint=hint)
    if plugin_id not in hashes and _unmoved(work.paths, entry):
        return None
    if plugin_id not in hashes:
        fresh = _fresh(work, plugin_id, entry, allow[0])
        hashes[plugin_id] = (fresh, work.tx.add_tree(fresh.tree))
    fresh, content_hash = hashes[plugin_id]
    if content_hash == entry.content_hash:
        return None
    older = rollback.downgrade(entry, fresh.version, fresh.released)
    if older is not None and not allow[2]:
        raise rollback.refusal(plugin_id, record.scope, older, fresh.source, "update")
    if older is not None:
        progress.warn(f"{plugin_id} ({record.scope}) goes back: {older} ({rollback.FLAG})")
    signer = signing.pinned(entry.signer, signing.Admitted(fresh.signer, fresh.signers))
    refused = signing.changed(plugin_id, entry.signer, signer)
    if refused is not None and not allow[1]:
        raise refused
    if refused is not None:
        now = f"signer {signer}" if signer else "no signature"
        progress.warn(
            f"{plugin_id}: signer {entry.signer} replaced by {now} (--allow-signer-change)"
        )
    was = (entry.version, entry.content_hash, pin_of(entry.source))
    record.plugins[plugin_id] = InstalledPlugin.made(
        content_of(fresh),
        content_hash,
        entry,
        explicit=entry.explicit,
        consented=entry.consented,  # an update its user asked for: consent stands
        required_by=entry.required_by,
        declared=entry.declared,
        hidden_text="allowed" if fresh.hidden_text else None,
        signer=signer,
        released=fresh.released,
    )._replace(forced=entry.forced)  # what managed policy forced stays out of plugman.lock
    moved = PluginChange("updated", plugin_id, fresh.version, record.scope, content_hash, *was)
    return moved._replace(pin=pin_of(fresh.source))


ENDS = ("installed", "available", "locked")  # or a plugin folder


def diff(
    paths: Paths,
    name: str,
    scope: Scope | None = None,
    start: str = "installed",
    end: str = "available",
) -> tuple[Scope, Capabilities]:
    """What the plugin `name` installed here (in `scope`, or the first scope holding it) would
    gain and lose going from `start` to `end`, each `installed` (its tree in the store),
    `available` (what its source offers now; the catalog is refreshed, as `outdated` does),
    `locked` (the tree plugman.lock pins) or a plugin folder; installs nothing."""
    scopes = (scope,) if scope else SCOPES
    records = [InstallRecord.load(paths, s) for s in scopes]
    where = f"the {scope} scope" if scope else "any scope here"
    found = [(r, i) for r in records for i, e in r.plugins.items() if name in (i, e.name)]
    if not found:
        raise PlugmanError(
            f"{name} is not installed in {where}",
            hint="run: plugman list (plugman diff compares an installed plugin's content)",
        )
    record, plugin_id = found[0]
    entry = record.plugins[plugin_id]
    if "available" in (start, end):
        refresh(paths, (record.scope,), [plugin_id])
        problem = _gone(paths, entry)
        if problem is not None:
            raise PlugmanError(
                f"{plugin_id} cannot be compared: {problem}", hint="run: plugman list"
            )
    with session(paths) as work:  # writes nothing: a staged tree is collected after
        old, old_fields = _end(work, plugin_id, entry, start)
        new, new_fields = _end(work, plugin_id, entry, end)
        return record.scope, compare(plugin_id, old, new, old_fields, new_fields)


def _end(
    work: Session, plugin_id: str, entry: InstalledPlugin, end: str
) -> tuple[Path, PluginFields | None]:
    """The tree (and marketplace entry fields) one end of a diff names."""
    if end == "installed":
        return work.store.path(entry.content_hash), entry.entry
    if end == "available":
        fresh = _fresh(work, plugin_id, entry)
        return fresh.tree, fresh.entry
    if end == "locked":
        declarations.check_project_file(work.paths, work.paths.project_lock)
        pin = lockfile.by_id(lockfile.read(work.paths.project_lock)).get(plugin_id)
        if pin is None:
            raise PlugmanError(
                f"{plugin_id} is not pinned in {work.paths.project_lock}",
                hint="run: plugman lock (or compare installed available)",
            )
        tree = work.store.path(pin.content_hash)
        if not tree.is_dir():
            raise PlugmanError(
                f"the tree {plugin_id} is locked to is not in the store",
                hint="run: plugman sync --frozen (it fetches exactly what the lock pins)",
            )
        return tree, entry.entry
    folder = Path(end).expanduser()
    if not folder.is_dir():
        raise UsageError(
            f"cannot compare with {end!r}: it is neither {', '.join(ENDS)} nor a folder",
            hint="name installed, available, locked or a plugin folder",
        )
    return folder, None

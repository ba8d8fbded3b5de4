"""`plugman lock`, and what `plugman sync` (plugman.commands.sync) does in its session: the
project's plugman.toml and plugman.lock, made real.

`sync` installs exactly what the project declares (resolving it afresh and updating the lock),
`sync --locked` does the same but fails when the lock is stale, and `sync --frozen` installs
the lock's pins as they are, checking every tree against its content hash: on a fresh machine
it reproduces the same store. `lock` resolves the declaration and rewrites the lock only.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from plugman.config import claude_settings, declarations, policy, policy_plugins
from plugman.core import progress
from plugman.core.errors import PlugmanError
from plugman.core.fs import tree_hash
from plugman.core.jsonvalue import PluginFields
from plugman.core.paths import Paths
from plugman.core.session import Session, session
from plugman.core.state import InstalledPlugin, InstallRecord, PluginContent
from plugman.core.versions import satisfies
from plugman.plugins.catalog import marketplaces, registry
from plugman.plugins.catalog.failed import Failed
from plugman.plugins.catalog.pins import source_from_lock
from plugman.plugins.lifecycle import blocked, rollback
from plugman.plugins.lifecycle import planner as resolver
from plugman.plugins.lifecycle.install import components, content_of
from plugman.plugins.lifecycle.installed import PluginChange, save
from plugman.plugins.lifecycle.updates import DryRunError, Updated
from plugman.plugins.sources import fetch
from plugman.plugins.supply_chain import lock_trust, lockfile, signing
from plugman.plugins.supply_chain.capabilities import compare
from plugman.plugins.supply_chain.lockfile import LockEntry


def declared_specs(paths: Paths, pins: list[LockEntry]) -> list[resolver.PluginRequest]:
    """What the project declares (plugman.toml, then its `.claude/settings.json`). A plugin
    installed directly (`NAME@direct`) is declared by name only: its source is the one
    plugman.lock (`pins`) records for it. What managed policy forces is not the project's:
    `blocked.forced_specs`."""
    locked = lockfile.by_id(pins)
    found = []
    for plugin_id, value in declarations.project_checked(paths).get("plugins", {}).items():
        specifier = value if isinstance(value, str) else value.get("version", "*")
        name, _, market = plugin_id.partition("@")
        if market == resolver.DIRECT:
            if plugin_id not in locked:
                raise PlugmanError(
                    f"{plugin_id} was installed from a source given directly, and plugman.lock "
                    "(the only place that records it) has no entry for it",
                    where=str(paths.project_config),
                    hint=f"install it again: plugman install SOURCE --scope project "
                    f"(or remove {plugin_id} from plugman.toml)",
                )
            direct = source_from_lock(locked[plugin_id].source)
            found.append(resolver.PluginRequest(plugin_id, direct=direct))
            continue
        found.append(
            resolver.PluginRequest(plugin_id, name, market, "" if specifier == "*" else specifier)
        )
    for plugin_id in claude_declaration(paths).plugins:  # Claude's settings: any version
        name, _, market = plugin_id.partition("@")
        found.append(resolver.PluginRequest(plugin_id, name, market, ""))
    return found


def read_lock(paths: Paths) -> list[LockEntry]:
    """The project's plugman.lock pins, never read through a link on its path."""
    declarations.check_project_file(paths, paths.project_lock)
    return lockfile.read(paths.project_lock)


def claude_declaration(paths: Paths) -> claude_settings.ProjectDeclaration:
    """What the project's committed `.claude/settings.json` declares beyond plugman.toml."""
    return claude_settings.project(
        paths,
        declarations.project_entries(paths, "marketplaces"),
        declarations.project_entries(paths, "plugins"),
        registry.known(paths),
    )


def register_marketplaces(work: Session, broken: dict[str, Failed] | None = None) -> dict[str, str]:
    """Add the marketplaces the project declares and this machine does not know yet, in the
    caller's transaction (so a killed sync leaves none of them behind). One the managed policy
    blocks is not added: its name -> why (sync skips its plugins). With `broken`, one that
    cannot be added (its folder gone, its host unreachable) goes there and the rest are added;
    without, it refuses the command."""
    paths = work.paths
    refused: dict[str, str] = {}
    known = registry.known(paths)
    claude = claude_declaration(paths)
    for message in claude.warnings:
        progress.warn(message)
    declared = declarations.project_entries(paths, "marketplaces")
    declared |= {name: {"source": text} for name, text in claude.marketplaces.items()}
    for name, value in declared.items():
        if name not in known and isinstance(value, dict) and "source" in value:
            text = value["source"] + (f"#{value['ref']}" if value.get("ref") else "")
            registry.refuse_project_helper(name, value)
            try:
                source = registry.classify(text, paths.project_dir)
            except PlugmanError as exc:
                if broken is None:
                    raise
                broken[name] = Failed.of(name, None, exc)
                continue
            try:
                registry.check_policy(paths, source)
            except PlugmanError as exc:  # blocked: its plugins are skipped, the rest synced
                refused[name] = f"{exc.message}, {exc.where}" if exc.where else exc.message
                continue
            try:
                marketplaces.add_in(work, source, name, origin="project")
            except PlugmanError as exc:
                if broken is None:
                    raise
                broken[name] = Failed.of(name, None, exc)
    for name, fields, _ in policy.managed(paths).extra_marketplaces:  # managed: known to all
        text = fields.pinned()
        if name not in known and text is not None:
            source = registry.classify(text, paths.project_dir)
            registry.check_policy(paths, source)
            marketplaces.add_in(work, source, name, origin="managed")
    return refused


def pins_of(planned: list[resolver.Planned]) -> list[LockEntry]:
    return [
        LockEntry(
            p.id,
            p.name,
            p.marketplace,
            p.version,
            tree_hash(p.tree),
            p.source.settled(),
            "allowed" if p.hidden_text else None,
            p.signer,
        )
        for p in planned
    ]


def lock(paths: Paths, *, allow_hidden: bool = False) -> list[LockEntry]:
    """Resolve the project's declaration and write plugman.lock; the new pins. What this
    machine's managed policy forces is not the project's, and stays out of it."""
    locked = read_lock(paths)  # every input checked before anything is done
    declarations.project_checked(paths)
    claude_declaration(paths)
    with session(paths) as work:
        for name, why in register_marketplaces(work).items():  # lock fetches all: refused
            raise PlugmanError(f"marketplace {name!r}: {why}", hint=registry.POLICY_HINT)
        record = InstallRecord.load(paths, "project")
        specs = declared_specs(paths, locked)
        planned = resolver.plan(paths, work.store, specs, {}, allow_hidden=True)
        _hidden(record, planned, locked, allow_hidden)
        pins = pins_of(_prefer_locked(locked, planned))
        declarations.check_project_file(paths, paths.project_lock)
        work.tx.write(paths.project_lock, lockfile.render(pins))
    return pins


def checked_pins(paths: Paths, mode: str) -> list[LockEntry]:
    """plugman.lock's pins, every input of a sync checked before anything is done (the lock,
    plugman.toml, the project's `.claude/settings.json`); `frozen` needs a lock to install
    from when the project declares plugins."""
    pins = read_lock(paths)
    declared = declarations.project_checked(paths).get("plugins", {})
    claude = claude_declaration(paths)
    if mode == "frozen" and not pins and (declared or claude.plugins):
        raise PlugmanError(
            "there is no plugman.lock to install from",
            hint="run: plugman lock (or plugman sync without --frozen)",
        )
    return pins


def disagreements(paths: Paths, pins: list[LockEntry]) -> list[str]:
    """Where plugman.lock (`pins`) and plugman.toml disagree, read offline: a plugin the
    project declares that the lock does not pin, or pins at a version outside the declared
    range. (A pin the project does not declare may be a dependency: it is not checked here.)"""
    locked = lockfile.by_id(pins)
    found = []
    for plugin_id, value in declarations.project_checked(paths).get("plugins", {}).items():
        specifier = value if isinstance(value, str) else value.get("version", "*")
        pin = locked.get(plugin_id)
        if pin is None:
            found.append(f"plugman.toml declares {plugin_id}, which plugman.lock does not pin")
        elif specifier != "*" and not satisfies(pin.version, specifier):
            found.append(
                f"plugman.toml wants {plugin_id} {specifier}, plugman.lock pins {pin.version}"
            )
    return found


def synced(
    work: Session,
    mode: str,
    pins: list[LockEntry],
    done: Updated,
    *,
    dry_run: bool,
    allow_hidden: bool,
    allow_downgrade: bool,
) -> None:
    """Make the project scope match its declaration (`default`, `locked`) or its lock
    (`frozen`) in the caller's session, what changed added to `done`; with `dry_run`, raise
    `DryRunError` once `done` says what would change. The agents are not deployed to."""
    paths = work.paths
    broken: dict[str, Failed] = {}  # marketplaces that cannot be read: their plugins fail
    refused = register_marketplaces(work, broken)
    record = InstallRecord.load(paths, "project")
    skipped: dict[str, str] = {}  # what the managed policy blocks: id -> the rule, file
    failed = done.failed if done.failed is not None else []
    if mode == "frozen":
        targets = [
            _fetch_pin(work, record, pin, allow_hidden)
            for pin in pins
            if not blocked.pin(work.paths, pin, refused, skipped)
            and not blocked.unreadable(paths, pin.id, pin.marketplace, broken, failed)
        ]
        taken = {pin.id for pin in pins}
    else:
        specs = [
            spec
            for spec in declared_specs(paths, pins)
            if not blocked.of_market(spec.text, spec.marketplace, refused, skipped)
            and not blocked.unreadable(paths, spec.text, spec.marketplace, broken, failed)
        ]
        planned = resolver.plan(paths, work.store, specs, {}, allow_hidden=True, skipped=skipped)
        _hidden(record, planned, pins, allow_hidden)
        planned = _prefer_locked(pins, planned)
        left = set(skipped) | {f.id for f in failed}  # their pins stay in the lock
        kept = [p for p in pins if p.id not in left]  # the lock, as it is, for those
        if mode == "locked" and _keys(pins_of(planned)) != _keys(kept):
            raise PlugmanError(
                "plugman.lock is out of date with plugman.toml or its sources",
                hint="run: plugman lock, and commit the new plugman.lock",
            )
        _same_signers(pins, planned)
        targets = [_target(p, pin) for p, pin in zip(planned, pins_of(planned), strict=True)]
        taken = {spec.text for spec in specs} | {p.id for p in planned}
    targets += _forced(work, record, taken, allow_hidden)
    if not allow_downgrade:
        _no_rollback(record, targets, pins)
    blocked.warn(skipped)
    done.changes.extend(_apply(work, record, targets, done, set(skipped)))
    if dry_run:
        raise DryRunError
    if mode == "frozen":
        work.tx.write(record.path, record.to_bytes())
    else:
        save(work, record)
        left = set(skipped) | {f.id for f in failed}
        blocked.keep_pins(work, record, [p for p in pins if p.id in left])


def _target(p: resolver.Planned, pin: LockEntry, forced: bool = False) -> Target:
    return Target(
        p.id,
        p.tree,
        content_of(p),
        pin.content_hash,
        pin.hidden_text,
        p.signer,
        forceable=p.marketplace != resolver.DIRECT,
        forced=forced,
        released=p.released,
    )


def _forced(work: Session, record: InstallRecord, taken: set[str], allow: bool) -> list[Target]:
    """What managed policy forces on this machine beyond what the project has (`taken`),
    resolved from its marketplace each time: installed here, never pinned in plugman.lock."""
    specs = blocked.forced_specs(work.paths, taken)
    if not specs:
        return []
    planned = [
        p
        for p in resolver.plan(work.paths, work.store, specs, {}, allow_hidden=True)
        if p.id not in taken
    ]
    _hidden(record, planned, [], allow)
    return [_target(p, pin, True) for p, pin in zip(planned, pins_of(planned), strict=True)]


def _hidden(
    record: InstallRecord, planned: list[resolver.Planned], pins: list[LockEntry], allow: bool
) -> None:
    """Refuse hidden text this machine's user did not allow (plugins.lock_trust)."""
    locked = lockfile.by_id(pins)
    for p in planned:
        if p.hidden_text:
            lock_trust.hidden_allowed(record, p.id, tree_hash(p.tree), locked.get(p.id), allow)


def _prefer_locked(
    pins: list[LockEntry], planned: list[resolver.Planned]
) -> list[resolver.Planned]:
    """Each plugin with the signer plugman.lock pins, when that key still signs it."""
    locked = {p.id: p.signer for p in pins}
    return [
        p._replace(signer=signing.pinned(locked.get(p.id), signing.Admitted(p.signer, p.signers)))
        for p in planned
    ]


def _same_signers(pins: list[LockEntry], planned: list[resolver.Planned]) -> None:
    """Refuse a plugin whose signer is not the one plugman.lock pins (or is gone)."""
    locked = {p.id: p.signer for p in pins}
    for p in planned:
        refused = signing.changed(p.id, locked.get(p.id), p.signer)
        if refused is not None:
            raise PlugmanError(
                f"{refused.message} (plugman.lock pins the signer)",
                hint="if you trust the new signer, run: plugman update --allow-signer-change "
                f"{p.id} (or remove its entry from plugman.lock and run plugman lock)",
            )


def _no_rollback(record: InstallRecord, targets: list[Target], pins: list[LockEntry]) -> None:
    """Refuse a plugin its source now offers at an older release than the one installed
    (plugman.plugins.lifecycle.rollback), unless plugman.lock pins exactly that content: a lock is
    the project's explicit request, which sync follows as Cargo follows its lock (what it installs
    still waits for `trust approve`)."""
    locked = _keys(pins)
    for target in targets:
        current = record.plugins.get(target.id)
        if current is None or current.content_hash == target.content_hash:
            continue
        if (target.id, target.content_hash) in locked:
            continue
        reason = rollback.downgrade(current, target.content.version, target.released)
        if reason is not None:
            raise rollback.refusal(target.id, "project", reason, target.content.source, "sync")


def _keys(pins: list[LockEntry]) -> set[tuple[str, str]]:
    return {(p.id, p.content_hash) for p in pins}


class Target(NamedTuple):
    """A plugin sync installs: its tree, what it is, and the content hash it must have."""

    id: str
    tree: Path
    content: PluginContent
    content_hash: str
    hidden_text: str | None = None  # "allowed": let in with hidden text (plugman.lock)
    signer: str | None = None  # who signed it, as plugman.lock pins it
    forceable: bool = False  # what its marketplace offers (a lock pin: checked by `offered`)
    forced: bool = False  # this machine's managed policy forces it: kept out of plugman.lock
    released: str | None = None  # its signed manifest's creation time (signing.Admitted)


def _fetch_pin(work: Session, record: InstallRecord, pin: LockEntry, allow: bool) -> Target:
    registry.check_plugin_policy(work.paths, pin.id)  # blocked: refused from a pin too
    lock_trust.offered(work.paths, pin)  # only what its marketplace offers
    source = source_from_lock(pin.source)
    known = registry.known(work.paths).get(pin.marketplace)
    with registry.credentials(known):
        fetched = fetch(source, work.store.stage() / "tree", base=known.root if known else None)
    found = tree_hash(fetched.root)
    fields = _entry_fields(known, pin.name)
    hidden: list[bool] = []
    plugin = resolver.validate_tree(fetched.root, fields, pin.id, False, True, hidden)
    if found != pin.content_hash:
        raise PlugmanError(
            f"{pin.id} does not match plugman.lock: expected {pin.content_hash}, fetched {found}",
            hint="its source changed; run plugman lock to accept the new content",
        )
    if hidden:
        lock_trust.hidden_allowed(record, pin.id, found, pin, allow)
    admitted = signing.admitted(work.paths, source, fetched.pin, pin.id, pin.signer)
    signer = signing.pinned(pin.signer, admitted)
    refused = signing.changed(pin.id, pin.signer, signer)
    if refused is not None:
        raise PlugmanError(f"{refused.message} (plugman.lock pins the signer)", hint=refused.hint)
    content = PluginContent(
        pin.name, pin.marketplace, pin.version, pin.source, fields, components(plugin)
    )
    # a marketplace pin is forceable once `offered` proved it is that marketplace's plugin:
    # whether the organization forces it is `_apply`'s question (policy_plugins.forced)
    forceable = pin.marketplace != resolver.DIRECT
    return Target(
        pin.id,
        fetched.root,
        content,
        found,
        pin.hidden_text,
        signer,
        forceable,
        released=admitted.released,
    )


def _entry_fields(known: registry.Known | None, name: str) -> PluginFields | None:
    """The marketplace entry of a plugin it defines (`strict: false`), else None."""
    if known is None:
        return None
    entry = next((e for e in marketplaces.load(known).plugins if e.name == name), None)
    return None if entry is None or entry.strict else entry.entry


def _apply(
    work: Session, record: InstallRecord, targets: list[Target], done: Updated, kept: set[str]
) -> list[PluginChange]:
    """Install `targets`, uninstall what is no longer wanted; `kept`: the plugins managed
    policy blocks, left as they are (installed, it is not delivered: `list` says why)."""
    declared = declarations.project_checked(work.paths).get("plugins", {})
    # what the organization's managed policy forces on is its consent, as Claude Code loads
    # a force-enabled plugin without asking: that plugin from the marketplace the managed
    # settings mean, never a same-name one a project declares, nor a lock pin
    rules, known = policy.managed(work.paths), policy_plugins.markets(work.paths)
    forced = {t.id for t in targets if t.forceable and policy_plugins.forced(rules, t.id, known)}
    changes = []
    wanted = {target.id for target in targets} | kept
    for gone in sorted(set(record.plugins) - wanted):
        entry = record.plugins.pop(gone)
        changes.append(
            PluginChange("uninstalled", gone, entry.version, "project", entry.content_hash)
        )
    for target in targets:
        current = record.plugins.get(target.id)
        if current is not None and current.content_hash == target.content_hash:
            now = current.consented or target.id in forced  # forced since: the org consents
            if (current.signer, current.forced, current.consented) != (
                target.signer,
                target.forced,
                now,
            ):  # signed since, or forced since / declared since: recorded
                record.plugins[target.id] = current._replace(
                    signer=target.signer, forced=target.forced, consented=now
                )
            continue
        content_hash = work.tx.add_tree(target.tree)
        was = work.store.path(current.content_hash) if current else None
        new = work.store.path(content_hash)
        old_entry = current.entry if current else None
        done.capabilities.append(compare(target.id, was, new, old_entry, target.content.entry))
        if target.id not in forced:
            done.waiting.add(f"{target.id} (project)")  # installed unconsented, just below
        value = declared.get(target.id, current.declared if current else None)
        record.plugins[target.id] = InstalledPlugin.made(
            target.content,
            content_hash,
            current,
            explicit=target.id in declared,
            # new content nobody here chose: its servers and hooks wait for approval
            # (plugman.config.scopes)
            consented=target.id in forced,
            required_by=current.required_by if current else (),
            declared=value if isinstance(value, str) or target.id not in declared else "*",
            hidden_text=target.hidden_text,
            signer=target.signer,
            released=target.released,
        )._replace(forced=target.forced)  # what managed policy forced stays out of the lock
        version = target.content.version
        changes.append(PluginChange("installed", target.id, version, "project", content_hash))
    return changes

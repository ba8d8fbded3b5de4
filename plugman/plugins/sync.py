"""`plugman sync` and `plugman lock`: the project's plugman.toml and plugman.lock, made real.

`sync` installs exactly what the project declares (resolving it afresh and updating the lock),
`sync --locked` does the same but fails when the lock is stale, and `sync --frozen` installs
the lock's pins as they are, checking every tree against its content hash: on a fresh machine
it reproduces the same store. `lock` resolves the declaration and rewrites the lock only.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, NamedTuple

from plugman.agents import deploy
from plugman.config import claude_settings, declarations
from plugman.core import progress
from plugman.core.errors import PlugmanError
from plugman.core.fs import tree_hash
from plugman.core.paths import Paths
from plugman.core.session import Session, session
from plugman.core.state import InstalledPlugin, InstallRecord, PluginContent
from plugman.plugins import lockfile, marketplaces, registry, rollback, signing
from plugman.plugins import planner as resolver
from plugman.plugins.capabilities import compare
from plugman.plugins.install import components, content_of
from plugman.plugins.installed import PluginChange, save
from plugman.plugins.pins import source_from_lock
from plugman.plugins.updates import DryRunError, Updated
from plugman.runtime import notices


def declared_specs(paths: Paths, pins: list[dict[str, Any]]) -> list[resolver.PluginRequest]:
    """What plugman.toml asks for. A plugin installed directly (`NAME@direct`) is declared by
    name only: its source is the one plugman.lock (`pins`) records for it."""
    locked = {str(pin["id"]): pin for pin in pins}
    found = []
    for plugin_id, value in declarations.entries(paths.project_config, "plugins").items():
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
            direct = source_from_lock(dict(locked[plugin_id]["source"]))
            found.append(resolver.PluginRequest(plugin_id, direct=direct))
            continue
        found.append(
            resolver.PluginRequest(plugin_id, name, market, "" if specifier == "*" else specifier)
        )
    for plugin_id in claude_declaration(paths).plugins:  # Claude's settings: any version
        name, _, market = plugin_id.partition("@")
        found.append(resolver.PluginRequest(plugin_id, name, market, ""))
    return found + forced_specs(paths, {spec.text for spec in found})


def forced_specs(paths: Paths, declared: set[str]) -> list[resolver.PluginRequest]:
    """The plugins managed policy forces on (`enabledPlugins: {"name@market": true}`) that
    the project does not declare: sync installs them too, as Claude Code enables them."""
    from plugman.config import policy

    forced = [r for r in policy.managed(paths).plugins if r.enabled and r.plugin not in declared]
    known = registry.known(paths) if forced else {}
    found = []
    for rule in forced:
        name, _, market = rule.plugin.partition("@")
        if market in known:
            found.append(resolver.PluginRequest(rule.plugin, name, market))
        else:  # Claude Code's own marketplaces, or one nobody declared: not plugman's to fetch
            progress.warn(
                f"managed policy requires {rule.plugin} ({rule.origin}), but no marketplace "
                f"named {market!r} is known: add it (plugman marketplace add SOURCE)"
            )
    return found


def claude_declaration(paths: Paths) -> claude_settings.ProjectDeclaration:
    """What the project's committed `.claude/settings.json` declares beyond plugman.toml."""
    return claude_settings.project(
        paths,
        declarations.entries(paths.project_config, "marketplaces"),
        declarations.entries(paths.project_config, "plugins"),
        registry.known(paths),
    )


def register_marketplaces(work: Session) -> None:
    """Add the marketplaces the project declares and this machine does not know yet, in the
    caller's transaction (so a killed sync leaves none of them behind)."""
    from plugman.config import policy

    paths = work.paths
    known = registry.known(paths)
    claude = claude_declaration(paths)
    for message in claude.warnings:
        progress.warn(message)
    declared = declarations.entries(paths.project_config, "marketplaces")
    declared |= {name: {"source": text} for name, text in claude.marketplaces.items()}
    for name, value in declared.items():
        if name not in known and isinstance(value, dict) and "source" in value:
            text = value["source"] + (f"#{value['ref']}" if value.get("ref") else "")
            registry.refuse_project_helper(name, value)
            source = registry.classify(text, paths.project_dir)
            registry.check_policy(paths, source)
            marketplaces.add_in(work, source, name)
    for name, fields, _ in policy.managed(paths).extra_marketplaces:  # managed: known to all
        text = _claude_source_text(fields)
        if name not in known and text is not None:
            source = registry.classify(text, paths.project_dir)
            registry.check_policy(paths, source)
            marketplaces.add_in(work, source, name)


def _claude_source_text(fields: dict[str, Any]) -> str | None:
    """How plugman names a Claude Code marketplace source (extraKnownMarketplaces), or None
    for a form plugman does not fetch (npm, settings)."""
    kind, ref = fields.get("source"), fields.get("ref")
    location = {"github": "repo", "git": "url", "url": "url", "directory": "path", "file": "path"}
    value = fields.get(location.get(str(kind), ""))
    if not isinstance(value, str):
        return None
    return value + (f"#{ref}" if isinstance(ref, str) and kind in ("github", "git") else "")


def pins_of(planned: list[resolver.Planned]) -> list[dict[str, Any]]:
    return [
        {
            "id": p.id,
            "name": p.name,
            "marketplace": p.marketplace,
            "version": p.version,
            "source": p.source,
            "content_hash": tree_hash(p.tree),
        }
        | ({"hidden_text": "allowed"} if p.hidden_text else {})
        | ({"signer": p.signer} if p.signer else {})
        for p in planned
    ]


def lock(paths: Paths) -> list[dict[str, Any]]:
    """Resolve the declaration and write plugman.lock; the new pins."""
    with session(paths) as work:
        register_marketplaces(work)
        locked = lockfile.read(paths.project_lock)
        planned = resolver.plan(paths, work.store, declared_specs(paths, locked), {})
        pins = pins_of(_prefer_locked(locked, planned))
        work.tx.write(paths.project_lock, lockfile.render(pins))
    return pins


def sync(
    paths: Paths, mode: str = "default", *, dry_run: bool = False, allow_downgrade: bool = False
) -> Updated:
    """Make the project scope match its declaration (`default`, `locked`) or its lock (`frozen`);
    with `dry_run`, say what would change (and what each plugin gains) and change nothing. An
    older release than the one installed is refused unless `allow_downgrade` or plugman.lock
    pins exactly it (`_no_rollback`)."""
    done = Updated([], [], set())
    with contextlib.suppress(DryRunError):
        _sync_in(paths, mode, dry_run, done, allow_downgrade)
    if done.changes and not dry_run:
        notices.prune(paths)  # a synced plugin's update notice is done (plugman.runtime.notices)
    return done


def _sync_in(
    paths: Paths, mode: str, dry_run: bool, done: Updated, allow_downgrade: bool = False
) -> None:
    pins = lockfile.read(paths.project_lock)
    declared = declarations.entries(paths.project_config, "plugins")
    if mode == "frozen" and not pins and (declared or claude_declaration(paths).plugins):
        raise PlugmanError(
            "there is no plugman.lock to install from",
            hint="run: plugman lock (or plugman sync without --frozen)",
        )
    with session(paths) as work:
        register_marketplaces(work)
        record = InstallRecord.load(paths, "project")
        if mode == "frozen":
            targets = [_fetch_pin(work, pin) for pin in pins]
        else:
            allowed = {str(p["id"]) for p in pins if p.get("hidden_text") == "allowed"}
            specs = declared_specs(paths, pins)
            planned = resolver.plan(paths, work.store, specs, {}, allow_hidden=allowed)
            planned = _prefer_locked(pins, planned)
            if mode == "locked" and _keys(pins_of(planned)) != _keys(pins):
                raise PlugmanError(
                    "plugman.lock is out of date with plugman.toml or its sources",
                    hint="run: plugman lock, and commit the new plugman.lock",
                )
            _same_signers(pins, planned)
            targets = [
                Target(
                    p.id,
                    p.tree,
                    content_of(p),
                    str(pin["content_hash"]),
                    pin.get("hidden_text"),
                    p.signer,
                    p.released,
                )
                for p, pin in zip(planned, pins_of(planned), strict=True)
            ]
        if not allow_downgrade:
            _no_rollback(record, targets, pins)
        done.changes.extend(_apply(work, record, targets, done))
        if dry_run:
            raise DryRunError
        if mode == "frozen":
            work.tx.write(record.path, record.to_bytes())
        else:
            save(work, record)
        deploy.refresh(work, os.environ)


def _prefer_locked(
    pins: list[dict[str, Any]], planned: list[resolver.Planned]
) -> list[resolver.Planned]:
    """Each plugin with the signer plugman.lock pins, when that key still signs it."""
    locked = {str(p["id"]): p.get("signer") for p in pins}
    return [
        p._replace(signer=signing.pinned(locked.get(p.id), signing.Admitted(p.signer, p.signers)))
        for p in planned
    ]


def _same_signers(pins: list[dict[str, Any]], planned: list[resolver.Planned]) -> None:
    """Refuse a plugin whose signer is not the one plugman.lock pins (or is gone)."""
    locked = {str(p["id"]): p.get("signer") for p in pins}
    for p in planned:
        refused = signing.changed(p.id, locked.get(p.id), p.signer)
        if refused is not None:
            raise PlugmanError(
                f"{refused.message} (plugman.lock pins the signer)",
                hint="if you trust the new signer, run: plugman update --allow-signer-change "
                f"{p.id} (or remove its entry from plugman.lock and run plugman lock)",
            )


def _no_rollback(record: InstallRecord, targets: list[Target], pins: list[dict[str, Any]]) -> None:
    """Refuse a plugin its source now offers at an older release than the one installed
    (plugman.plugins.rollback), unless plugman.lock pins exactly that content: a lock is the
    project's explicit request, which sync follows as Cargo follows its lock (what it installs
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


def _keys(pins: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(str(p["id"]), str(p["content_hash"])) for p in pins}


class Target(NamedTuple):
    """A plugin sync installs: its tree, what it is, and the content hash it must have."""

    id: str
    tree: Path
    content: PluginContent
    content_hash: str
    hidden_text: str | None = None  # "allowed": let in with hidden text (plugman.lock)
    signer: str | None = None  # who signed it, as plugman.lock pins it
    released: str | None = None  # its signed manifest's creation time (signing.Admitted)


def _fetch_pin(work: Session, pin: dict[str, Any]) -> Target:
    from plugman.plugins.sources import fetch

    source = source_from_lock(pin["source"])
    known = registry.known(work.paths).get(pin["marketplace"])
    with registry.credentials(known):
        fetched = fetch(source, work.store.stage() / "tree", base=known.root if known else None)
    found = tree_hash(fetched.root)
    fields = _entry_fields(known, str(pin["name"]))
    allowed = pin.get("hidden_text") == "allowed"
    plugin = resolver.validate_tree(fetched.root, fields, pin["id"], allow_hidden=allowed)
    admitted = signing.admitted(work.paths, source, fetched.pin, pin["id"], pin.get("signer"))
    signer = signing.pinned(pin.get("signer"), admitted)
    refused = signing.changed(str(pin["id"]), pin.get("signer"), signer)
    if refused is not None:
        raise PlugmanError(f"{refused.message} (plugman.lock pins the signer)", hint=refused.hint)
    if found != pin["content_hash"]:
        raise PlugmanError(
            f"{pin['id']} does not match plugman.lock: expected "
            f"{pin['content_hash']}, fetched {found}",
            hint="its source changed; run plugman lock to accept the new content",
        )
    content = PluginContent(
        str(pin["name"]),
        str(pin["marketplace"]),
        str(pin["version"]),
        pin["source"],
        fields,
        components(plugin),
    )
    hidden = pin.get("hidden_text")
    return Target(str(pin["id"]), fetched.root, content, found, hidden, signer, admitted.released)


def _entry_fields(known: registry.Known | None, name: str) -> dict[str, Any] | None:
    """The marketplace entry of a plugin it defines (`strict: false`), else None."""
    if known is None:
        return None
    entry = next((e for e in marketplaces.load(known).plugins if e.name == name), None)
    return None if entry is None or entry.strict else entry.entry


def _apply(
    work: Session, record: InstallRecord, targets: list[Target], done: Updated
) -> list[PluginChange]:
    from plugman.config import policy

    declared = declarations.entries(work.paths.project_config, "plugins")
    # what the organization's managed policy forces on is its consent, as Claude Code loads
    # a force-enabled plugin without asking
    forced = {r.plugin for r in policy.managed(work.paths).plugins if r.enabled}
    changes = []
    wanted = {target.id for target in targets}
    for gone in sorted(set(record.plugins) - wanted):
        entry = record.plugins.pop(gone)
        changes.append(
            PluginChange("uninstalled", gone, entry.version, "project", entry.content_hash)
        )
    for target in targets:
        current = record.plugins.get(target.id)
        if current is not None and current.content_hash == target.content_hash:
            if current.signer != target.signer:  # signed since: recorded
                record.plugins[target.id] = current._replace(signer=target.signer)
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
        )
        version = target.content.version
        changes.append(PluginChange("installed", target.id, version, "project", content_hash))
    return changes

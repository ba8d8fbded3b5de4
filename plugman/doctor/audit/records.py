"""The audit checks over what plugman pins: `store` (every tree an install record or plugman.lock
pins is in the store and re-hashes to its pin; the lock's pins installed as pinned),
`signature` (every signed plugin's kept signature verifies, offline, by the signer its record
and plugman.lock pin) and `hidden-text` (no plugin let in with hidden text,
`install --allow-hidden-text`)."""

from __future__ import annotations

from plugman.config.contribute import missing_copy
from plugman.core.fs import tree_hash
from plugman.core.state import InstallRecord, Scope
from plugman.core.store import Store
from plugman.doctor.audit.model import Finding, Given, Lock, short
from plugman.plugins.supply_chain.signing import recheck


def store(given: Given) -> list[Finding]:
    """Every pinned tree in the store, hashing to its pin."""
    trees = Store(given.paths.store_dir)
    lock = Lock.read(given)
    states: dict[str, str | None] = {}

    def state(content_hash: str) -> str | None:
        if content_hash not in states:
            folder = trees.path(content_hash)
            states[content_hash] = (
                "missing"
                if not folder.is_dir()
                else ("modified" if tree_hash(folder) != content_hash else None)
            )
        return states[content_hash]

    found = []
    installed: dict[str, str] = {}
    for scope in given.scopes:
        for plugin_id, entry in InstallRecord.load(given.paths, scope).plugins.items():
            if scope == "project":
                installed[plugin_id] = entry.content_hash
            how = state(entry.content_hash)
            if how:
                message, fix = missing_copy(plugin_id, scope, how)
                where = trees.path(entry.content_hash)
                file, line = lock.at(given, plugin_id, scope)
                found.append(Finding("store", f"{message}: {where}", fix, file, line))
    for plugin_id, pin in lock.pins.items():
        locked = pin.content_hash
        line = lock.lines.get(plugin_id)
        if plugin_id not in installed:
            message = f"plugman.lock pins {plugin_id} ({short(locked)}), which is not installed"
            fix = "install what the lock pins: plugman sync --frozen"
        elif installed[plugin_id] != locked:
            message = (
                f"{plugin_id} is installed with other content ({short(installed[plugin_id])}) "
                f"than plugman.lock pins ({short(locked)})"
            )
            fix = "install what the lock pins: plugman sync --frozen (or pin what is installed: "
            fix += "plugman lock)"
        else:
            continue
        found.append(Finding("store", message, fix, lock.file, line))
    return found


def hidden_text(given: Given) -> list[Finding]:
    """No plugin let in with hidden text (`install --allow-hidden-text`)."""
    lock = Lock.read(given)
    trees = Store(given.paths.store_dir)
    allowed: dict[tuple[Scope, str], str] = {}  # (scope, plugin id) → its content hash
    for scope in given.scopes:
        for plugin_id, entry in InstallRecord.load(given.paths, scope).plugins.items():
            if entry.hidden_text == "allowed":
                allowed[scope, plugin_id] = entry.content_hash
    for plugin_id, pin in lock.pins.items():
        if pin.hidden_text == "allowed":
            allowed.setdefault(("project", plugin_id), pin.content_hash)
    found = []
    for (scope, plugin_id), content_hash in allowed.items():
        name = plugin_id.partition("@")[0]
        message = (
            f"{plugin_id} ({scope} scope) was let in with hidden text (install "
            "--allow-hidden-text): characters a reviewer does not see"
        )
        fix = (
            f"see where: plugman validate {trees.path(content_hash)}; then install content "
            f"without it (plugman update {name} --scope {scope}) or remove it (plugman "
            f"uninstall {name} --scope {scope})"
        )
        found.append(Finding("hidden-text", message, fix, *lock.at(given, plugin_id, scope)))
    return found


def signatures(given: Given) -> list[Finding]:
    """Every signed plugin's kept signature verifies by the signer its record pins, and that
    is the signer plugman.lock pins."""
    lock = Lock.read(given)
    found = []
    for scope in given.scopes:
        for plugin_id, entry in InstallRecord.load(given.paths, scope).plugins.items():
            name = plugin_id.partition("@")[0]
            problem = recheck(given.paths, entry)
            pin = lock.pins.get(plugin_id) if scope == "project" else None
            locked = pin.signer if pin is not None else None
            if problem is None and locked is not None and locked != entry.signer:
                problem = f"plugman.lock pins signer {locked}, the install {entry.signer}"
            if problem is not None:
                message = f"{plugin_id} ({scope} scope): {problem}"
                fix = (
                    f"install it again, verified: plugman uninstall {name} --scope {scope}, "
                    f"then plugman install it"
                )
                if scope == "project":
                    fix = "install what the lock pins, verified again: plugman sync --frozen"
                found.append(Finding("signature", message, fix, *lock.at(given, plugin_id, scope)))
    return found

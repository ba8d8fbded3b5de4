"""What a committed plugman.lock may ask of `sync`: a lock is a request, never consent.

A pin is let in only where it is what its declared marketplace offers (`offered`: the same
source kind and location as that marketplace's entry for the plugin, compared canonically),
or a source given directly (installed unconsented, pending approval). Hidden text is let in
only where this machine's user allowed it (`hidden_allowed`: their own install record of that
very content, or `--allow-hidden-text` on the command), never because the lock says so.
"""

from __future__ import annotations

import posixpath

from plugman.core import identity
from plugman.core.errors import PlugmanError
from plugman.core.oci import reference
from plugman.core.paths import Paths
from plugman.core.state import InstallRecord
from plugman.manifest.model import PluginSource
from plugman.plugins.catalog import marketplaces, registry
from plugman.plugins.catalog.pins import describe, source_from_lock
from plugman.plugins.supply_chain.lockfile import LockEntry

DIRECT = "direct"  # plugins.planner.DIRECT: a source given directly, no marketplace


def offered(paths: Paths, pin: LockEntry) -> None:
    """Refuse a pin that is not what its marketplace offers (a marketplace pin only)."""
    if pin.marketplace == DIRECT:
        return
    known = registry.known(paths).get(pin.marketplace)
    said = describe(pin.source, pin.marketplace)
    if known is None:
        raise PlugmanError(
            f"plugman.lock pins {pin.id} to {said}, but no marketplace named "
            f"{pin.marketplace!r} is known here to say what it offers",
            where=_at(paths, pin),
            hint="declare the marketplace in plugman.toml (or: plugman marketplace add "
            "SOURCE), then run plugman sync --frozen again",
        )
    entry = next((e for e in marketplaces.load(known).plugins if e.name == pin.name), None)
    if entry is None or entry.source is None:
        raise PlugmanError(
            f"plugman.lock pins {pin.id} to {said}, but marketplace {pin.marketplace!r} "
            f"offers no plugin named {pin.name!r}",
            where=_at(paths, pin),
            hint="take plugman.lock as committed upstream, or write it again: plugman lock",
        )
    locked = source_from_lock(pin.source)
    if not same_place(locked, entry.source):
        raise PlugmanError(
            f"plugman.lock pins {pin.id} to {said}, which is not what marketplace "
            f"{pin.marketplace!r} offers for it ({entry.source.kind} source "
            f"{entry.source.location}): a lock may only pin what its marketplace offers",
            where=_at(paths, pin),
            hint="if the lock was changed by someone else, do not trust it: take it as "
            "committed upstream, or write it again from the marketplace: plugman lock",
        )


def _at(paths: Paths, pin: LockEntry) -> str:
    return f"{paths.project_lock}:{pin.line}" if pin.line else str(paths.project_lock)


def same_place(a: PluginSource, b: PluginSource) -> bool:
    """Whether two sources fetch from the same place (kind, location and subfolder, compared
    as git and the registries resolve them), whatever commit or digest each pins."""
    if a.kind != b.kind:
        return False
    if (_folder(a.subdir) or "") != (_folder(b.subdir) or ""):
        return False
    return _location(a) == _location(b) and _registry(a) == _registry(b)


def _location(source: PluginSource) -> str:
    if source.kind == "path":
        return _folder(source.location) or "."
    if source.kind in ("github", "url", "git-subdir"):
        return identity.git(source.location)
    if source.kind == "oci":
        found = reference.parse(source.location)
        return identity.oci(f"{found.registry}/{found.repository}")
    if source.kind == "npm":
        return source.location.strip().lower()
    return source.location


def _registry(source: PluginSource) -> str:
    if source.kind != "npm":
        return ""
    return (source.registry or "https://registry.npmjs.org").rstrip("/").lower()


def _folder(path: str | None) -> str | None:
    if not path:
        return None
    found = posixpath.normpath(path.replace("\\", "/"))
    return None if found == "." else found.rstrip("/")


def hidden_allowed(
    record: InstallRecord, plugin_id: str, content_hash: str, pin: LockEntry | None, flag: bool
) -> None:
    """Refuse hidden text in a plugin unless this machine's user allowed it: `flag`
    (`--allow-hidden-text`), or their install of this very content with it."""
    mine = record.plugins.get(plugin_id)
    if flag or (mine and mine.hidden_text == "allowed" and mine.content_hash == content_hash):
        return
    said = (
        "plugman.lock records that it was let in where it was locked, but a lock does not "
        "allow it here; "
        if pin is not None and pin.hidden_text
        else ""
    )
    raise PlugmanError(
        f"{plugin_id} hides text from its reviewer (invisible characters in what an agent "
        f"reads); {said}nobody on this machine allowed this content",
        hint="read it first (plugman sync --dry-run, plugman validate on its folder); if you "
        "trust it, run: plugman sync --allow-hidden-text",
    )

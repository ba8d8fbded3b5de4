"""The source of an installed plugin as the lock and the install record write it (`lock_source`),
read back into the source that fetches exactly that tree (`source_from_lock`), what pins it
(`pin_of`), how it is said to users (`describe`), and the version a plugin without one in its
plugin.json gets from its pin (`version_of`): each asked of the plugin's source kind
(plugman.plugins.sources.kind), so an extension's kind keeps its own fields and words."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plugman import extensions
from plugman.core.sources import LockedSource
from plugman.manifest.model import PluginSource

if TYPE_CHECKING:
    from plugman.plugins.catalog import registry


def version_of(kind: str, pin: str | None) -> str:
    """A plugin's version when its plugin.json has none, from its pin (an npm package's own
    version; else the first 12 characters of a commit, sha256 or OCI digest)."""
    return extensions.source_kind(kind).version_of(pin)


def lock_source(
    source: PluginSource, pin: str | None, known: registry.Known | None
) -> LockedSource:
    """The source as the lock file records it: enough to fetch the same tree again (a folder of
    a marketplace is pinned by the marketplace's commit)."""
    kind = extensions.source_kind(source.kind)
    return LockedSource(
        source.kind, kind.lock_fields(source, pin, known.commit if known is not None else None)
    )


def source_from_lock(found: LockedSource) -> PluginSource:
    """The PluginSource that fetches exactly what a lock entry pins; PlugmanError for a kind
    nothing registers (an extension that is not installed)."""
    return extensions.source_kind(found.kind).from_lock(found)


def pin_of(found: LockedSource | None) -> str | None:
    """What exactly a lock entry fetched (a commit, sha256, OCI digest, npm integrity, or an
    extension kind's own pin); None when it says none or no installed kind reads it."""
    kind = extensions.found_source_kind(found.kind) if found is not None else None
    return kind.pin_of(found) if kind is not None and found is not None else None


def describe(found: LockedSource, marketplace: str | None) -> str:
    """A lock entry's source in a user's words (`marketplace`: None for a direct install)."""
    name = found.kind
    kind = extensions.found_source_kind(name)
    if kind is None:  # said, not guessed: the kind's extension is not installed here
        return f"a source of type {name} (no installed plugman extension reads it)"
    return kind.describe(found, marketplace)

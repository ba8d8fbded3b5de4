"""The source of an installed plugin as the lock and the install record write it (`lock_source`),
read back into the source that fetches exactly that tree (`source_from_lock`), and the version
a plugin without one in its plugin.json gets from its pin (`version_of`)."""

from __future__ import annotations

from typing import Any

from plugman.manifest.model import PluginSource
from plugman.plugins import registry


def version_of(kind: str, pin: str | None) -> str:
    """A plugin's version when its plugin.json has none: an npm package's own version, else
    the first 12 characters of the pin (commit, sha256, OCI digest), else "unknown"."""
    if kind == "npm":
        return (pin or "").partition("#")[0] or "unknown"
    return (pin or "unknown").removeprefix("sha256:")[:12]


def lock_source(
    source: PluginSource, pin: str | None, known: registry.Known | None
) -> dict[str, Any]:
    """The source as the lock file records it: enough to fetch the same tree again."""
    kind = source.kind
    found: dict[str, Any] = {"type": kind}
    if kind == "path":
        found["path"] = source.location
        if known is not None and known.commit:
            found["commit"] = known.commit
    elif kind == "archive":
        found |= {"url": source.location, "sha256": pin}
    elif kind == "oci":
        found |= {"ref": source.location, "digest": pin}
    elif kind == "npm":
        from plugman.plugins.sources.npm import lock_fields

        found |= lock_fields(source, pin)
    else:
        found[("repo" if kind == "github" else "url")] = source.location
        found |= {"commit": pin} | ({"ref": source.ref} if source.ref else {})
        if source.subdir:
            found["path"] = source.subdir
    return found


def source_from_lock(found: dict[str, Any]) -> PluginSource:
    """The PluginSource that fetches exactly what a lock entry pins."""
    kind = found["type"]
    if kind == "npm":
        from plugman.plugins.sources.npm import from_lock

        return from_lock(found)
    location = found.get("path") if kind == "path" else found.get("repo") or found.get("url")
    sha = found.get("sha256") if kind == "archive" else found.get("commit")
    if kind == "oci":
        location, sha = found.get("ref"), found.get("digest")
    return PluginSource(
        kind, str(location), None, sha, found.get("path") if kind != "path" else None
    )

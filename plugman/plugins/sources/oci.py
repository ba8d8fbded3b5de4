"""`oci` sources: a plugin artifact in an OCI registry, pulled with every digest checked, then
extracted like an archive.

`PluginSource.location` is the reference as given (`REGISTRY/REPO:TAG`, or `…@sha256:…`);
`sha`, when set (a lock's pin, a marketplace entry's `digest`), is the manifest digest to pull,
whatever the tag names now. The pin returned is the manifest digest that was pulled.
"""

from __future__ import annotations

from pathlib import Path

from plugman.core.errors import FetchError
from plugman.core.oci.reference import DIGEST, Reference, parse
from plugman.core.paths import Paths
from plugman.core.sources import LockedSource
from plugman.manifest.model import PluginSource
from plugman.plugins.sources.common import plugin_root, scratch
from plugman.plugins.sources.extract import extract
from plugman.plugins.sources.kind import Followed, Progress


def reference(source: PluginSource) -> Reference:
    """What to pull: the reference, pinned to `source.sha` when it has one."""
    ref = parse(source.location)
    if source.sha is None:
        return ref
    pin = source.sha.lower()
    if not DIGEST.match(pin):
        raise FetchError(
            f"OCI digest {source.sha!r} is not sha256: and 64 hexadecimal digits",
            hint="pin an OCI source to its manifest digest (sha256:…)",
        )
    if ref.digest is not None and ref.digest != pin:
        raise FetchError(
            f"{source.location!r} names digest {ref.digest}, but it is pinned to {pin}",
            hint="give the digest once, in the reference or as the pin",
        )
    return ref.pinned(pin)


def fetch_oci(source: PluginSource, dest: Path, progress: Progress = None) -> tuple[Path, str]:
    """Pull the artifact's plugin layer and extract it into `dest`: the plugin root and the
    manifest digest."""
    from plugman.core.oci import client  # http.client and ssl: only when pulling

    ref = reference(source)
    with scratch(dest, ".layer") as temporary:
        with temporary.open("wb") as out, client.connect(ref) as registry:
            pulled = client.pull(registry, ref, out, progress)
        if progress:
            progress("extracting")
        extract(temporary, dest)
    return plugin_root(dest, f"the OCI artifact {ref}"), pulled.digest


def follow(locked: LockedSource, paths: Paths) -> Followed | None:
    """The manifest digest the tag of a locked OCI source names now (one HEAD request, so
    `outdated` and `update` download no layer for an unmoved tag), and the source pinned to
    it; None for an artifact installed by digest."""
    ref = parse(str(locked.get("ref")))
    if ref.digest is not None:
        return None
    from plugman.core.oci.client import connect, resolve  # http.client and ssl

    with connect(ref, paths) as client:
        digest = resolve(client, ref)
    return Followed(PluginSource("oci", str(ref), sha=digest), digest)

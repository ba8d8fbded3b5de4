"""`plugman publish DIR oci://REGISTRY/REPO:TAG`: a plugin validated, packed
(plugman.plugins.authoring.pack: the same bytes on every run) and pushed as an OCI artifact
(plugman.core.oci.client.push), which `plugman install oci://…` and marketplace entries with an
`oci` source then install. With a key (`--sign KEY`), the pushed manifest is signed and the
signature attached to it (plugman.plugins.supply_chain.signing); the key is read before anything is
pushed.

The artifact's annotations carry the plugin's name, version, description and creation time
(`org.opencontainers.image.created`: SOURCE_DATE_EPOCH when set, else now), which the signature
covers and `update` compares to refuse an older release of the same version
(plugman.plugins.lifecycle.rollback); publishing needs a version, as `plugman tag` does, so what a
tag points at can be told apart in `outdated`.

A tag that already names other content is not overwritten unless `force`: re-pointing a tag is
what a rollback attack does, and whoever follows it gets the new content at their next update.
One exception: a newer version of the same plugin moves a channel tag (`:stable`, `:latest`)
forward, as each release does; a `--force` needed on every release would mean nothing.
Publishing the same plugin content again keeps the manifest as it was (the same digest).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from plugman.core.errors import PlugmanError, UsageError
from plugman.core.oci.reference import parse
from plugman.core.paths import Paths
from plugman.core.versions import order
from plugman.plugins.authoring.pack import Packed, pack
from plugman.plugins.supply_chain import signing

if TYPE_CHECKING:
    from plugman.plugins.supply_chain.signing import Signed

SCHEME = "oci://"


class Published(NamedTuple):
    packed: Packed
    ref: str  # REGISTRY/REPO:TAG, as pushed
    digest: str  # the manifest's: what `plugman install oci://REF@DIGEST` installs
    signed: Signed | None = None  # its signature, when published with a key


def publish(
    directory: Path,
    target: str,
    paths: Paths,
    env: Mapping[str, str],
    *,
    strict: bool = False,
    sign: Path | None = None,
    force: bool = False,
) -> Published:
    """Validate, pack and push the plugin in `directory` to `target` (oci://REGISTRY/REPO:TAG),
    and sign it with the key at `sign` when given. A tag naming other content already is
    refused unless `force`."""
    if not target.startswith(SCHEME):
        raise UsageError(
            f"cannot publish to {target!r}: plugman publishes to OCI registries",
            hint="name a tag in one: oci://REGISTRY/REPOSITORY:TAG (e.g. oci://ghcr.io/acme/tool:1.0.0)",
        )
    packed = pack(directory, strict=strict)
    if packed.version is None:
        raise UsageError(
            f"{packed.name} has no version to publish",
            where=str(directory),
            hint='add "version" to .claude-plugin/plugin.json (e.g. "1.0.0")',
        )
    # lazy: core.oci.client takes ~22 ms to import, only this path needs it
    from plugman.core.oci.client import push

    key = signing.read_key(sign, env) if sign is not None else None
    ref = target.removeprefix(SCHEME)
    created = _over(ref, packed, paths, env, force) or _now(env)
    digest = push(
        ref,
        packed.data,
        name=packed.name,
        version=packed.version,
        description=packed.description or "",
        created=created,
        paths=paths,
        env=env,
    )
    if key is None:
        return Published(packed, ref, digest)
    signed = signing.sign_with(key, f"{SCHEME}{ref}@{digest}", paths, env)
    return Published(packed, ref, digest, signed._replace(ref=ref))


def _now(env: Mapping[str, str]) -> str:
    """The creation time to publish under: SOURCE_DATE_EPOCH (reproducible-builds.org) when it
    is set, else now; RFC 3339, UTC, to the second."""
    value = env.get("SOURCE_DATE_EPOCH", "").strip()
    if value and not value.isdigit():
        raise UsageError(
            f"SOURCE_DATE_EPOCH is {value!r}, not a number of seconds since 1970",
            hint="set it to an integer (e.g. $(git log -1 --format=%ct)) or unset it",
        )
    moment = int(value) if value else time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


def _over(
    ref: str, packed: Packed, paths: Paths, env: Mapping[str, str], force: bool
) -> str | None:
    """What the tag `ref` names now, checked before pushing over it: None when it names
    nothing, an older version of this plugin, or `force` is given; the creation time of the
    manifest there when it holds this same plugin content (published again: the same
    manifest); PlugmanError when it holds other content, unless `force`."""
    # lazy: core.oci.client takes ~22 ms to import, only this path needs it
    from plugman.core.oci import client
    from plugman.core.oci.connections import RegistryError

    target = parse(ref)
    with client.connect(target, paths, env) as registry:
        digest = client.current(registry, target)
        if digest is None:
            return None
        try:
            found = client.manifest(registry, target.pinned(digest))[1]
            layer = client.layer(target, found)
        except RegistryError:
            found, layer = {}, {}  # not a plugman plugin artifact
    raw = found.get("annotations")
    notes = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
    held = (layer.get("digest"), notes.get(client.TITLE), notes.get(client.VERSION))
    if held == (client.digest_of(packed.data), packed.name, packed.version):
        return notes.get(client.CREATED)
    if force or (layer and held[1] == packed.name and _newer(packed.version or "", held[2])):
        return None
    what = "something that is not a plugman plugin artifact"
    if layer:
        created = notes.get(client.CREATED)
        what = f"{held[1]} {held[2]}" + (f", published {created}" if created else "")
    raise PlugmanError(
        f"{SCHEME}{ref} already holds {what} (manifest {digest}), other content than "
        f"{packed.name} {packed.version}; publishing would re-point the tag, and whoever "
        "follows it would get this content at their next update; nothing was pushed",
        hint=f"publish each release to its own tag (e.g. :{packed.version}); to overwrite this "
        "one knowingly, run plugman publish again with --force",
    )


def _newer(version: str, held: str | None) -> bool:
    """Whether `version` is a newer release than the `held` one (comparable and higher)."""
    return held is not None and (order(version, held) or 0) > 0

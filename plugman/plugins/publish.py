"""`plugman publish DIR oci://REGISTRY/REPO:TAG`: a plugin validated, packed (plugman.plugins.pack:
the same bytes on every run) and pushed as an OCI artifact (plugman.core.oci.client.push), which
`plugman install oci://…` and marketplace entries with an `oci` source then install. With a
key (`--sign KEY`), the pushed manifest is signed and the signature attached to it
(plugman.plugins.signing); the key is read before anything is pushed.

The artifact's annotations carry the plugin's name, version and description; publishing needs
a version, as `plugman tag` does, so what a tag points at can be told apart in `outdated`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from plugman.core.errors import UsageError
from plugman.core.paths import Paths
from plugman.plugins.pack import Packed, pack

if TYPE_CHECKING:
    from plugman.plugins.signing import Signed

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
) -> Published:
    """Validate, pack and push the plugin in `directory` to `target` (oci://REGISTRY/REPO:TAG),
    and sign it with the key at `sign` when given."""
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
    from plugman.core.oci.client import push
    from plugman.plugins import signing

    key = signing.read_key(sign, env) if sign is not None else None
    ref = target.removeprefix(SCHEME)
    digest = push(
        ref,
        packed.data,
        name=packed.name,
        version=packed.version,
        description=packed.description or "",
        paths=paths,
        env=env,
    )
    if key is None:
        return Published(packed, ref, digest)
    signed = signing.sign_with(key, f"{SCHEME}{ref}@{digest}", paths, env)
    return Published(packed, ref, digest, signed._replace(ref=ref))

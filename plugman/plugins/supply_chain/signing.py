"""Signing plugin artifacts and checking their signatures (docs/signing.md).

`sign` signs an OCI plugin artifact's manifest with a key (plugman.core.signatures: a Sigstore
bundle) and attaches the bundle to it as an OCI referrer (plugman.core.oci.referrers), the
public key in the annotation `PUBLIC_KEY` of the signature's manifest (the bundle names only
its fingerprint). `admitted` is what install, update and sync ask of every fetched plugin:
the signatures of an OCI artifact verified over its manifest (a bad one refuses it), the
`requiredSignatures` rules (plugman.config.signers) met, and the signer returned
for the lock and the install record. What re-verifying needs offline (the manifest bytes,
the bundles and keys) is kept under the data folder, by manifest digest, for `recheck`.

A changed signer is the caller's to refuse (`changed`): update and sync pin the first one.
"""

from __future__ import annotations

import base64
import io
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from plugman.core.errors import FetchError, PlugmanError, UsageError
from plugman.core.fs import atomic_write
from plugman.core.oci.reference import parse
from plugman.core.paths import Paths
from plugman.core.state import InstalledPlugin
from plugman.manifest.model import PluginSource

PUBLIC_KEY = "dev.plugman.signature.publickey"
CREATED = "org.opencontainers.image.created"
PASSWORD = "PLUGMAN_SIGNING_PASSWORD"


class Signed(NamedTuple):
    ref: str  # REGISTRY/REPO:TAG as given
    digest: str  # the manifest signed
    signer: str  # the key's fingerprint
    signature: str  # the digest of the signature's manifest


class Admitted(NamedTuple):
    """A fetched plugin's signer as recorded (None: unsigned), all its valid signers, and when
    its signed manifest says it was published (its `org.opencontainers.image.created`
    annotation, which `plugman publish` writes: None when unsigned or absent), which update
    compares to refuse an older release (plugman.plugins.lifecycle.rollback)."""

    signer: str | None
    signers: tuple[str, ...] = ()
    released: str | None = None


class Signature(NamedTuple):
    signer: str
    bundle: bytes
    public_key: bytes  # PEM


def read_key(path: Path, env: Mapping[str, str]) -> Any:
    """The private key at `path` (decrypted with PLUGMAN_SIGNING_PASSWORD when it is set)."""
    # lazy: core.signatures takes ~22 ms to import, only this path needs it
    from plugman.core import signatures

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(
            f"cannot read the signing key: {exc.strerror}",
            where=str(path),
            hint="give the .key file plugman key generate wrote (--key PATH)",
        ) from None
    return signatures.load_private(data, env.get(PASSWORD) or None, str(path))


def sign(target: str, key_path: Path, paths: Paths, env: Mapping[str, str]) -> Signed:
    """Sign the plugin artifact `target` (oci://REGISTRY/REPO:TAG or …@sha256:…) names."""
    if not target.startswith("oci://"):
        raise UsageError(
            f"cannot sign {target!r}: plugman signs plugin artifacts in OCI registries",
            hint="name one: oci://REGISTRY/REPOSITORY:TAG (or …@sha256:DIGEST)",
        )
    return sign_with(read_key(key_path, env), target, paths, env)


def sign_with(key: Any, target: str, paths: Paths, env: Mapping[str, str]) -> Signed:
    """Sign the plugin artifact `target` names with `key` (from `read_key`)."""
    # lazy: core.signatures takes ~22 ms to import, only this path needs it
    from plugman.core import signatures
    from plugman.core.oci import client, referrers

    ref = parse(target)
    with client.connect(ref, paths, env) as registry:
        digest = client.resolve(registry, ref)
        client.manifest(registry, ref.pinned(digest))  # a plugman plugin artifact
        found = referrers.raw(registry, ref, digest)
        if found is None:
            raise PlugmanError(f"{ref} vanished while it was being signed", hint="try again")
        bundle = signatures.sign(key, found[0])
        annotations = {
            CREATED: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            PUBLIC_KEY: signatures.public_pem(key.public_key()).decode(),
        }
        made = referrers.attach(registry, ref, digest, signatures.BUNDLE, bundle, annotations)
    return Signed(str(ref.following()), digest, signatures.fingerprint(key.public_key()), made)


def signatures_of(paths: Paths, location: str, digest: str) -> tuple[bytes, list[Signature]]:
    """The manifest bytes of the artifact `location` pinned to `digest`, and its signatures,
    each verified over them (FetchError for one that does not verify); none: unsigned."""
    # lazy: core.signatures takes ~22 ms to import, only this path needs it
    from plugman.core import signatures
    from plugman.core.oci import client, referrers

    ref = parse(location).pinned(digest)
    found = []
    with client.connect(ref, paths) as registry:
        listed = referrers.referrers(registry, ref, digest, signatures.BUNDLE)
        manifest = referrers.raw(registry, ref, digest) if listed else (b"", "")
        if manifest is None:
            raise FetchError(f"{ref} is gone from its registry", hint="check the reference")
        for one in listed:
            made = _one(registry, ref, str(one.get("digest")), manifest[0])
            if isinstance(made, str):
                raise FetchError(
                    f"the signature of {ref} does not verify: {made}; nothing was installed",
                    where=str(ref),
                    hint="the artifact or its signature was altered; ask its publisher",
                )
            found.append(made)
    return manifest[0], found


def _one(registry: Any, ref: Any, digest: str, manifest: bytes) -> Signature | str:
    """The signature whose manifest is `digest`, verified over `manifest`, or why it is bad."""
    # lazy: core.signatures takes ~22 ms to import, only this path needs it
    from plugman.core import signatures
    from plugman.core.oci import client, referrers
    from plugman.core.oci.connections import RegistryError

    try:
        found = referrers.raw(registry, ref, digest)
        if found is None:
            return f"its manifest {digest} is missing from the registry"
        data: Any = json.loads(found[0])
        subject = (data or {}).get("subject") or {}
        if subject.get("digest") != ref.digest:
            return "its manifest does not name the artifact as its subject"
        layers = [d for d in data.get("layers") or [] if d.get("mediaType") == signatures.BUNDLE]
        key = (data.get("annotations") or {}).get(PUBLIC_KEY)
        if len(layers) != 1 or not isinstance(key, str):
            return "it has no bundle or no public key"
        if not isinstance(layers[0].get("size"), int) or layers[0]["size"] > signatures.MAX_BUNDLE:
            return "its bundle is too large"
        out = io.BytesIO()
        client.blob(registry, ref, layers[0], out)
    except RegistryError as exc:
        return exc.message
    except (ValueError, AttributeError, TypeError):
        return "its manifest cannot be read"
    verified = signatures.verify(out.getvalue(), manifest, key.encode())
    if isinstance(verified, str):
        return verified
    return Signature(verified.signer, out.getvalue(), verified.public_key)


def admitted(
    paths: Paths, source: PluginSource, pin: str | None, what: str, expected: str | None = None
) -> Admitted:
    """The signer of a fetched plugin (None: unsigned) and all its signers, its signatures
    verified (an OCI artifact's) and the signature policies met (plugman.config.signers);
    PlugmanError when either fails.
    `expected`: the signer to prefer when the artifact has several (the one the lock pinned)."""
    # lazy: config.signers takes ~5 ms to import, only this path needs it
    from plugman.config import signers

    found: list[Signature] = []
    location, manifest = source.location, b""
    if source.kind == "oci" and pin:
        location = str(parse(location).following())
        manifest, found = signatures_of(paths, location, pin)
    signer = choose([s.signer for s in found], expected)
    reason = signers.refusal(paths, location, signer)
    if reason is not None and signer != expected:
        # another of its signatures may satisfy the policy
        signer = next(
            (s.signer for s in found if not signers.refusal(paths, location, s.signer)), signer
        )
        reason = signers.refusal(paths, location, signer)
    if reason is not None:
        raise PlugmanError(
            f"{what} is refused by policy: {reason}; nothing was installed",
            hint="ask the publisher to sign it with a key the rule names (or whoever keeps "
            "that file)",
        )
    if found and pin:
        _keep(paths, pin, manifest, found)
    released = created(manifest) if found else None
    return Admitted(signer, tuple(s.signer for s in found), released)


def created(manifest: bytes) -> str | None:
    """The `org.opencontainers.image.created` annotation of a manifest's bytes (RFC 3339, as
    `plugman publish` writes it), or None."""
    try:
        data: Any = json.loads(manifest)
    except ValueError:
        return None
    notes = data.get("annotations") if isinstance(data, dict) else None
    value = notes.get(CREATED) if isinstance(notes, dict) else None
    return value if isinstance(value, str) and value else None


def choose(found: list[str], expected: str | None) -> str | None:
    """The signer to record among an artifact's: the expected one, else the latest."""
    if expected in found:
        return expected
    return found[-1] if found else None


def pinned(was: str | None, admitted: Admitted) -> str | None:
    """The signer to record: the one pinned before when it still signs, else the admitted."""
    return was if was is not None and was in admitted.signers else admitted.signer


def changed(plugin_id: str, was: str | None, now: str | None) -> PlugmanError | None:
    """The refusal of an update whose signer changed (or whose signature is gone), else None
    (the same signer, or a first one: recorded)."""
    if was is None or was == now:
        return None
    new = f"signed by {now}" if now else "not signed"
    return PlugmanError(
        f"{plugin_id} was signed by {was}, but its new version is {new}; nothing was changed",
        hint="if you trust the new signer, run: plugman update --allow-signer-change " + plugin_id,
    )


def _evidence(paths: Paths, digest: str) -> Path:
    return paths.data_dir / "signatures" / (digest.replace(":", "-") + ".json")


def _keep(paths: Paths, digest: str, manifest: bytes, found: list[Signature]) -> None:
    """What `recheck` needs offline, beside the store (content-addressed: rewriting it is
    harmless, so it is written at once rather than in the command's transaction)."""
    data = {
        "manifest": base64.b64encode(manifest).decode(),
        "signatures": [
            {"bundle": s.bundle.decode(), "publicKey": s.public_key.decode()} for s in found
        ],
    }
    atomic_write(_evidence(paths, digest), json.dumps(data, indent=1).encode())


def recheck(paths: Paths, entry: InstalledPlugin) -> str | None:
    """Offline: None when the installed plugin's kept signature verifies over its manifest
    and its signer is the one the record pins (or it is unsigned and pins none); else the
    problem, in one line."""
    # lazy: core.signatures takes ~22 ms to import, only this path needs it
    from plugman.core import signatures
    from plugman.core.oci.client import digest_of

    if entry.signer is None:
        return None
    digest = str(entry.source.get("digest") or "")
    path = _evidence(paths, digest)
    try:
        data = json.loads(path.read_bytes())
        manifest = base64.b64decode(data["manifest"], validate=True)
        kept = [(s["bundle"].encode(), s["publicKey"].encode()) for s in data["signatures"]]
    except FileNotFoundError:
        return f"its signature by {entry.signer} was not kept ({path} is missing)"
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return f"the kept signature {path} cannot be read"
    if not digest or digest_of(manifest) != digest:
        return f"the kept manifest is not the one installed ({digest or 'no digest'})"
    signers = []
    for bundle, key in kept:
        verified = signatures.verify(bundle, manifest, key)
        if isinstance(verified, str):
            return f"its kept signature does not verify: {verified}"
        signers.append(verified.signer)
    if entry.signer not in signers:
        return f"it is pinned to signer {entry.signer}, but signed by {', '.join(signers)}"
    return None

"""Plugin artifacts in an OCI registry: `push`, `resolve` a tag, `pull` (manifest and layer).

An artifact follows the OCI 1.1 guidance: the empty config (`application/vnd.oci.empty.v1+json`,
`{}`), one layer (the plugin folder as a .tar.gz, `application/vnd.plugman.plugin.v1.tar+gzip`),
and a manifest with `artifactType` `application/vnd.plugman.plugin.v1` whose annotations give
the plugin's name, version and description. Every digest is checked: the manifest's bytes
against the digest asked for (or the one the registry states), every blob while it streams,
capped at the size its descriptor gives, before the caller unpacks anything.
"""

from __future__ import annotations

import hashlib
import http.client
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import IO, Any, NamedTuple

from plugman.core.errors import UsageError
from plugman.core.oci import credentials
from plugman.core.oci.connections import RegistryError
from plugman.core.oci.reference import DIGEST, Reference, parse
from plugman.core.oci.transport import Client, read_small
from plugman.core.paths import Paths

MANIFEST = "application/vnd.oci.image.manifest.v1+json"
INDEXES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)
EMPTY = "application/vnd.oci.empty.v1+json"
EMPTY_DATA = b"{}"
ARTIFACT = "application/vnd.plugman.plugin.v1"
LAYER = "application/vnd.plugman.plugin.v1.tar+gzip"
TITLE, VERSION, DESCRIPTION, CREATED = (
    f"org.opencontainers.image.{key}" for key in ("title", "version", "description", "created")
)
MAX_MANIFEST = 4 * 1024 * 1024
MAX_BLOB = 256 * 1024 * 1024
CHUNK = 1024 * 1024
Progress = Callable[[str], None] | None


class Pulled(NamedTuple):
    ref: Reference  # pinned to the manifest's digest
    digest: str  # the manifest's digest: the pin
    annotations: dict[str, str]
    size: int  # of the layer


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@contextmanager
def connect(
    ref: Reference, paths: Paths | None = None, env: Mapping[str, str] | None = None
) -> Iterator[Client]:
    """A client for `ref`'s registry, with the credentials `credentials.find` gives."""
    where = paths or Paths.from_env(env)
    client = Client(ref, lambda: credentials.find(where, ref.registry, env))
    try:
        yield client
    finally:
        client.close()


def push(
    ref: str,
    data: bytes,
    *,
    name: str,
    version: str,
    description: str = "",
    created: str | None = None,
    paths: Paths | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """Push `data` (a plugin folder as .tar.gz) to the tag `ref` names; the manifest digest.
    `created`: the manifest's creation time (RFC 3339), which a signature then covers."""
    target = parse(ref)
    if target.digest is not None:
        raise UsageError(
            f"cannot push to {ref!r}: a digest names content, not a place to push to",
            hint="push to a tag: oci://REGISTRY/REPOSITORY:TAG",
        )
    annotations = {TITLE: name, VERSION: version}
    if description:
        annotations[DESCRIPTION] = description
    if created:
        annotations[CREATED] = created
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST,
        "artifactType": ARTIFACT,
        "config": _descriptor(EMPTY, EMPTY_DATA),
        "layers": [_descriptor(LAYER, data)],
        "annotations": annotations,
    }
    body = json.dumps(manifest, separators=(",", ":")).encode()
    with connect(target, paths, env) as client:
        for blob in (EMPTY_DATA, data):
            upload(client, target, blob)
        response = client.request(
            "PUT",
            _path(target, "manifests", target.reference),
            headers={"Content-Type": MANIFEST},
            body=body,
        )
        _expect(response, (201,), f"pushing the manifest of {target}")
    stated = response.getheader("Docker-Content-Digest")
    digest = digest_of(body)
    if stated and stated != digest:
        raise RegistryError(f"{target.registry} stored the manifest as {stated}, not {digest}")
    return digest


def _descriptor(media_type: str, data: bytes) -> dict[str, Any]:
    return {"mediaType": media_type, "digest": digest_of(data), "size": len(data)}


def upload(client: Client, ref: Reference, blob: bytes) -> None:
    digest = digest_of(blob)
    head = client.request("HEAD", _path(ref, "blobs", digest))
    read_small(head, "a HEAD response")
    if head.status == 200:
        return  # already there: registries share blobs by digest
    started = client.request("POST", _path(ref, "blobs", "uploads/"))
    _expect(started, (202,), f"starting an upload to {ref.registry}/{ref.repository}")
    location = started.getheader("Location", "")
    if not location:
        raise RegistryError(f"{ref.registry} started an upload without saying where to put it")
    url = location + ("&" if "?" in location else "?") + f"digest={digest}"
    headers = {"Content-Type": "application/octet-stream"}
    done = client.request("PUT", url, headers=headers, body=blob)
    _expect(done, (201,), f"uploading blob {digest} to {ref.registry}/{ref.repository}")


def resolve(client: Client, ref: Reference) -> str:
    """The digest of the manifest the tag (or digest) of `ref` names now."""
    if ref.digest is not None:
        return ref.digest
    response = client.request(
        "HEAD", _path(ref, "manifests", ref.reference), headers={"Accept": MANIFEST}
    )
    read_small(response, "a HEAD response")
    if response.status == 404:
        raise _missing(ref)
    stated = response.getheader("Docker-Content-Digest", "")
    if response.status == 200 and DIGEST.match(stated):
        return stated
    return manifest(client, ref)[0]


def current(client: Client, ref: Reference) -> str | None:
    """The digest of the manifest the tag of `ref` names now, or None when it names none."""
    accept = ", ".join((MANIFEST, *INDEXES))
    response = client.request(
        "HEAD", _path(ref, "manifests", ref.reference), headers={"Accept": accept}
    )
    read_small(response, "a HEAD response")
    if response.status == 404:
        return None
    stated = response.getheader("Docker-Content-Digest", "")
    if response.status == 200 and DIGEST.match(stated):
        return stated
    _expect(response, (200,), f"reading the manifest of {ref}")
    got = client.request("GET", _path(ref, "manifests", ref.reference), headers={"Accept": accept})
    return digest_of(_expect(got, (200,), f"reading the manifest of {ref}", cap=MAX_MANIFEST))


def manifest(client: Client, ref: Reference) -> tuple[str, dict[str, Any]]:
    """The manifest `ref` names, its bytes checked against the digest: (digest, manifest)."""
    accept = ", ".join((MANIFEST, *INDEXES))
    response = client.request(
        "GET", _path(ref, "manifests", ref.reference), headers={"Accept": accept}
    )
    if response.status == 404:
        read_small(response, "an error")
        raise _missing(ref)
    data = _expect(response, (200,), f"reading the manifest of {ref}", cap=MAX_MANIFEST)
    digest = digest_of(data)
    expected = ref.digest or response.getheader("Docker-Content-Digest") or digest
    if digest != expected:
        raise RegistryError(
            f"the manifest of {ref} does not match its digest: expected {expected}, got {digest}",
            where=str(ref),
            hint="the registry's copy is damaged or was tampered with; nothing was installed",
        )
    return digest, _checked(ref, data)


def _checked(ref: Reference, data: bytes) -> dict[str, Any]:
    try:
        found: Any = json.loads(data)
    except ValueError:
        found = None
    if not isinstance(found, dict) or found.get("schemaVersion") != 2:
        raise RegistryError(f"the manifest of {ref} is not an OCI image manifest")
    kind = found.get("mediaType")
    if kind in INDEXES:
        raise RegistryError(
            f"{ref} is an image index, not a plugin artifact",
            hint="push the plugin with plugman (one layer, artifactType " + ARTIFACT + ")",
        )
    config = found["config"] if isinstance(found.get("config"), dict) else {}
    if ARTIFACT not in (found.get("artifactType"), config.get("mediaType")):
        shown = found.get("artifactType") or config.get("mediaType") or "none"
        raise RegistryError(
            f"{ref} is not a plugman plugin artifact (its artifact type is {shown})",
            hint=f"a plugin artifact has artifactType {ARTIFACT}; check the reference",
        )
    return found


def layer(ref: Reference, found: dict[str, Any]) -> dict[str, Any]:
    """The one plugin layer of a checked manifest, its descriptor checked."""
    layers = found.get("layers")
    ours = (
        [d for d in layers if isinstance(d, dict) and d.get("mediaType") == LAYER]
        if (isinstance(layers, list))
        else []
    )
    if len(ours) != 1:
        raise RegistryError(f"{ref} has {len(ours)} layers of type {LAYER}; plugman needs one")
    size, digest = ours[0].get("size"), ours[0].get("digest")
    if not isinstance(digest, str) or not DIGEST.match(digest):
        raise RegistryError(f"the layer of {ref} has digest {digest!r}; plugman takes sha256")
    if not isinstance(size, int) or not 0 <= size <= MAX_BLOB:
        raise RegistryError(f"the layer of {ref} has size {size!r} (at most 256 MiB is taken)")
    return ours[0]


def blob(client: Client, ref: Reference, descriptor: dict[str, Any], out: IO[bytes]) -> None:
    """Stream a blob into `out`, its size and sha256 checked against `descriptor`."""
    digest, size = str(descriptor["digest"]), int(descriptor["size"])
    response = client.request("GET", _path(ref, "blobs", digest))
    if response.status != 200:
        _expect(response, (200,), f"downloading blob {digest} of {ref}")
    hasher, total = hashlib.sha256(), 0
    try:
        while chunk := response.read(min(CHUNK, size - total + 1)):
            total += len(chunk)
            if total > size:
                raise _mismatch(ref, digest, f"it is larger than its {size} bytes")
            hasher.update(chunk)
            out.write(chunk)
    except BaseException:
        client.close()  # what is left unread makes the connection unusable
        raise
    got = "sha256:" + hasher.hexdigest()
    if total != size or got != digest:
        raise _mismatch(ref, digest, f"got {total} bytes with digest {got}")


def pull(client: Client, ref: Reference, out: IO[bytes], progress: Progress = None) -> Pulled:
    """The plugin layer of `ref` into `out`, every digest checked; what was pulled."""
    if progress:
        progress(f"pulling {ref}")
    digest, found = manifest(client, ref)
    descriptor = layer(ref, found)
    blob(client, ref, descriptor, out)
    notes = found.get("annotations")
    annotations = {str(k): str(v) for k, v in notes.items()} if isinstance(notes, dict) else {}
    return Pulled(ref.pinned(digest), digest, annotations, int(descriptor["size"]))


def _mismatch(ref: Reference, digest: str, why: str) -> RegistryError:
    return RegistryError(
        f"blob {digest} does not match its digest: {why}",
        where=str(ref),
        hint="the registry's copy is damaged or was tampered with; nothing was installed",
    )


def _missing(ref: Reference) -> RegistryError:
    return RegistryError(
        f"not found in {ref.registry} (no such repository, tag or digest)",
        where=str(ref),
        hint="check the repository, tag and digest (and that the push went through)",
    )


def _path(ref: Reference, kind: str, name: str) -> str:
    return f"/v2/{ref.repository}/{kind}/{name}"


def _expect(
    response: http.client.HTTPResponse, ok: tuple[int, ...], what: str, cap: int = 64 * 1024
) -> bytes:
    data = read_small(response, what, cap)
    if response.status in ok:
        return data
    raise RegistryError(
        f"{what}: HTTP {response.status} {response.reason}{_errors(data)}",
        hint="check the reference and your access to the repository",
    )


def _errors(data: bytes) -> str:
    """The registry's own error codes and messages, if it gave any."""
    try:
        found: Any = json.loads(data)
    except ValueError:
        return ""
    errors = found.get("errors") if isinstance(found, dict) else None
    if not isinstance(errors, list):
        return ""
    texts = [f"{e.get('code', '')}: {e.get('message', '')}" for e in errors if isinstance(e, dict)]
    return f" ({'; '.join(texts)})" if texts else ""

"""OCI 1.1 referrers: an artifact attached to a manifest (its `subject`), and finding them.

`attach` does what `@sigstore/oci` (sigstore-js's `attachArtifactToImage`) does: it uploads
the artifact as the one layer of an image manifest whose `artifactType` (and layer media type)
is the artifact's, with the empty config and `subject` = the descriptor of the manifest it
refers to, pushed by digest. A registry that answers with an `OCI-Subject` header keeps the
referrers list itself (the referrers API); for one that does not (CNCF distribution 2.8), the
manifest is added to the image index at the tag `sha256-<hex>` of the subject (the referrers
tag schema), which is updated, never overwritten. `referrers` reads the API, or that tag when
the registry has no API.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from plugman.core.oci.client import (
    EMPTY,
    EMPTY_DATA,
    INDEXES,
    MANIFEST,
    MAX_MANIFEST,
    _expect,
    _path,
    digest_of,
    upload,
)
from plugman.core.oci.connections import RegistryError
from plugman.core.oci.reference import Reference
from plugman.core.oci.transport import Client, read_small

INDEX = INDEXES[0]


def tag_of(digest: str) -> str:
    """The referrers tag schema's tag for a subject: `sha256-<hex>`."""
    return digest.replace(":", "-")


def raw(client: Client, ref: Reference, reference: str) -> tuple[bytes, str] | None:
    """The bytes and media type of the manifest (or index) `reference` names in `ref`'s
    repository, checked against it when it is a digest; None when there is none."""
    accept = ", ".join((MANIFEST, *INDEXES))
    response = client.request("GET", _path(ref, "manifests", reference), headers={"Accept": accept})
    if response.status == 404:
        read_small(response, "an error")
        return None
    data = _expect(response, (200,), f"reading manifest {reference} of {ref}", cap=MAX_MANIFEST)
    if reference.startswith("sha256:") and digest_of(data) != reference:
        raise RegistryError(
            f"manifest {reference} of {ref.registry}/{ref.repository} does not match its digest",
            hint="the registry's copy is damaged or was tampered with; nothing was installed",
        )
    kind = response.getheader("Content-Type", "") or str(_json(data).get("mediaType", ""))
    return data, kind


def attach(
    client: Client,
    ref: Reference,
    subject: str,
    artifact_type: str,
    blob: bytes,
    annotations: dict[str, str],
) -> str:
    """Attach `blob` (of `artifact_type`) to the manifest `subject` of `ref`'s repository; the
    digest of the referrer's manifest."""
    found = raw(client, ref, subject)
    if found is None:
        raise RegistryError(
            f"{ref.registry}/{ref.repository}@{subject} is not there to attach a signature to",
            hint="check the reference (and that the artifact was pushed)",
        )
    subject_data, subject_type = found
    for data in (blob, EMPTY_DATA):
        upload(client, ref, data)
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST,
        "artifactType": artifact_type,
        "config": _descriptor(EMPTY, EMPTY_DATA),
        "layers": [_descriptor(artifact_type, blob)],
        "subject": _descriptor(subject_type or MANIFEST, subject_data),
        "annotations": annotations,
    }
    body = json.dumps(manifest, separators=(",", ":")).encode()
    digest = digest_of(body)
    response = client.request(
        "PUT", _path(ref, "manifests", digest), headers={"Content-Type": MANIFEST}, body=body
    )
    _expect(response, (201,), f"pushing the signature of {ref.registry}/{ref.repository}")
    if not response.getheader("OCI-Subject"):  # no referrers API: the tag schema
        entry = _descriptor(MANIFEST, body) | {
            "artifactType": artifact_type,
            "annotations": annotations,
        }
        _add_to_tag(client, ref, subject, entry)
    return digest


def _add_to_tag(client: Client, ref: Reference, subject: str, entry: dict[str, Any]) -> None:
    tag = tag_of(subject)
    found = raw(client, ref, tag)
    index: dict[str, Any] = {"schemaVersion": 2, "mediaType": INDEX, "manifests": []}
    if found is not None:
        index = _json(found[0])
        if index.get("mediaType", found[1]) != INDEX or not isinstance(
            index.get("manifests"), list
        ):
            raise RegistryError(
                f"the tag {tag} of {ref.registry}/{ref.repository} is not a referrers index",
                hint="it is the referrers tag of the artifact; remove what was pushed there",
            )
    if any(m.get("digest") == entry["digest"] for m in index["manifests"]):
        return
    index["manifests"].append(entry)
    body = json.dumps(index, separators=(",", ":")).encode()
    response = client.request(
        "PUT", _path(ref, "manifests", tag), headers={"Content-Type": INDEX}, body=body
    )
    _expect(response, (201,), f"updating the referrers tag {tag} of {ref.repository}")


def referrers(
    client: Client, ref: Reference, subject: str, artifact_type: str
) -> list[dict[str, Any]]:
    """The descriptors of the manifests of `artifact_type` that refer to `subject`, from the
    referrers API or, where the registry has none, the referrers tag."""
    response = client.request(
        "GET",
        _path(ref, "referrers", subject) + f"?artifactType={quote(artifact_type, safe='')}",
        headers={"Accept": INDEX},
    )
    data = read_small(response, "a referrers list", MAX_MANIFEST)
    index = _json(data) if response.status == 200 else {}
    if index.get("mediaType") != INDEX:
        found = raw(client, ref, tag_of(subject))
        index = _json(found[0]) if found is not None else {}
    listed = index.get("manifests")
    return [
        m
        for m in (listed if isinstance(listed, list) else [])
        if isinstance(m, dict) and m.get("artifactType") == artifact_type
    ]


def _descriptor(media_type: str, data: bytes) -> dict[str, Any]:
    return {"mediaType": media_type, "digest": digest_of(data), "size": len(data)}


def _json(data: bytes) -> dict[str, Any]:
    try:
        found: Any = json.loads(data)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}

"""What an SBOM lists: the lock's plugins, each with what its store tree launches
(plugman.plugins.supply_chain.sbom builds it; sbom_cyclonedx and sbom_spdx render it)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import NamedTuple

from plugman.plugins.supply_chain.sbom_servers import RemoteServer, ServerPackage


class LockedPlugin(NamedTuple):
    """One plugin of the lock, with what its store tree launches."""

    id: str  # NAME@MARKETPLACE
    name: str
    marketplace: str
    version: str
    content_hash: str  # sha256:HEX of its tree
    source_type: str  # the lock's source `type`
    location: str  # git URL, owner/repo, OCI reference, npm package, archive URL, folder, command
    pin: str | None  # commit, sha256, OCI digest, npm VERSION#INTEGRITY
    described: str  # the source in a user's words
    purl: str
    vcs_url: str | None  # where its repository is
    download_url: str | None  # where its bytes are (archive URL, oci://REFERENCE)
    download_hashes: tuple[tuple[str, str], ...]  # (SHA-256 | SHA-512, hex) of those bytes
    signer: str | None  # "sha256:<key fingerprint>" or "<issuer> <subject>"; None: unsigned
    launches: tuple[ServerPackage | RemoteServer, ...]


class Inventory(NamedTuple):
    project: str  # the project folder's name
    lock_sha256: str  # hex of plugman.lock's bytes
    created: datetime | None  # SOURCE_DATE_EPOCH, when set
    plugins: tuple[LockedPlugin, ...]

    @property
    def serial(self) -> str:
        """A UUID (RFC 4122 form, version 5) naming this document: the same lock in the same
        project folder gives the same one."""
        name = f"plugman.lock:{self.project}:{self.lock_sha256}"
        return str(uuid.uuid5(uuid.NAMESPACE_URL, name))

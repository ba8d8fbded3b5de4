"""`plugman lock export`: the project's plugman.lock as an inventory for security teams.

`inventory` reads the lock and, for each locked plugin, its tree in the store (the tree the
lock's content hash names; `plugman sync --frozen` puts it there): the plugin's id, version,
source (type and location, with its pin: a commit, an archive's sha256, an OCI digest, an npm
version and integrity), content hash, signer (the lock's `signer`, when the plugin was signed)
and the packages its MCP servers launch (plugman.plugins.supply_chain.sbom_servers). Each plugin
gets a package URL (purl) for its source: `pkg:github`, `pkg:oci` (by digest), `pkg:npm`, else
`pkg:generic` with a `vcs_url` or `download_url` qualifier. `export` renders it as CycloneDX
(plugman.plugins.supply_chain.cyclonedx) or SPDX (plugman.plugins.supply_chain.spdx) JSON.

The document is a function of the lock and the store trees it names: the same lock gives the
same bytes. Its serial number (and SPDX namespace) derive from the lock's SHA-256 and the
project's folder name; it carries a creation time only when SOURCE_DATE_EPOCH sets one (the
reproducible-builds convention): without it CycloneDX has none, and SPDX (which requires one)
says 1970-01-01T00:00:00Z. It never fetches: a locked tree not in the store is an error saying
to run `plugman sync --frozen`. `save` writes a document to a file atomically.
"""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, NamedTuple

from plugman import extensions
from plugman.config import declarations, redact
from plugman.core import progress
from plugman.core.errors import PlugmanError
from plugman.core.fs import atomic_write
from plugman.core.jsonvalue import PluginFields
from plugman.core.paths import Paths
from plugman.core.sources import LockedSource
from plugman.core.state import InstallRecord
from plugman.core.store import Store
from plugman.plugins.catalog import pins
from plugman.plugins.sources import purls
from plugman.plugins.sources.purls import PackageRef
from plugman.plugins.supply_chain import lockfile
from plugman.plugins.supply_chain import spdx as sbom_spdx
from plugman.plugins.supply_chain.lockfile import LockEntry
from plugman.plugins.supply_chain.sbom_model import Inventory, LockedPlugin
from plugman.plugins.supply_chain.sbom_servers import RemoteServer, ServerPackage, packages

Format = Literal["cyclonedx", "spdx"]
FORMATS: tuple[Format, ...] = ("cyclonedx", "spdx")


class Document(NamedTuple):
    """An SBOM made: its bytes and what it lists."""

    form: Format
    data: bytes
    plugins: int
    packages: int  # distinct packages the servers launch
    remote: int  # remote servers
    path: Path | None = None  # where `save` wrote it

    @property
    def spec(self) -> str:
        return SPECS[self.form]


SPECS: dict[Format, str] = {"cyclonedx": "CycloneDX 1.7", "spdx": "SPDX 2.3"}


def export(paths: Paths, form: Format) -> Document:
    """The SBOM of the project's plugman.lock in `form` (JSON)."""
    found = inventory(paths)
    if form == "spdx":
        data = sbom_spdx.render(found)
    else:
        # lazy: plugins.sbom_cyclonedx takes ~53 ms to import, only this path needs it
        from plugman.plugins.supply_chain import cyclonedx as sbom_cyclonedx

        data = sbom_cyclonedx.render(found)
    launched = [item for plugin in found.plugins for item in plugin.launches]
    distinct = {i.purl for i in launched if isinstance(i, ServerPackage)}
    remote = sum(isinstance(i, RemoteServer) for i in launched)
    return Document(form, data, len(found.plugins), len(distinct), remote)


def save(document: Document, path: Path) -> Document:
    """Writes `document` to `path` atomically (all of it or, on any failure, nothing); its
    folder must exist."""
    folder = path.absolute().parent
    if not folder.is_dir():
        raise PlugmanError(
            f"cannot write {path}: there is no folder {folder}",
            hint="create the folder first, or give --output a file in an existing folder",
        )
    if path.is_dir():
        raise PlugmanError(f"cannot write {path}: it is a folder", hint="give --output a file name")
    atomic_write(path, document.data)
    return document._replace(path=path)


def inventory(paths: Paths) -> Inventory:
    """Every plugin plugman.lock pins, with the packages its servers launch; a PlugmanError
    when there is no lock, or a locked tree is not in the store."""
    lock = paths.project_lock
    declarations.check_project_file(paths, lock)  # never read through a link
    try:
        data = lock.read_bytes()
    except FileNotFoundError:
        raise PlugmanError(
            f"there is no plugman.lock in {paths.project_dir}",
            hint="run: plugman lock (it resolves plugman.toml and writes plugman.lock)",
        ) from None
    locked = lockfile.read(lock)
    store = Store(paths.store_dir)
    missing = [p.id for p in locked if not store.path(p.content_hash).is_dir()]
    if missing:
        raise PlugmanError(
            f"{', '.join(missing)}: not installed as plugman.lock pins "
            f"{'it' if len(missing) == 1 else 'them'}, so the servers cannot be read",
            hint="run: plugman sync --frozen (it installs exactly what plugman.lock pins)",
            where=str(lock),
        )
    entries = {k: p.entry for k, p in InstallRecord.load(paths, "project").plugins.items()}
    found = tuple(_plugin(pin, store, entries.get(pin.id)) for pin in locked)
    return Inventory(paths.project_dir.name, hashlib.sha256(data).hexdigest(), _epoch(), found)


def _epoch() -> datetime | None:
    value = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not value:
        return None
    try:
        return datetime.fromtimestamp(int(value), UTC)
    except (ValueError, OverflowError, OSError):
        raise PlugmanError(
            f"SOURCE_DATE_EPOCH is {value!r}, not a number of seconds since 1970",
            hint="set it to a Unix time (e.g. git log -1 --format=%ct), or unset it",
        ) from None


def _plugin(pin: LockEntry, store: Store, entry: PluginFields | None) -> LockedPlugin:
    source = pin.source
    kind = pin.source.kind
    name, version, market = pin.name, pin.version, pin.marketplace
    # lazy: manifest.plugin takes ~8 ms to import, only this path needs it
    from plugman.manifest.plugin import load_as_installed

    plugin = load_as_installed(store.path(pin.content_hash), entry)
    if plugin is None:  # it loaded at install: a store tree changed by hand since
        progress.warn(f"{pin.id}: its tree in the store does not load; its servers are left out")
    # a git URL's password never reaches the document
    said = LockedSource(
        kind, {k: redact.url(v) if v and "://" in v else v for k, v in source.fields.items()}
    )
    found = extensions.found_source_kind(kind)
    location = str(found.from_lock(said).location) if found else str(said.get("url") or "")
    ref = source_ref(said, name, version)
    signer = pin.signer
    return LockedPlugin(
        id=pin.id,
        name=name,
        marketplace=market,
        version=version,
        content_hash=pin.content_hash,
        source_type=kind,
        location=location,
        pin=pins.pin_of(source),
        described=pins.describe(said, market if market != "direct" else None),
        purl=ref.purl,
        vcs_url=ref.vcs_url,
        download_url=ref.download_url,
        download_hashes=ref.download_hashes,
        signer=signer or None,
        launches=tuple(packages(plugin.mcp_servers if plugin else ())),
    )


def source_ref(source: LockedSource, name: str, version: str) -> PackageRef:
    """How the SBOM names a locked source (`source`: a lock entry's, with its `type`): as its
    source kind says (`SourceKind.package_ref`), or, for a kind no installed extension reads,
    by the plugin alone."""
    kind = extensions.found_source_kind(source.kind)
    if kind is None:
        return purls.generic(name, version)
    return kind.package_ref(source, name, version)

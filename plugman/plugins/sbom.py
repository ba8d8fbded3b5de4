"""`plugman lock export`: the project's plugman.lock as an inventory for security teams.

`inventory` reads the lock and, for each locked plugin, its tree in the store (the tree the
lock's content hash names; `plugman sync --frozen` puts it there): the plugin's id, version,
source (type and location, with its pin: a commit, an archive's sha256, an OCI digest, an npm
version and integrity), content hash, signer (the lock's `signer`, when the plugin was signed)
and the packages its MCP servers launch (plugman.plugins.sbom_servers). Each plugin gets a
package URL (purl) for its source: `pkg:github`, `pkg:oci` (by digest), `pkg:npm`, else
`pkg:generic` with a `vcs_url` or `download_url` qualifier. `export` renders it as CycloneDX
(plugman.plugins.sbom_cyclonedx) or SPDX (plugman.plugins.sbom_spdx) JSON.

The document is a function of the lock and the store trees it names: the same lock gives the
same bytes. Its serial number (and SPDX namespace) derive from the lock's SHA-256 and the
project's folder name; it carries a creation time only when SOURCE_DATE_EPOCH sets one (the
reproducible-builds convention): without it CycloneDX has none, and SPDX (which requires one)
says 1970-01-01T00:00:00Z. It never fetches: a locked tree not in the store is an error saying
to run `plugman sync --frozen`. `save` writes a document to a file atomically.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple

from plugman.config import redact
from plugman.core import progress
from plugman.core.errors import PlugmanError
from plugman.core.fs import atomic_write
from plugman.core.paths import Paths
from plugman.core.state import InstallRecord
from plugman.core.store import Store
from plugman.manifest.model import Plugin
from plugman.manifest.reader import Report
from plugman.plugins import lockfile, pins
from plugman.plugins.sbom_servers import RemoteServer, ServerPackage, packages

Format = Literal["cyclonedx", "spdx"]
FORMATS: tuple[Format, ...] = ("cyclonedx", "spdx")


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
        import uuid

        name = f"plugman.lock:{self.project}:{self.lock_sha256}"
        return str(uuid.uuid5(uuid.NAMESPACE_URL, name))


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
        from plugman.plugins import sbom_spdx

        data = sbom_spdx.render(found)
    else:
        from plugman.plugins import sbom_cyclonedx

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
    try:
        data = lock.read_bytes()
    except FileNotFoundError:
        raise PlugmanError(
            f"there is no plugman.lock in {paths.project_dir}",
            hint="run: plugman lock (it resolves plugman.toml and writes plugman.lock)",
        ) from None
    locked = lockfile.read(lock)
    store = Store(paths.store_dir)
    missing = [str(p["id"]) for p in locked if not store.path(str(p["content_hash"])).is_dir()]
    if missing:
        raise PlugmanError(
            f"{', '.join(missing)}: not installed as plugman.lock pins "
            f"{'it' if len(missing) == 1 else 'them'}, so the servers cannot be read",
            hint="run: plugman sync --frozen (it installs exactly what plugman.lock pins)",
            where=str(lock),
        )
    entries = {k: p.entry for k, p in InstallRecord.load(paths, "project").plugins.items()}
    found = tuple(_plugin(pin, store, entries.get(str(pin["id"]))) for pin in locked)
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


def _plugin(pin: dict[str, Any], store: Store, entry: dict[str, Any] | None) -> LockedPlugin:
    source: dict[str, Any] = dict(pin.get("source") or {})
    kind = str(source.get("type"))
    name, version, market = str(pin["name"]), str(pin["version"]), str(pin["marketplace"])
    plugin = _load(store.path(str(pin["content_hash"])), entry)
    if plugin is None:  # it loaded at install: a store tree changed by hand since
        progress.warn(f"{pin['id']}: its tree in the store does not load; its servers are left out")
    field = LOCATIONS.get(kind, "url")
    location = str(source.get(field, ""))
    location = redact.url(location) if "://" in location else location  # a git URL's password
    said = source | {field: location}
    ref = source_ref(kind, name, version, location, source)
    signer = pin.get("signer")
    return LockedPlugin(
        id=str(pin["id"]),
        name=name,
        marketplace=market,
        version=version,
        content_hash=str(pin["content_hash"]),
        source_type=kind,
        location=location,
        pin=pins.pin_of(source),
        described=pins.describe(said, market if market != "direct" else None),
        purl=ref.purl,
        vcs_url=ref.vcs_url,
        download_url=ref.download_url,
        download_hashes=ref.download_hashes,
        signer=str(signer) if signer else None,
        launches=tuple(packages(plugin.mcp_servers if plugin else ())),
    )


def _load(root: Path, fields: dict[str, Any] | None) -> Plugin | None:
    """The plugin at `root` as install loaded it (`fields`: its marketplace entry, if any)."""
    from plugman.manifest import plugin as plugins

    report = Report()
    entry = None
    if fields is not None:
        entry = plugins.Declaration(fields, report.sink(root / ".claude-plugin" / "entry"))
    return plugins.load(root, report, entry, strict=fields is None)


# The lock field holding a source type's location (the rest use `url`).
LOCATIONS = {"github": "repo", "oci": "ref", "npm": "package", "path": "path", "command": "command"}
NPM_REGISTRY = "https://registry.npmjs.org"


class SourceRef(NamedTuple):
    """What names a locked source for an SBOM."""

    purl: str
    vcs_url: str | None = None
    download_url: str | None = None
    download_hashes: tuple[tuple[str, str], ...] = ()


def source_ref(
    kind: str, name: str, version: str, location: str, source: dict[str, Any]
) -> SourceRef:
    """The purl of a locked source, and where its repository or bytes are (with their hash)."""
    from packageurl import PackageURL

    commit = str(source.get("commit") or "") or None
    subpath = str(source.get("path") or "") or None
    match kind:
        case "github":
            owner, _, repo = location.partition("/")
            purl = PackageURL("github", owner, repo, commit, None, subpath)
            return SourceRef(str(purl), vcs_url=f"https://github.com/{location}")
        case "url" | "git-subdir":
            vcs = f"git+{location}" + (f"@{commit}" if commit else "")
            purl = PackageURL("generic", None, name, version, {"vcs_url": vcs}, subpath)
            return SourceRef(str(purl), vcs_url=location)
        case "oci":
            from plugman.core.oci import reference

            ref = reference.parse(location)
            digest = str(source.get("digest") or "") or ref.digest
            where = {"repository_url": f"{ref.registry}/{ref.repository}"}
            where |= {"tag": ref.tag} if ref.tag else {}
            purl = PackageURL("oci", None, ref.repository.rsplit("/", 1)[-1], digest, where)
            return SourceRef(str(purl), None, f"oci://{location}", _sha256(digest))
        case "npm":  # its tarball where npm's registry layout puts it (package-lock's resolved)
            scope, _, short = location.rpartition("/")
            registry, exact = source.get("registry"), str(source.get("version") or "")
            where = {"repository_url": str(registry)} if registry else {}
            purl = PackageURL("npm", scope or None, short, exact or None, where)
            base = str(registry or NPM_REGISTRY).rstrip("/")
            tarball = f"{base}/{location}/-/{short}-{exact}.tgz" if exact else None
            integrity = _integrity(str(source.get("integrity") or ""))
            return SourceRef(str(purl), None, tarball, integrity)
        case "archive":
            sha = str(source.get("sha256") or "")
            where = {"download_url": location} | ({"checksum": f"sha256:{sha}"} if sha else {})
            purl = PackageURL("generic", None, name, version, where)
            return SourceRef(str(purl), None, location, _sha256(sha))
        case _:  # a folder, a command, an extension's kind: named by the plugin only
            return SourceRef(str(PackageURL("generic", None, name, version)))


def _sha256(text: str | None) -> tuple[tuple[str, str], ...]:
    hex_ = (text or "").removeprefix("sha256:")
    return (("SHA-256", hex_),) if len(hex_) == 64 else ()


def _integrity(text: str) -> tuple[tuple[str, str], ...]:
    """An npm integrity (`sha512-BASE64`) as (algorithm, hex)."""
    algorithm, _, encoded = text.partition("-")
    names = {"sha512": "SHA-512", "sha256": "SHA-256"}
    if algorithm not in names:
        return ()
    try:
        return ((names[algorithm], base64.b64decode(encoded, validate=True).hex()),)
    except (binascii.Error, ValueError):
        return ()

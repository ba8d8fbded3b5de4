"""How an SBOM names a locked source (`plugman lock export`): a package URL (purl) and where the
source's repository or bytes are, with their hashes. Each built-in source kind's
`package_ref` calls the function for its kind here; the default, for a folder, a command or an
extension's kind, names the plugin only (`pkg:generic/NAME@VERSION`). `packageurl` (it comes
with cyclonedx-python-lib) is imported only when an SBOM is made.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

LockFields = Mapping[str, str | None]  # a lock entry's source table (a LockedSource)

NPM_REGISTRY = "https://registry.npmjs.org"


class PackageRef(NamedTuple):
    """What names a locked source in an SBOM."""

    purl: str
    vcs_url: str | None = None  # where its repository is
    download_url: str | None = None  # where its bytes are (archive URL, oci://REFERENCE)
    download_hashes: tuple[tuple[str, str], ...] = ()  # (SHA-256 | SHA-512, hex) of those bytes


def generic(name: str, version: str) -> PackageRef:
    # lazy: packageurl not loaded by plugman list --json (+47 ms)
    from packageurl import PackageURL

    return PackageRef(str(PackageURL("generic", None, name, version)))


def github(fields: LockFields) -> PackageRef:
    # lazy: packageurl not loaded by plugman list --json (+47 ms)
    from packageurl import PackageURL

    repo = str(fields.get("repo") or "")
    owner, _, name = repo.partition("/")
    purl = PackageURL("github", owner, name, _text(fields, "commit"), None, _text(fields, "path"))
    return PackageRef(str(purl), vcs_url=f"https://github.com/{repo}")


def git(fields: LockFields, name: str, version: str) -> PackageRef:
    # lazy: packageurl not loaded by plugman list --json (+47 ms)
    from packageurl import PackageURL

    url, commit = str(fields.get("url") or ""), _text(fields, "commit")
    vcs = f"git+{url}" + (f"@{commit}" if commit else "")
    purl = PackageURL("generic", None, name, version, {"vcs_url": vcs}, _text(fields, "path"))
    return PackageRef(str(purl), vcs_url=url)


def oci(fields: LockFields) -> PackageRef:
    # lazy: packageurl not loaded by plugman list --json (+47 ms)
    from packageurl import PackageURL

    # lazy: core.oci.reference not loaded by plugman list --json (+11 ms)
    from plugman.core.oci import reference

    location = str(fields.get("ref") or "")
    ref = reference.parse(location)
    digest = _text(fields, "digest") or ref.digest
    where = {"repository_url": f"{ref.registry}/{ref.repository}"}
    where |= {"tag": ref.tag} if ref.tag else {}
    purl = PackageURL("oci", None, ref.repository.rsplit("/", 1)[-1], digest, where)
    return PackageRef(str(purl), None, f"oci://{location}", _sha256(digest))


def npm(fields: LockFields) -> PackageRef:
    """The package, and its tarball where npm's registry layout puts it (package-lock's
    `resolved`), with its integrity."""
    # lazy: packageurl not loaded by plugman list --json (+47 ms)
    from packageurl import PackageURL

    package = str(fields.get("package") or "")
    scope, _, short = package.rpartition("/")
    registry, exact = _text(fields, "registry"), _text(fields, "version")
    where = {"repository_url": registry} if registry else {}
    purl = PackageURL("npm", scope or None, short, exact, where)
    base = (registry or NPM_REGISTRY).rstrip("/")
    tarball = f"{base}/{package}/-/{short}-{exact}.tgz" if exact else None
    return PackageRef(str(purl), None, tarball, _integrity(_text(fields, "integrity") or ""))


def archive(fields: LockFields, name: str, version: str) -> PackageRef:
    # lazy: packageurl not loaded by plugman list --json (+47 ms)
    from packageurl import PackageURL

    url, sha = str(fields.get("url") or ""), _text(fields, "sha256")
    where = {"download_url": url} | ({"checksum": f"sha256:{sha}"} if sha else {})
    purl = PackageURL("generic", None, name, version, where)
    return PackageRef(str(purl), None, url, _sha256(sha))


def _text(fields: LockFields, key: str) -> str | None:
    return str(fields.get(key) or "") or None


def _sha256(text: str | None) -> tuple[tuple[str, str], ...]:
    hex_ = (text or "").removeprefix("sha256:")
    return (("SHA-256", hex_),) if len(hex_) == 64 else ()


def _integrity(text: str) -> tuple[tuple[str, str], ...]:
    """An npm integrity (`sha512-BASE64`) as (algorithm, hex)."""
    # lazy: base64, binascii not loaded by plugman list --json (+1 ms)
    import base64
    import binascii

    algorithm, _, encoded = text.partition("-")
    names = {"sha512": "SHA-512", "sha256": "SHA-256"}
    if algorithm not in names:
        return ()
    try:
        return ((names[algorithm], base64.b64decode(encoded, validate=True).hex()),)
    except (binascii.Error, ValueError):
        return ()

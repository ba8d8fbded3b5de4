"""`npm` sources: a package from an npm registry, fetched without npm.

As Claude Code's marketplace entries spell it: `{"source": "npm", "package": "@scope/name",
"version": "^1.2", "registry": "https://…"}`. plugman reads the registry's packument (the
abbreviated one), picks a version as npm does (the `latest` dist-tag when it satisfies the
range, else the highest version that does; a dist-tag name picks that tag; pre-releases only
when the range names one), downloads `dist.tarball` with the archive size cap, checks it
against `dist.integrity` (SRI: the strongest of sha512, sha384, sha256; `dist.shasum`, sha1,
only when the registry gives no integrity, with a warning) before anything is extracted, and
extracts it with the same hand-written extractor as archives. It never runs npm, so lifecycle
scripts never run and dependencies are not installed (Claude Code runs `npm install`, scripts
enabled; a warning says what is skipped).

The pin is `VERSION#INTEGRITY` (sha512 SRI of the tarball actually checked): the lock records
the package, the exact version, that integrity and a non-default registry, and a source read
back from the lock fetches exactly that version and refuses a tarball with another digest.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from packaging.version import InvalidVersion, Version

from plugman.core import progress as notes
from plugman.core import versions
from plugman.core.download import check_url, download, read
from plugman.core.errors import FetchError, PlugmanError
from plugman.core.sources import LockedSource
from plugman.manifest.model import PluginSource
from plugman.plugins.sources.common import plugin_root, scratch
from plugman.plugins.sources.extract import extract
from plugman.plugins.sources.integrity import verify
from plugman.plugins.sources.kind import Followed
from plugman.plugins.sources.npmrc import credentials

DEFAULT_REGISTRY = "https://registry.npmjs.org"
ABBREVIATED = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8"
NAME = re.compile(r"^(?:@[A-Za-z0-9~-][A-Za-z0-9._~-]*/)?[A-Za-z0-9~-][A-Za-z0-9._~-]*$")
TAG = re.compile(r"^[A-Za-z][A-Za-z0-9._-]*$")
SCRIPTS = ("preinstall", "install", "postinstall", "prepare")


def fetch_npm(
    source: PluginSource, dest: Path, progress: Callable[[str], None] | None = None
) -> tuple[Path, str]:
    """Download, verify and extract the package into `dest`; the plugin root and the pin."""
    package, registry = _package(source.location), source.registry or DEFAULT_REGISTRY
    check_url(registry, local=False, what="npm registry")
    packument = _packument(registry, package)
    version = _exact(package, packument, source.version) if source.sha else None
    version = version or choose(package, packument, source.version)
    dist = _dist(package, version, packument)
    tarball = _text(dist, "tarball", f"{package}@{version}")
    check_url(tarball, local=False, what="npm tarball")
    with scratch(dest, ".tgz") as temporary:
        if progress:
            progress(f"downloading {package}@{version} from {tarball}")
        try:
            download(tarball, temporary, secret=credentials(tarball, os.environ))
        except FetchError as exc:
            if "HTTP 401" not in exc.message and "HTTP 403" not in exc.message:
                raise
            host = f"//{urlsplit(tarball).netloc}/"
            raise FetchError(
                exc.message, hint=f"give it a token in ~/.npmrc: {host}:_authToken=${{NPM_TOKEN}}"
            ) from None
        integrity = verify(temporary, f"{package}@{version}", dist, source.sha)
        if progress:
            progress("extracting")
        extract(temporary, dest)
    root = plugin_root(dest, f"npm package {package}@{version}")
    _skipped(root, f"{package}@{version}")
    return root, f"{version}#{integrity}"


def _package(text: str) -> str:
    name = text.strip()
    if len(name) > 214 or not NAME.match(name):
        raise FetchError(
            f"npm source package {text!r} is not an npm package name",
            hint="give a registry package name such as 'name' or '@scope/name' (plugman does "
            "not install git URLs, tarball URLs or folders through npm sources)",
        )
    return name


def _packument(registry: str, package: str) -> dict[str, Any]:
    url = f"{registry.rstrip('/')}/{quote(package, safe='@')}"
    try:
        body = read(url, accept=ABBREVIATED, secret=credentials(url, os.environ))
    except FetchError as exc:
        found = "HTTP 404" in exc.message
        refused = "HTTP 401" in exc.message or "HTTP 403" in exc.message
        host = f"//{urlsplit(registry).netloc}/"
        raise FetchError(
            f"npm package {package!r} is not in the registry {registry}"
            if found
            else f"cannot read npm package {package!r} from {registry}: {exc.message}",
            hint="check the package name and the marketplace entry's 'registry'"
            if found
            else f"give the registry a token in ~/.npmrc: {host}:_authToken=${{NPM_TOKEN}}"
            if refused
            else exc.hint,
        ) from None
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise FetchError(
            f"the registry's answer for npm package {package!r} is not JSON: {exc}",
            where=url,
            hint="check that 'registry' is an npm registry URL",
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("versions"), dict):
        raise FetchError(
            f"the registry's answer for npm package {package!r} has no 'versions' object",
            where=url,
            hint="check that 'registry' is an npm registry URL",
        )
    return data


def choose(package: str, packument: dict[str, Any], wanted: str | None) -> str:
    """The version npm would pick for `wanted` (a range, an exact version, a dist-tag or
    nothing); FetchError naming what the registry has when none fits."""
    known = [v for v in packument["versions"] if isinstance(v, str)]
    tags = packument.get("dist-tags")
    tags = tags if isinstance(tags, dict) else {}
    text = (wanted or "").strip()
    if text and text != "latest" and TAG.match(text) and text in tags:
        return _tagged(package, tags[text], known, text)
    text = "" if text == "latest" else text
    try:
        latest = tags.get("latest")
        if isinstance(latest, str) and latest in known and versions.satisfies(latest, text):
            return latest
        fits = [v for v in known if _offered(v, text) and versions.satisfies(v, text)]
    except PlugmanError as exc:
        raise FetchError(
            f"npm package {package!r}: version range {wanted!r} cannot be read: {exc.message}",
            hint=exc.hint or "use a semver range such as ^1.2 or ~1.2.3",
        ) from None
    if not fits:
        newest = max((v for v in known if _offered(v, "")), key=_order, default=None)
        has = f"; its newest version is {newest}" if newest else "; it has no usable version"
        raise FetchError(
            f"no version of npm package {package!r} satisfies {wanted!r}{has}",
            hint="change the 'version' range of the marketplace entry, or ask the publisher "
            "to publish a matching version",
        )
    return max(fits, key=_order)


def _tagged(package: str, version: Any, known: list[str], tag: str) -> str:
    if not isinstance(version, str) or version not in known:
        raise FetchError(
            f"npm package {package!r}: dist-tag {tag!r} names no published version",
            hint="ask the publisher to fix the tag, or give a version range",
        )
    return version


def _offered(version: str, wanted: str) -> bool:
    """A pre-release is a candidate only when the range itself names one (as npm does)."""
    return "-" not in version or "-" in wanted


def _order(version: str) -> tuple[int, Any]:
    try:
        return (1, Version(version))
    except InvalidVersion:
        return (0, version)


def _exact(package: str, packument: dict[str, Any], version: str | None) -> str:
    """The locked version itself: it must still be published."""
    if not version or version not in packument["versions"]:
        raise FetchError(
            f"npm package {package!r} no longer offers version {version!r}, which "
            "plugman.lock pins",
            hint="run: plugman lock (or plugman sync without --frozen) to pin another",
        )
    return version


def _dist(package: str, version: str, packument: dict[str, Any]) -> dict[str, Any]:
    manifest = packument["versions"].get(version)
    dist = manifest.get("dist") if isinstance(manifest, dict) else None
    if not isinstance(dist, dict):
        raise FetchError(
            f"the registry gives no 'dist' for npm package {package}@{version}",
            hint="the registry's metadata is broken; ask its operator",
        )
    return dist


def _text(dist: dict[str, Any], key: str, what: str) -> str:
    value = dist.get(key)
    if not isinstance(value, str) or not value:
        raise FetchError(
            f"the registry gives no dist.{key} for npm package {what}",
            hint="the registry's metadata is broken; ask its operator",
        )
    return value


def _skipped(root: Path, what: str) -> None:
    """Warn about what `npm install` would have done and plugman does not."""
    try:
        manifest = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(manifest, dict):
        return
    deps = manifest.get("dependencies")
    if isinstance(deps, dict) and deps and not (root / "node_modules").is_dir():
        notes.warn(
            f"npm package {what} declares {len(deps)} "
            f"dependenc{'y' if len(deps) == 1 else 'ies'} ({', '.join(sorted(deps)[:5])}"
            f"{', …' if len(deps) > 5 else ''}); plugman does not run npm and installs no "
            "dependencies"
        )
    scripts = manifest.get("scripts")
    ran = [s for s in SCRIPTS if isinstance(scripts, dict) and s in scripts]
    if ran:
        notes.warn(f"npm package {what}: lifecycle scripts not run ({', '.join(ran)})")


def lock_fields(source: PluginSource, pin: str | None) -> dict[str, str]:
    """What the lock records of an npm source: package, exact version, integrity, registry
    (with no pin, as a catalog lists it: the entry's range or dist-tag, if any)."""
    found = {"package": source.location}
    if pin is not None:
        version, _, integrity = pin.partition("#")
        found |= {"version": version, "integrity": integrity}
    elif source.version:
        found["version"] = source.version
    if source.registry:
        found["registry"] = source.registry
    return found


def from_lock(found: LockedSource) -> PluginSource:
    """The source that fetches exactly the locked version and checks its integrity."""
    return PluginSource(
        "npm",
        str(found.get("package")),
        sha=found.get("integrity") or None,
        version=str(found.get("version")),
        registry=found.get("registry") or None,
    )


def follow(found: LockedSource) -> Followed | None:
    """The version a dist-tag (`version` = `latest`, `beta`, …: a source as a catalog lists
    it) names now, with its integrity, and the source pinned to it; None for an exact version
    or a range (a locked npm source records the exact version: it follows no tag)."""
    wanted = (found.get("version") or "latest").strip()
    if not TAG.match(wanted):
        return None
    package = _package(str(found.get("package")))
    registry = found.get("registry") or DEFAULT_REGISTRY
    check_url(registry, local=False, what="npm registry")
    packument = _packument(registry, package)
    version = choose(package, packument, wanted)
    said = _dist(package, version, packument).get("integrity")
    integrity = said if isinstance(said, str) else ""  # none: checked by its shasum at fetch
    pinned = PluginSource(
        "npm", package, sha=integrity or None, version=version, registry=found.get("registry")
    )
    return Followed(pinned, f"{version}#{integrity}")

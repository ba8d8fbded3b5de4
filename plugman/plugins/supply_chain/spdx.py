"""The inventory of plugman.lock (plugman.plugins.supply_chain.sbom) as an SPDX 2.3 JSON document,
written from a typed model here (the test suite validates it with spdx-tools, SPDX's own library,
which is not a dependency: see ARCHITECTURE.md).

The project is the package the document describes; it DEPENDS_ON each locked plugin (a package
with its purl, its tree's SHA-256 as checksum, its download location when that is a URL or a
VCS location SPDX accepts, else NOASSERTION, and a comment saying its source and pin), which
DEPENDS_ON the packages its MCP servers launch (one package per purl) and the remote servers it
reaches (a package of purpose OTHER naming the endpoint). A signer is an annotation
`plugman:signer <signer>`. SPDX requires a creation time: SOURCE_DATE_EPOCH when set, else
1970-01-01T00:00:00Z, so the same lock gives the same bytes.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from plugman import __version__
from plugman.plugins.supply_chain.sbom_model import Inventory, LockedPlugin
from plugman.plugins.supply_chain.sbom_servers import RemoteServer, ServerPackage

TOOL = f"Tool: plugman-{__version__}"
EPOCH = "1970-01-01T00:00:00Z"
# What SPDX 2.3 takes as a download location: a URL, or a VCS location `git+https://…`.
DOWNLOADABLE = re.compile(r"^(?:git\+)?(?:https?|ssh)://[^\s]+$")
PURPOSES = {"npm": "LIBRARY", "pypi": "LIBRARY", "docker": "CONTAINER"}


class Package(NamedTuple):
    spdx_id: str
    name: str
    version: str | None = None
    download: str = "NOASSERTION"
    purpose: str = "LIBRARY"
    sha256: str | None = None  # hex
    purl: str | None = None
    endpoint: str | None = None  # a remote server's URL
    comment: str | None = None
    signer: str | None = None

    def to_json(self, created: str) -> dict[str, Any]:
        doc: dict[str, Any] = {"SPDXID": self.spdx_id, "name": self.name}
        doc |= {"versionInfo": self.version} if self.version else {}
        doc |= {"downloadLocation": self.download, "filesAnalyzed": False}
        doc["primaryPackagePurpose"] = self.purpose
        if self.sha256:
            doc["checksums"] = [{"algorithm": "SHA256", "checksumValue": self.sha256}]
        refs = []
        if self.purl:
            refs.append(_ref("PACKAGE-MANAGER", "purl", self.purl))
        if self.endpoint:
            refs.append(_ref("OTHER", "mcp-server-endpoint", self.endpoint))
        doc |= {"externalRefs": refs} if refs else {}
        doc |= {"comment": self.comment} if self.comment else {}
        if self.signer:
            note = {"annotationType": "OTHER", "annotator": TOOL, "annotationDate": created}
            doc["annotations"] = [note | {"comment": f"plugman:signer {self.signer}"}]
        return doc


class Relationship(NamedTuple):
    element: str
    kind: str  # DESCRIBES, DEPENDS_ON
    related: str

    def to_json(self) -> dict[str, str]:
        return {
            "spdxElementId": self.element,
            "relationshipType": self.kind,
            "relatedSpdxElement": self.related,
        }


def render(found: Inventory) -> bytes:
    created = found.created.strftime("%Y-%m-%dT%H:%M:%SZ") if found.created else EPOCH
    project = Package("SPDXRef-Project", found.project, purpose="APPLICATION")
    packages = [project]
    relationships = [Relationship("SPDXRef-DOCUMENT", "DESCRIBES", project.spdx_id)]
    launched: dict[str, Package] = {}
    for index, plugin in enumerate(found.plugins, 1):
        package = _plugin(index, plugin)
        packages.append(package)
        relationships.append(Relationship(project.spdx_id, "DEPENDS_ON", package.spdx_id))
        for item in plugin.launches:
            key = item.purl if isinstance(item, ServerPackage) else f"{plugin.id} {item.server}"
            if key not in launched:
                launched[key] = _launched(len(launched) + 1, plugin, item)
                packages.append(launched[key])
            relationships.append(Relationship(package.spdx_id, "DEPENDS_ON", launched[key].spdx_id))
    doc = {
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": f"plugman.lock of {found.project}",
        "documentNamespace": f"https://plugman.dev/spdx/{_id_part(found.project)}-{found.serial}",
        "creationInfo": {"created": created, "creators": [TOOL]},
        "packages": [p.to_json(created) for p in packages],
        "relationships": [r.to_json() for r in relationships],
    }
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()


def _plugin(index: int, plugin: LockedPlugin) -> Package:
    where = plugin.vcs_url or plugin.download_url or ""
    if plugin.source_type in ("url", "git-subdir") and plugin.pin:
        where = f"git+{where}@{plugin.pin}"
    said = f"plugman plugin {plugin.id} from {plugin.described}"
    return Package(
        f"SPDXRef-Plugin-{index}-{_id_part(plugin.name)}",
        plugin.name,
        plugin.version,
        download=where if DOWNLOADABLE.match(where) else "NOASSERTION",
        sha256=plugin.content_hash.removeprefix("sha256:"),
        purl=plugin.purl,
        comment=f"{said}; checksum: the SHA-256 of its tree ({plugin.content_hash})",
        signer=plugin.signer,
    )


def _launched(index: int, plugin: LockedPlugin, item: ServerPackage | RemoteServer) -> Package:
    if isinstance(item, RemoteServer):
        return Package(
            f"SPDXRef-Remote-{index}-{_id_part(item.server)}",
            item.server,
            purpose="OTHER",
            endpoint=item.url,
            comment=f"remote MCP server ({item.transport}) of plugin {plugin.id} at {item.url}",
        )
    pinned = "pinned" if item.pinned else "not pinned to one version"
    return Package(
        f"SPDXRef-Package-{index}-{_id_part(item.name)}",
        item.name,
        item.version,
        purpose=PURPOSES[item.ecosystem],
        purl=item.purl,
        comment=f"launched by MCP server {item.server} of plugin {plugin.id} as {item.spec} "
        f"({pinned})",
    )


def _id_part(text: str) -> str:
    """`text` as SPDX allows in an identifier: letters, digits, `.` and `-`."""
    return re.sub(r"[^A-Za-z0-9.-]+", "-", text).strip("-") or "x"


def _ref(category: str, kind: str, locator: str) -> dict[str, str]:
    return {"referenceCategory": category, "referenceType": kind, "referenceLocator": locator}

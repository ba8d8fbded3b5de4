"""The inventory of plugman.lock (plugman.plugins.supply_chain.sbom) as a CycloneDX 1.7 JSON
document, built with cyclonedx-python-lib, CycloneDX's own library (imported only here, ~80 ms:
plugman.plugins.supply_chain.sbom loads this module only to render CycloneDX).

The project is the document's subject (`metadata.component`); each locked plugin a `library`
component with its purl, its content hash (SHA-256 of its tree) and `plugman:` properties
(id, marketplace, source, pin, signer), and external references to its repository (`vcs`) or
its bytes (`distribution`, with their hash); each package an MCP server launches a component
(`library` for npm and PyPI, `container` for an image) named by its purl, one component however
many plugins launch it; each remote server a `service` with its endpoint. Dependencies: the
project on its plugins, each plugin on what its servers launch or reach.
"""

from __future__ import annotations

import uuid

from cyclonedx.model import (
    ExternalReference,
    ExternalReferenceType,
    HashAlgorithm,
    HashType,
    Property,
    XsUri,
)
from cyclonedx.model.bom import Bom
from cyclonedx.model.component import Component, ComponentType
from cyclonedx.model.service import Service
from cyclonedx.output.json import JsonV1Dot7
from packageurl import PackageURL

from plugman import __version__
from plugman.plugins.supply_chain.sbom_model import Inventory, LockedPlugin
from plugman.plugins.supply_chain.sbom_servers import RemoteServer, ServerPackage


def render(found: Inventory) -> bytes:
    return (JsonV1Dot7(document(found)).output_as_string(indent=2) + "\n").encode()


def document(found: Inventory) -> Bom:
    bom = Bom(serial_number=uuid.UUID(found.serial))
    bom.metadata.timestamp = found.created  # type: ignore[assignment]  # None: left out
    project = Component(name=found.project, type=ComponentType.APPLICATION, bom_ref="project")
    bom.metadata.component = project
    tool = Component(name="plugman", version=__version__, type=ComponentType.APPLICATION)
    tool.bom_ref.value = "tool:plugman"
    bom.metadata.tools.components.add(tool)
    launched: dict[str, Component] = {}
    plugins = []
    for plugin in found.plugins:
        component = _plugin(plugin)
        plugins.append(component)
        bom.components.add(component)
        needs: list[Component | Service] = []
        for item in plugin.launches:
            if isinstance(item, RemoteServer):
                service = _service(plugin, item)
                bom.services.add(service)
                needs.append(service)
                continue
            package = launched.get(item.purl)
            if package is None:
                package = launched[item.purl] = _package(item)
                bom.components.add(package)
            _launched_by(package, plugin, item)
            needs.append(package)
        bom.register_dependency(component, needs)
    bom.register_dependency(project, plugins)
    return bom


def _plugin(plugin: LockedPlugin) -> Component:
    references = []
    if plugin.vcs_url:
        vcs = XsUri(plugin.vcs_url)
        references.append(ExternalReference(type=ExternalReferenceType.VCS, url=vcs))
    if plugin.download_url:
        hashes = [HashType(alg=HashAlgorithm(a), content=h) for a, h in plugin.download_hashes]
        where = XsUri(plugin.download_url)
        kind = ExternalReferenceType.DISTRIBUTION
        references.append(ExternalReference(type=kind, url=where, hashes=hashes))
    facts: dict[str, str | None] = {
        "component": "plugin",
        "id": plugin.id,
        "marketplace": plugin.marketplace,
        "source-type": plugin.source_type,
        "location": plugin.location,
        "source": plugin.described,
        "pin": plugin.pin,
        "content-hash": plugin.content_hash,
        "signer": plugin.signer,
    }
    tree = plugin.content_hash.removeprefix("sha256:")
    return Component(
        name=plugin.name,
        version=plugin.version,
        type=ComponentType.LIBRARY,
        bom_ref=f"plugin:{plugin.id}",
        purl=PackageURL.from_string(plugin.purl),
        hashes=[HashType(alg=HashAlgorithm.SHA_256, content=tree)],
        external_references=references,
        properties=_properties(facts),
    )


def _package(item: ServerPackage) -> Component:
    purl = PackageURL.from_string(item.purl)
    kind = ComponentType.CONTAINER if item.ecosystem == "docker" else ComponentType.LIBRARY
    return Component(
        name=item.name,
        version=item.version,
        type=kind,
        bom_ref=item.purl,
        purl=purl,
        properties=_properties(
            {"component": "mcp-server-package", "pinned": "true" if item.pinned else "false"}
        ),
    )


def _launched_by(package: Component, plugin: LockedPlugin, item: ServerPackage) -> None:
    """Adds which plugin's server launches `package`, and how it asks for it."""
    said = f"{plugin.id} server {item.server}: {item.spec}"
    package.properties.add(Property(name="plugman:launched-by", value=said))


def _service(plugin: LockedPlugin, item: RemoteServer) -> Service:
    return Service(
        name=item.server,
        bom_ref=f"service:{plugin.id}:{item.server}",
        endpoints=[XsUri(item.url)],
        properties=_properties(
            {"component": "mcp-remote-server", "transport": item.transport, "plugin": plugin.id}
        ),
    )


def _properties(facts: dict[str, str | None]) -> list[Property]:
    return [Property(name=f"plugman:{k}", value=v) for k, v in facts.items() if v]

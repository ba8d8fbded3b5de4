"""The SBOM's reading of launch commands (plugman.plugins.supply_chain.sbom_servers) and of locked
sources (plugman.plugins.supply_chain.sbom.source_fields): the package each names, as a package
URL."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from plugman.core.sources import LockedSource
from plugman.manifest.model import McpServer
from plugman.plugins.supply_chain import cyclonedx as sbom_cyclonedx
from plugman.plugins.supply_chain import spdx as sbom_spdx
from plugman.plugins.supply_chain.sbom import Inventory, LockedPlugin, source_ref
from plugman.plugins.supply_chain.sbom_servers import RemoteServer, launched, packages

DIGEST = "sha256:" + "cd" * 32


@pytest.mark.parametrize(
    ("command", "purl", "pinned"),
    [
        ("npx -y pkg@1.2.3", "pkg:npm/pkg@1.2.3", True),
        ("npx --yes @scope/server@0.6.2 --root /tmp", "pkg:npm/%40scope/server@0.6.2", True),
        ("npx -y pkg", "pkg:npm/pkg", False),
        ("npx -y pkg@^1.2", "pkg:npm/pkg", False),
        ("npx -y pkg@latest", "pkg:npm/pkg", False),
        ("npx --package=tools@3.0.0 run-it", "pkg:npm/tools@3.0.0", True),
        ("npx -p tools@3.0.0 run-it", "pkg:npm/tools@3.0.0", True),
        ("/usr/local/bin/npx -y pkg@1.2.3", "pkg:npm/pkg@1.2.3", True),
        ("npx.cmd -y pkg@1.2.3", "pkg:npm/pkg@1.2.3", True),
        ("cmd /c npx -y pkg@1.2.3", "pkg:npm/pkg@1.2.3", True),
        ("C:\\Windows\\System32\\cmd.exe /C uvx tool==2.0", "pkg:pypi/tool@2.0", True),
        ("npm exec -- pkg@1.2.3", "pkg:npm/pkg@1.2.3", True),
        ("pnpm dlx pkg@1.2.3", "pkg:npm/pkg@1.2.3", True),
        ("bunx pkg@1.2.3", "pkg:npm/pkg@1.2.3", True),
        ("uvx tool==2.0", "pkg:pypi/tool@2.0", True),
        ("uvx tool@2.0", "pkg:pypi/tool@2.0", True),
        ("uvx Mcp_Server.Git==1.0", "pkg:pypi/mcp-server-git@1.0", True),
        ("uvx --python 3.12 tool==2.0", "pkg:pypi/tool@2.0", True),
        ("uvx --from tool[cli]==2.0 tool-cli", "pkg:pypi/tool@2.0", True),
        ("uvx tool", "pkg:pypi/tool", False),
        ("uvx tool>=2", "pkg:pypi/tool", False),
        ("uv tool run tool==2.0", "pkg:pypi/tool@2.0", True),
        ("pipx run --spec tool==2.0 tool", "pkg:pypi/tool@2.0", True),
        ("pipx run tool", "pkg:pypi/tool", False),
        ("docker run -i --rm -e A=1 -v /a:/b mcp/fetch:1.0", "pkg:docker/mcp/fetch@1.0", False),
        ("docker run -i --rm node", "pkg:docker/node", False),
        (
            "docker run --rm -i ghcr.io/acme/server:1.4",
            "pkg:docker/acme/server@1.4?repository_url=ghcr.io",
            False,
        ),
        (
            f"podman run -i --name=x ghcr.io/acme/server@{DIGEST}",
            f"pkg:oci/server@{DIGEST}?repository_url=ghcr.io/acme/server",
            True,
        ),
    ],
)
def test_a_package_runner_names_its_package(command: str, purl: str, pinned: bool) -> None:
    found = launched("s", command.split())
    assert found is not None, command
    assert (found.purl, found.pinned) == (purl, pinned)


@pytest.mark.parametrize(
    "command",
    [
        "node ${CLAUDE_PLUGIN_ROOT}/server.js",
        "python -m server",
        "npx -y ${PACKAGE}",
        "npx -y ./local-folder",
        "npx -y github:owner/repo",
        "uvx git+https://example.com/tool.git",
        "docker ps",
        "npx",
    ],
)
def test_a_command_that_launches_no_registry_package_is_left_out(command: str) -> None:
    assert launched("s", command.split()) is None


def test_servers_read_as_packages_and_remote_endpoints_without_secrets() -> None:
    servers = [
        McpServer("one", "stdio", {"command": "npx", "args": ["-y", "pkg@1.2.3"]}),
        McpServer("own", "stdio", {"command": "${CLAUDE_PLUGIN_ROOT}/bin/server"}),
        McpServer("far", "http", {"url": "https://u:pw@mcp.example.com/v1/mcp?token=t#x"}),
    ]
    found = packages(servers)
    assert [type(f).__name__ for f in found] == ["ServerPackage", "RemoteServer"]
    assert found[1] == RemoteServer("far", "http", "https://mcp.example.com/v1/mcp")


# The lock field that holds each built-in kind's location.
LOCATIONS = {"github": "repo", "npm": "package", "oci": "ref", "path": "path", "command": "command"}


def _source(kind: str, location: str, fields: dict[str, str]) -> LockedSource:
    """A lock entry's source table."""
    return LockedSource(kind, {LOCATIONS.get(kind, "url"): location} | fields)


@pytest.mark.parametrize(
    ("kind", "location", "fields", "purl"),
    [
        (
            "github",
            "acme/plugins",
            {"commit": "a" * 40, "path": "plugins/x"},
            f"pkg:github/acme/plugins@{'a' * 40}#plugins/x",
        ),
        ("npm", "@acme/plugin", {"version": "1.0.1"}, "pkg:npm/%40acme/plugin@1.0.1"),
        (
            "oci",
            "registry.example.com/team/x:1.0.0",
            {"digest": DIGEST},
            f"pkg:oci/x@{DIGEST}?repository_url=registry.example.com/team/x&tag=1.0.0",
        ),
        ("path", "./plugins/x", {}, "pkg:generic/x@1.0.0"),
    ],
)
def test_each_locked_source_has_a_purl(
    kind: str, location: str, fields: dict[str, str], purl: str
) -> None:
    assert source_ref(_source(kind, location, fields), "x", "1.0.0").purl == purl


def test_an_npm_plugin_s_tarball_has_its_integrity_in_hex() -> None:
    integrity = "sha512-" + base64.b64encode(bytes.fromhex("ab" * 64)).decode()
    fields = {"version": "1.0.1", "integrity": integrity}
    ref = source_ref(_source("npm", "@acme/x", fields), "x", "1.0.1")
    assert ref.download_url == "https://registry.npmjs.org/@acme/x/-/x-1.0.1.tgz"
    [(algorithm, hex_)] = ref.download_hashes
    assert algorithm == "SHA-512" and hex_ == "ab" * 64
    private = source_ref(
        _source("npm", "x", fields | {"registry": "https://npm.acme/"}), "x", "1.0.1"
    )
    assert private.download_url == "https://npm.acme/x/-/x-1.0.1.tgz"


def _locked(kind: str, location: str, fields: dict[str, str]) -> LockedPlugin:
    ref = source_ref(_source(kind, location, fields), "x", "1.0.1")
    return LockedPlugin(
        f"{kind}@team", "x", "team", "1.0.1", "sha256:" + "0f" * 32, kind, location,
        fields.get("commit"),
        f"a {kind} source", ref.purl, ref.vcs_url, ref.download_url, ref.download_hashes,
        None, (),
    )  # fmt: skip


def test_every_source_kind_validates_in_both_formats(tmp_path: Path) -> None:
    """Sources the integration tests cannot reach offline (GitHub, npm, a command, a git
    sub-folder) render to documents CycloneDX's and SPDX's own validators accept."""
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator
    from spdx_tools.spdx.parser.parse_anything import parse_file
    from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document

    integrity = "sha512-" + base64.b64encode(bytes.fromhex("ab" * 64)).decode()
    plugins = (
        _locked("github", "acme/plugins", {"commit": "a" * 40, "path": "plugins/x"}),
        _locked("npm", "@acme/x", {"version": "1.0.1", "integrity": integrity}),
        _locked("git-subdir", "https://git.acme/p.git", {"commit": "b" * 40, "path": "x"}),
        _locked("command", "make plugin", {}),
    )
    found = Inventory("project", "00" * 32, None, plugins)
    text = sbom_cyclonedx.render(found).decode()
    assert JsonStrictValidator(SchemaVersion.V1_7).validate_str(text) is None
    assert len(json.loads(text)["components"]) == 4
    out = tmp_path / "sbom.spdx.json"
    out.write_bytes(sbom_spdx.render(found))
    assert validate_full_spdx_document(parse_file(str(out))) == []
    packages = json.loads(out.read_text())["packages"]
    assert packages[3]["downloadLocation"] == f"git+https://git.acme/p.git@{'b' * 40}"

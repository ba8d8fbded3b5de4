"""`plugman lock export`: a real project's plugman.lock (a plugin from a git repository made
here, one from the real OCI registry on 127.0.0.1, one from an archive whose servers launch
`npx -y pkg@1.2.3`, `uvx tool==2.0` and an image by digest, and reach a remote server) as a
CycloneDX document that CycloneDX's own validator accepts (strict, its bundled 1.7 schema) and
an SPDX 2.3 one that spdx-tools validates; the same lock gives the same bytes; bad input is a
clear error that leaves every file as it was."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import tomli

from plugman.cli import invoke
from plugman.core.oci.client import push
from tests.integration.helpers import run, snapshot
from tests.integration.oci.registry import Registry, plugin_tgz, start

IMAGE_DIGEST = "sha256:" + "ab" * 32
SIGNER = "sha256:" + "5e" * 32
LAUNCHER = {
    "name": "launcher",
    "version": "0.4.0",
    "mcpServers": {
        "files": {"command": "npx", "args": ["-y", "pkg@1.2.3", "/tmp"]},
        "tool": {"command": "uvx", "args": ["tool==2.0"]},
        "image": {"command": "docker", "args": ["run", "-i", "--rm", "-e", "MODE=ro",
                                                f"ghcr.io/acme/server:1.4@{IMAGE_DIGEST}"]},
        "remote": {"type": "http", "url": "https://mcp.example.com/mcp?api_key=planted"},
    },
}  # fmt: skip


class Project(NamedTuple):
    root: Path
    commit: str  # of the git plugin
    digest: str  # of the OCI artifact
    lock: dict[str, dict[str, Any]]  # id -> its lock entry


def _git(cwd: Path, *args: str) -> str:
    identity = ["-c", "user.name=Test", "-c", "user.email=test@example.com"]
    argv = ["git", *identity, "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]
    done = subprocess.run([*argv, *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _git_plugin(folder: Path) -> str:
    (folder / ".claude-plugin").mkdir(parents=True)
    manifest = {"name": "gitplug", "version": "2.1.0"}
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    (folder / "skills" / "hi").mkdir(parents=True)
    (folder / "skills" / "hi" / "SKILL.md").write_text("---\nname: hi\ndescription: Hi\n---\nHi\n")
    _git(folder, "init", "-q")
    _git(folder, "add", "-A")
    _git(folder, "commit", "-q", "-m", "v2.1.0")
    return _git(folder, "rev-parse", "HEAD")


def _archive(path: Path) -> Path:
    data = json.dumps(LAUNCHER).encode()
    with tarfile.open(path, "w:gz") as archive:
        info = tarfile.TarInfo("launcher/.claude-plugin/plugin.json")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    yield from start(tmp_path / "registry", auth=False)


@pytest.fixture
def project(registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no user git config
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    commit = _git_plugin(tmp_path / "gitplug")
    digest = push(registry.ref(), plugin_tgz(name="ociplug", version="1.0.0"), name="ociplug",
                  version="1.0.0")  # fmt: skip
    root = tmp_path / "project"
    root.mkdir()
    for spec in (
        (tmp_path / "gitplug").as_uri(),
        registry.ref(),
        str(_archive(tmp_path / "launcher.tar.gz")),
    ):
        run("install", spec, "--scope", "project", project=root)
    lock = root / "plugman.lock"
    # what the sign helper's install records for a signed artifact (issue 26's lock contract)
    entries = lock.read_text().split("[[plugins]]")
    signed = [e + f'signer = "{SIGNER}"\n' if "ociplug" in e else e for e in entries]
    lock.write_text("[[plugins]]".join(signed))
    pins = {p["id"]: p for p in tomli.loads(lock.read_text())["plugins"]}
    return Project(root, commit, digest, pins)


def _export(
    project: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """`plugman lock export ARGS` as a real process: its exact bytes."""
    return subprocess.run(
        [sys.executable, "-m", "plugman", "--project", str(project), "lock", "export", *args],
        capture_output=True,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_cyclonedx_validates_and_lists_plugins_hashes_signer_and_server_packages(
    project: Project,
) -> None:
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    done = _export(project.root)
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert JsonStrictValidator(SchemaVersion.V1_7).validate_str(text) is None
    bom = json.loads(text)
    assert bom["specVersion"] == "1.7" and "timestamp" not in bom["metadata"]
    components = {c["bom-ref"]: c for c in bom["components"]}
    for plugin_id, pin in project.lock.items():
        component = components[f"plugin:{plugin_id}"]
        assert (component["name"], component["version"]) == (pin["name"], pin["version"])
        assert component["hashes"] == [
            {"alg": "SHA-256", "content": pin["content_hash"].removeprefix("sha256:")}
        ]
    git = components["plugin:gitplug@direct"]
    assert git["purl"].startswith("pkg:generic/gitplug@2.1.0?vcs_url=git%2Bfile:")
    assert git["purl"].endswith(f"%40{project.commit}")
    oci = components["plugin:ociplug@direct"]
    assert oci["purl"].startswith(f"pkg:oci/plugin@{project.digest}?repository_url=")
    assert {"name": "plugman:signer", "value": SIGNER} in oci["properties"]
    [distribution] = oci["externalReferences"]
    assert distribution["hashes"] == [
        {"alg": "SHA-256", "content": project.digest.removeprefix("sha256:")}
    ]
    assert not any(p["name"] == "plugman:signer" for p in git["properties"])
    archive = components["plugin:launcher@direct"]
    assert "download_url=file:" in archive["purl"] and "checksum=sha256:" in archive["purl"]
    launched = {"pkg:npm/pkg@1.2.3", "pkg:pypi/tool@2.0"}
    assert launched <= set(components)
    image = next(c for c in components.values() if c["type"] == "container")
    assert image["purl"].startswith(f"pkg:oci/server@{IMAGE_DIGEST}?repository_url=ghcr.io")
    [service] = bom["services"]
    assert service["endpoints"] == ["https://mcp.example.com/mcp"]  # no query: it may be secret
    depends = {d["ref"]: set(d.get("dependsOn", [])) for d in bom["dependencies"]}
    assert depends["plugin:launcher@direct"] == launched | {image["bom-ref"], service["bom-ref"]}
    assert depends["project"] == {f"plugin:{i}" for i in project.lock}
    assert "planted" not in text


def test_spdx_validates_with_spdx_tools(project: Project, tmp_path: Path) -> None:
    from spdx_tools.spdx.parser.parse_anything import parse_file
    from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document

    out = tmp_path / "sbom.spdx.json"
    said = run("lock", "export", "--format", "spdx", "--output", str(out), project=project.root)
    assert (said["sbom_format"], said["plugins"], said["server_packages"]) == ("spdx", 3, 3)
    assert said["remote_servers"] == 1
    assert validate_full_spdx_document(parse_file(str(out))) == []
    doc = json.loads(out.read_text())
    packages = {p["name"]: p for p in doc["packages"]}
    for pin in project.lock.values():
        package = packages[pin["name"]]
        assert package["versionInfo"] == pin["version"]
        assert package["checksums"][0]["checksumValue"] == pin["content_hash"][7:]
    assert packages["ociplug"]["annotations"][0]["comment"] == f"plugman:signer {SIGNER}"
    purls = {r["referenceLocator"] for p in doc["packages"] for r in p.get("externalRefs", [])}
    assert {"pkg:npm/pkg@1.2.3", "pkg:pypi/tool@2.0"} <= purls
    assert doc["creationInfo"]["created"] == "1970-01-01T00:00:00Z"


def test_the_same_lock_gives_the_same_bytes(project: Project) -> None:
    for form in ("spdx", "cyclonedx"):
        first, again = (_export(project.root, "--format", form) for _ in range(2))
        assert first.returncode == 0 and first.stdout == again.stdout, form
    dated = _export(project.root, env={"SOURCE_DATE_EPOCH": "1767225600"})
    assert json.loads(dated.stdout)["metadata"]["timestamp"] == "2026-01-01T00:00:00+00:00"
    lock = project.root / "plugman.lock"
    lock.write_text(lock.read_text().replace(SIGNER, "sha256:" + "77" * 32))
    other = json.loads(_export(project.root).stdout)
    assert other["serialNumber"] != json.loads(first.stdout)["serialNumber"]  # another lock


def test_no_lock_says_which_file_and_what_to_run(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    done = _export(empty)
    assert done.returncode == 1 and done.stdout == b""
    assert f"there is no plugman.lock in {empty}" in done.stderr.decode()
    assert "run: plugman lock" in done.stderr.decode()
    assert list(empty.iterdir()) == []


def test_an_unknown_format_is_a_usage_error(project: Project) -> None:
    result = invoke(["--project", str(project.root), "lock", "export",
                                      "--format", "foo"])  # fmt: skip
    assert result.exit_code == 2
    assert "--format foo: lock export writes cyclonedx or spdx" in result.output


def test_output_into_a_missing_folder_or_a_failed_write_leaves_nothing(
    project: Project, tmp_path: Path
) -> None:
    missing = tmp_path / "no" / "such" / "sbom.json"
    done = _export(project.root, "--output", str(missing))
    assert done.returncode == 1
    assert f"there is no folder {missing.parent}" in done.stderr.decode()
    assert not (tmp_path / "no").exists()
    out = tmp_path / "sbom.json"
    out.write_text("the previous SBOM\n")
    before = snapshot(tmp_path / "sbom.json", project.root)
    failed = _export(project.root, "-o", str(out), env={"PLUGMAN_FAULT": "enospc"})
    assert failed.returncode == 1 and b"Traceback" not in failed.stderr, failed.stderr
    assert snapshot(tmp_path / "sbom.json", project.root) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".sbom")) == []
    assert _export(project.root, "-o", str(out)).returncode == 0
    assert out.read_bytes() == _export(project.root).stdout


def test_a_lock_whose_trees_are_not_installed_says_to_sync(
    project: Project, tmp_path: Path
) -> None:
    done = _export(project.root, env={"PLUGMAN_HOME": str(tmp_path / "fresh-home")})
    assert done.returncode == 1
    said = done.stderr.decode()
    assert "gitplug@direct, launcher@direct, ociplug@direct: not installed" in said
    assert "run: plugman sync --frozen" in said


def test_lock_keeps_its_own_command_and_lists_export(tmp_path: Path) -> None:
    """`plugman lock` alone still writes the lock (tests/integration/test_lifecycle.py)."""
    result = invoke(["--project", str(tmp_path), "lock", "--help"])
    assert result.exit_code == 0 and "export" in result.output and "--json" in result.output


def test_a_marketplace_entry_s_servers_are_read_and_lock_alone_still_locks(
    tmp_path: Path,
) -> None:
    """A plugin whose marketplace entry (strict: false) declares its server, as install read it;
    `plugman lock` with no subcommand still resolves plugman.toml and writes plugman.lock."""
    root = tmp_path / "project"
    market = root / "market"
    (market / ".claude-plugin").mkdir(parents=True)
    (market / "plugins" / "entryplug" / "commands").mkdir(parents=True)
    (market / "plugins" / "entryplug" / "commands" / "go.md").write_text("Go.\n")
    server = {"command": "npx", "args": ["-y", "entry-pkg@3.1.4"]}
    entry = {"name": "entryplug", "source": "./plugins/entryplug", "version": "0.2.0"}
    entry |= {"strict": False, "mcpServers": {"s": server}}
    catalog = {"name": "team", "owner": {"name": "t"}, "plugins": [entry]}
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    run("marketplace", "add", "./market", project=root)
    run("install", "entryplug@team", "--scope", "project", project=root)
    lock = (root / "plugman.lock").read_bytes()
    assert run("lock", project=root)["plugins"][0]["id"] == "entryplug@team"
    assert (root / "plugman.lock").read_bytes() == lock
    bom = json.loads(_export(root).stdout)
    components = {c["bom-ref"]: c for c in bom["components"]}
    assert "pkg:npm/entry-pkg@3.1.4" in components
    plugin = components["plugin:entryplug@team"]
    said = {p["name"]: p["value"] for p in plugin["properties"]}
    assert said["plugman:source"].startswith("folder ./plugins/entryplug of marketplace team")
    assert plugin["purl"] == "pkg:generic/entryplug@0.2.0"

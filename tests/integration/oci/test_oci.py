"""OCI registries as a plugin source, against a real registry (docker-registry) on 127.0.0.1:
push, install, the lock's digest pin, a frozen sync elsewhere, a tampered blob, tag updates."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from plugman.cli import invoke
from plugman.core.oci.client import MANIFEST, connect, manifest, push
from plugman.core.oci.reference import parse
from tests.integration.helpers import fails, run, snapshot
from tests.integration.oci.registry import Registry, plugin_tgz


def _push(reg: Registry, version: str, text: str = "Hi", tag: str = "1.0.0") -> str:
    data = plugin_tgz(version=version, text=text)
    return push(reg.ref(tag=tag), data, name="plugin", version=version, description="demo")


def _home(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / name
    monkeypatch.setenv("PLUGMAN_HOME", str(home))
    return home


def test_push_install_lock_and_frozen_sync_elsewhere(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    digest = _push(registry, "1.0.0")
    assert digest.startswith("sha256:") and len(digest) == 71
    project = tmp_path / "project"
    project.mkdir()
    _home(tmp_path, "home-a", monkeypatch)
    done = run("install", registry.ref(), "--scope", "project", project=project)
    assert [c["id"] for c in done["changes"]] == ["plugin@direct"]
    lock = (project / "plugman.lock").read_text()
    assert f'digest = "{digest}"' in lock and 'type = "oci"' in lock
    assert f'ref = "{registry.host}/team/plugin:1.0.0"' in lock
    listed = run("list", project=project)
    installed = [p for p in listed["plugins"] if p["id"] == "plugin@direct"]
    assert installed and installed[0]["version"] == "1.0.0"

    # the tag moves on; a frozen sync elsewhere still installs the locked digest
    _push(registry, "1.0.0", text="Changed under the same version")
    other = tmp_path / "other"
    other.mkdir()
    for name in ("plugman.toml", "plugman.lock"):
        shutil.copy(project / name, other / name)
    _home(tmp_path, "home-b", monkeypatch)
    run("sync", "--frozen", project=other)
    assert (other / "plugman.lock").read_text() == lock
    rows = run("list", project=other)["plugins"]
    hashes = {str(p["content_hash"]) for p in rows if p["id"] == "plugin@direct"}
    assert hashes == {_locked_hash(lock)}


def _locked_hash(lock: str) -> str:
    line = next(line for line in lock.splitlines() if line.startswith("content_hash"))
    return line.split('"')[1]


def test_a_tampered_blob_is_refused_and_nothing_is_installed(
    registry: Registry, tmp_path: Path, isolated_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    other = plugin_tgz(name="other")
    push(registry.ref("team/other"), other, name="other", version="1.0.0")
    run("install", registry.ref("team/other"), "--scope", "project", project=project)
    data = plugin_tgz()
    push(registry.ref(), data, name="plugin", version="1.0.0")
    layer = "sha256:" + hashlib.sha256(data).hexdigest()
    blob = registry.blob_file(layer)
    altered = bytearray(blob.read_bytes())
    altered[-5] ^= 0xFF
    blob.write_bytes(bytes(altered))
    before = snapshot(isolated_home, project)
    shown = fails("install", registry.ref(), "--scope", "project", project=project)
    assert f"blob {layer}" in shown and "does not match its digest" in shown
    assert "nothing was installed" in shown
    assert snapshot(isolated_home, project) == before


def test_a_new_push_to_the_tag_is_outdated_then_updated(registry: Registry) -> None:
    first = _push(registry, "1.0.0")
    run("install", registry.ref())
    assert run("outdated")["plugins"] == []
    second = _push(registry, "1.1.0", text="Newer")
    rows = run("outdated")["plugins"]
    assert [(r["id"], r["version"], r["available"]) for r in rows] == [
        ("plugin@direct", "1.0.0", "1.1.0")
    ]
    done = run("update")
    assert [(c["id"], c["version"]) for c in done["changes"]] == [("plugin@direct", "1.1.0")]
    assert run("outdated")["plugins"] == []
    info = run("info", "plugin@direct")["plugin"]
    assert info["source"]["digest"] == second != first


def test_installed_by_digest_is_not_followed(registry: Registry) -> None:
    digest = _push(registry, "1.0.0")
    ref = f"oci://{registry.host}/team/plugin@{digest}"
    run("install", ref)
    _push(registry, "1.1.0", text="Newer")
    assert run("outdated")["plugins"] == []
    info = run("info", "plugin@direct")["plugin"]
    assert info["source"] == {"type": "oci", "ref": ref.removeprefix("oci://"), "digest": digest}


def test_errors_say_what_and_where(registry: Registry) -> None:
    shown = fails("install", f"oci://{registry.host}/team/missing:1.0.0")
    assert "team/missing:1.0.0: not found in" in shown and "hint:" in shown
    shown = fails("install", "oci://127.0.0.1/Bad_Name:1")
    assert "not an OCI reference" in shown


def test_a_marketplace_entry_with_an_oci_source(registry: Registry, tmp_path: Path) -> None:
    digest = _push(registry, "1.0.0")
    market = tmp_path / "market"
    (market / ".claude-plugin").mkdir(parents=True)
    ref = f"{registry.host}/team/plugin:1.0.0"
    entry = {"name": "plugin", "source": {"source": "oci", "ref": ref}}
    catalog = {"name": "shelf", "owner": {"name": "Team"}, "plugins": [entry]}
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    checked = invoke(["validate", "--strict", str(market)])
    assert checked.exit_code == 0, checked.output
    run("marketplace", "add", str(market))
    done = run("install", "plugin@shelf")
    assert [c["id"] for c in done["changes"]] == ["plugin@shelf"]
    info = run("info", "plugin@shelf")["plugin"]
    assert info["installed"] == {"user": "1.0.0"}
    second = _push(registry, "1.1.0", text="Newer")
    assert [r["available"] for r in run("outdated")["plugins"]] == ["1.1.0"]
    run("update")
    assert run("info", "plugin@shelf")["plugin"]["installed"] == {"user": "1.1.0"}
    assert run("outdated")["plugins"] == []
    assert second != digest


def test_a_marketplace_entry_with_a_bad_oci_source_is_reported(tmp_path: Path) -> None:
    market = tmp_path / "market"
    (market / ".claude-plugin").mkdir(parents=True)
    entry = {"name": "plugin", "source": {"source": "oci", "ref": "no-registry", "tag": "x"}}
    catalog = {"name": "shelf", "owner": {"name": "Team"}, "plugins": [entry]}
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    shown = fails("validate", str(market))
    assert "plugins[0].source" in shown


def test_an_artifact_that_is_not_a_plugin_is_refused(registry: Registry) -> None:
    _push(registry, "1.0.0")
    ref = parse(registry.ref())
    with connect(ref) as client:
        _digest, found = manifest(client, ref)
        found["artifactType"] = "application/vnd.example.other"
        body = json.dumps(found).encode()
        headers = {"Content-Type": MANIFEST}
        url = f"/v2/{ref.repository}/manifests/other"
        assert client.request("PUT", url, headers=headers, body=body).status == 201
    shown = fails("install", registry.ref(tag="other"))
    assert "is not a plugman plugin artifact" in shown
    assert "(its artifact type is application/vnd.example.other)" in shown


def test_a_large_layer_pushed_twice_is_uploaded_once(registry: Registry) -> None:
    data = plugin_tgz(text="x" * 16 + os.urandom(6 * 2**20).hex())  # > 4 MiB compressed
    assert len(data) > 4 * 2**20
    first = push(registry.ref(tag="a"), data, name="plugin", version="1.0.0")
    second = push(registry.ref(tag="b"), data, name="plugin", version="1.0.0")
    assert first == second  # the same content: the same manifest, wherever it is tagged
    run("install", registry.ref(tag="b"))


def test_an_unmoved_tag_is_checked_without_downloading_its_layer(registry: Registry) -> None:
    """`outdated` and `update` ask the registry what the tag names (one HEAD) and download no
    layer when that is the installed manifest: with the layer gone from the registry's
    storage, both still answer."""
    data = plugin_tgz()
    push(registry.ref(), data, name="plugin", version="1.0.0", description="demo")
    run("install", registry.ref())
    registry.blob_file("sha256:" + hashlib.sha256(data).hexdigest()).unlink()
    assert run("outdated")["plugins"] == []
    assert run("update")["changes"] == []

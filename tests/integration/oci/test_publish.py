"""Issue 16's path from an author's folder to a team's machines, with a real registry on
127.0.0.1: new → validate → pack twice (the same bytes) → publish → install oci://… in a fresh
home → the lock holds the digest → `sync --frozen` in another fresh home gives the same content
hash → a blob altered in the registry's storage is refused and nothing is installed."""

from __future__ import annotations

import hashlib
import json
import shutil
import tomllib
from pathlib import Path

import pytest

from tests.integration.helpers import fails, run, snapshot
from tests.integration.oci.registry import Registry


def _locked(project: Path) -> dict[str, str]:
    (pin,) = tomllib.loads((project / "plugman.lock").read_text())["plugins"]
    return {"content_hash": pin["content_hash"], "digest": pin["source"]["digest"]}


def test_new_pack_publish_install_sync_and_a_tampered_blob(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PLUGMAN_HOME", str(tmp_path / "author-home"))
    run("new", "team-tool", "--with", "skill,command,hook")
    assert run("validate", "--strict", "team-tool")["ok"] is True
    first = run("pack", "team-tool", "-o", str(tmp_path / "one.tgz"))
    second = run("pack", "team-tool", "-o", str(tmp_path / "two.tgz"))
    assert (tmp_path / "one.tgz").read_bytes() == (tmp_path / "two.tgz").read_bytes()
    assert first["sha256"] == second["sha256"]

    target = f"oci://{registry.host}/team/team-tool:0.1.0"
    published = run("publish", "team-tool", target)
    digest = published["digest"]
    assert digest.startswith("sha256:") and published["sha256"] == first["sha256"]

    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("PLUGMAN_HOME", str(tmp_path / "home-a"))
    run("install", target, "--scope", "project", project=project)
    pins = _locked(project)
    assert pins["digest"] == digest

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name in ("plugman.toml", "plugman.lock"):
        shutil.copy(project / name, elsewhere / name)
    monkeypatch.setenv("PLUGMAN_HOME", str(tmp_path / "home-b"))
    run("sync", "--frozen", project=elsewhere)
    rows = run("list", project=elsewhere)["plugins"]
    assert {p["content_hash"] for p in rows if p["id"] == "team-tool@direct"} == {
        pins["content_hash"]
    }

    layer = "sha256:" + hashlib.sha256((tmp_path / "one.tgz").read_bytes()).hexdigest()
    blob = registry.blob_file(layer)
    altered = bytearray(blob.read_bytes())
    altered[len(altered) // 2] ^= 0xFF
    blob.write_bytes(bytes(altered))
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    monkeypatch.setenv("PLUGMAN_HOME", str(tmp_path / "home-c"))
    before = snapshot(fresh)
    shown = fails("install", target, "--scope", "project", project=fresh)
    assert f"blob {layer}" in shown and "does not match its digest" in shown
    assert snapshot(fresh) == before
    home = tmp_path / "home-c"  # plugman's own folders and its lock file, nothing installed
    assert [p.relative_to(home).as_posix() for p in home.rglob("*") if p.is_file()] == [
        "state/lock"
    ]


def test_an_unreachable_registry_is_said_plainly(tmp_path: Path) -> None:
    shown = fails("install", "oci://127.0.0.1:9/team/tool:1.0.0")
    assert "cannot reach the registry 127.0.0.1:9" in shown
    assert "hint: check the registry's address" in shown


def test_publish_refuses_what_it_cannot_publish(registry: Registry, tmp_path: Path) -> None:
    run("new", "unversioned", "--dir", str(tmp_path / "unversioned"))
    manifest = tmp_path / "unversioned" / ".claude-plugin" / "plugin.json"
    data = json.loads(manifest.read_text())
    data.pop("version", None)
    manifest.write_text(json.dumps(data))
    shown = fails("publish", str(tmp_path / "unversioned"), f"oci://{registry.host}/t/u:1")
    assert "has no version to publish" in shown and "hint:" in shown
    shown = fails("publish", str(tmp_path / "unversioned"), "https://example.com/x")
    assert "plugman publishes to OCI registries" in shown
    run("new", "versioned", "--dir", str(tmp_path / "versioned"))
    shown = fails(
        "publish", str(tmp_path / "versioned"), f"oci://{registry.host}/t/v@sha256:{'0' * 64}"
    )
    assert "a digest names content" in shown

"""npm plugin sources against a real npm-style registry on 127.0.0.1: packuments, real .tgz
tarballs (built with tarfile, and one with `npm pack`), integrity, the lock, --frozen."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import shutil
import subprocess
import tarfile
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plugman.core.errors import PlugmanError
from plugman.manifest import schema
from plugman.manifest.model import PluginSource
from plugman.plugins.sources import fetch
from plugman.plugins.sources.npm import choose
from tests.integration.helpers import fails, run, snapshot
from tests.integration.http_fixture import Site, serving

PACKAGE = "@acme/greeter"
PATH = "/@acme%2Fgreeter"
LOCK = "plugman-lock.schema.json"  # a scoped name's '/' is escaped in the packument URL


def tgz(version: str, *, extra: dict[str, bytes] | None = None, prefix: str = "package/") -> bytes:
    files = {
        "package.json": json.dumps({"name": PACKAGE, "version": version}).encode(),
        ".claude-plugin/plugin.json": b'{"name": "greeter", "description": "Says hi"}',
        "skills/hi/SKILL.md": f"---\nname: hi\ndescription: hi\n---\nHi from {version}\n".encode(),
        **(extra or {}),
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(prefix + name)
            info.size, info.mode = len(data), 0o644
            archive.addfile(info, io.BytesIO(data))
    return gzip.compress(buffer.getvalue(), mtime=0)  # the same bytes at every call


def sri(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


class Registry:
    """A packument for PACKAGE whose versions the test publishes."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.versions: dict[str, Any] = {}
        self.tags: dict[str, str] = {}

    def publish(self, version: str, data: bytes, dist: dict[str, Any] | None = None) -> bytes:
        url = self.site.put(f"/tarballs/greeter-{version}.tgz", data, "application/octet-stream")
        found = {"tarball": url, "integrity": sri(data), "shasum": hashlib.sha1(data).hexdigest()}
        self.versions[version] = {"name": PACKAGE, "version": version, "dist": dist or found}
        if "-" not in version:
            self.tags["latest"] = version
        self.site.put(
            PATH,
            json.dumps(
                {"name": PACKAGE, "versions": self.versions, "dist-tags": self.tags}
            ).encode(),
        )
        return data

    def tamper(self, version: str) -> None:
        """Serve other bytes under the published tarball URL."""
        self.site.put(f"/tarballs/greeter-{version}.tgz", tgz(version, extra={"evil": b"x"}))


@pytest.fixture
def registry() -> Iterator[Registry]:
    with serving() as site:
        found = Registry(site)
        for version in ("1.0.0", "1.2.0", "2.0.0", "2.1.0-beta.1"):
            found.publish(version, tgz(version))
        yield found


def marketplace(root: Path, registry: Registry, version: str = "^1.0") -> Path:
    source = {
        "source": "npm",
        "package": PACKAGE,
        "version": version,
        "registry": registry.site.base,
    }
    catalog = {
        "name": "npmshelf",
        "owner": {"name": "t"},
        "plugins": [{"name": "greeter", "source": source}],
    }
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    return root


@pytest.fixture
def project(tmp_path: Path, registry: Registry) -> Path:
    folder = tmp_path / "project"
    marketplace(folder / "shelf", registry)
    run("marketplace", "add", "./shelf", project=folder)
    return folder


def test_fetch_picks_the_highest_version_in_range_and_pins_its_integrity(
    registry: Registry, tmp_path: Path
) -> None:
    source = PluginSource("npm", PACKAGE, version="^1.0", registry=registry.site.base)
    got = fetch(source, tmp_path / "tree")
    assert got.root == tmp_path / "tree" / "package"
    assert "Hi from 1.2.0" in (got.root / "skills/hi/SKILL.md").read_text()
    assert got.pin == "1.2.0#" + sri(tgz("1.2.0"))
    assert PATH in registry.site.requests


def test_version_choice_follows_npm() -> None:
    packument = {
        "versions": {v: {} for v in ("1.0.0", "1.2.0", "1.3.0", "2.0.0-rc.1")},
        "dist-tags": {"latest": "1.2.0", "next": "2.0.0-rc.1"},
    }
    assert choose("p", packument, None) == "1.2.0"  # latest, not the highest
    assert choose("p", packument, "^1.0") == "1.2.0"  # latest satisfies the range
    assert choose("p", packument, "~1.3") == "1.3.0"
    assert choose("p", packument, "next") == "2.0.0-rc.1"  # a dist-tag
    assert choose("p", packument, ">=2.0.0-rc.0") == "2.0.0-rc.1"  # the range names a pre
    assert choose("p", packument, "1.0.0") == "1.0.0"
    with pytest.raises(PlugmanError, match=r"no version of npm package 'p' satisfies '\^2'"):
        choose("p", packument, "^2")


def test_install_from_a_marketplace_npm_entry_locks_version_and_integrity(
    project: Path,
    registry: Registry,
    isolated_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    done = run("install", "greeter@npmshelf", "--scope", "project", project=project)
    assert done["changes"][0]["version"] == "1.2.0"  # no version in plugin.json: npm's
    lock = (project / "plugman.lock").read_text()
    assert 'type = "npm"' in lock and f'package = "{PACKAGE}"' in lock
    assert 'version = "1.2.0"' in lock and sri(tgz("1.2.0")) in lock
    found = schema.check(tomllib.loads(lock), schema.load(LOCK), LOCK, ())
    assert found == []
    listed = run("list", project=project)["plugins"][0]
    assert listed["pin"] == sri(tgz("1.2.0"))
    # a newer 1.x is published: --frozen on a fresh machine still installs exactly 1.2.0
    registry.publish("1.9.0", tgz("1.9.0"))
    monkeypatch.setenv("PLUGMAN_HOME", str(tmp_path / "fresh"))
    frozen = run("sync", "--frozen", project=project)["changes"]
    assert [c["version"] for c in frozen] == ["1.2.0"]
    assert (project / "plugman.lock").read_text() == lock


def test_frozen_sync_refuses_a_tarball_that_changed_since_the_lock(
    project: Path, registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("install", "greeter@npmshelf", "--scope", "project", project=project)
    # the registry now serves other bytes *and* advertises their integrity
    registry.publish("1.2.0", tgz("1.2.0", extra={"evil": b"x"}))
    fresh = tmp_path / "fresh"
    monkeypatch.setenv("PLUGMAN_HOME", str(fresh))
    before = snapshot(project)
    out = fails("sync", "--frozen", project=project)
    assert "integrity check failed for npm package @acme/greeter@1.2.0" in out
    assert "plugman.lock pins sha512-" in out
    assert snapshot(project) == before
    assert not [p for p in (fresh / "data" / "store").glob("*") if not p.name.startswith(".")]


def test_a_tampered_tarball_is_refused_and_nothing_is_installed(
    project: Path, registry: Registry, isolated_home: Path
) -> None:
    registry.tamper("1.2.0")
    before = snapshot(project, isolated_home / "data" / "store")
    out = fails("install", "greeter@npmshelf", "--scope", "project", project=project)
    assert "integrity check failed for npm package @acme/greeter@1.2.0" in out
    assert "the registry publishes sha512-" in out and "nothing was extracted" in out
    assert snapshot(project, isolated_home / "data" / "store") == before
    assert run("list", project=project)["plugins"] == []


def test_an_unsatisfiable_range_is_a_clear_error(tmp_path: Path, registry: Registry) -> None:
    folder = tmp_path / "p2"
    marketplace(folder / "shelf", registry, version="^3.0")
    run("marketplace", "add", "./shelf", project=folder)
    out = fails("install", "greeter@npmshelf", project=folder)
    assert "no version of npm package '@acme/greeter' satisfies '^3.0'" in out
    assert "its newest version is 2.0.0" in out


def test_shasum_only_is_checked_with_a_warning_and_missing_both_is_refused(
    registry: Registry, tmp_path: Path
) -> None:
    data = tgz("3.0.0")
    url = registry.site.base + "/tarballs/greeter-3.0.0.tgz"
    registry.publish("3.0.0", data, {"tarball": url, "shasum": hashlib.sha1(data).hexdigest()})
    source = PluginSource("npm", PACKAGE, version="3.0.0", registry=registry.site.base)
    warnings: list[str] = []
    from plugman.core import progress

    with progress.listening(None, warnings.append):
        got = fetch(source, tmp_path / "a")
    assert got.pin == "3.0.0#" + sri(data)  # the lock gets the stronger digest
    assert any("sha1 shasum only" in w for w in warnings)
    registry.publish("3.0.0", data, {"tarball": url, "shasum": "0" * 40})
    with pytest.raises(PlugmanError, match="shasum check failed"):
        fetch(source, tmp_path / "b")
    registry.publish("3.0.0", data, {"tarball": url})
    with pytest.raises(PlugmanError, match="no integrity and no shasum"):
        fetch(source, tmp_path / "c")
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (PluginSource("npm", "git+https://x/y.git"), "is not an npm package name"),
        (PluginSource("npm", "x", registry="http://example.com"), "npm registry URL"),
        (PluginSource("npm", "x", registry="file:///etc"), "npm registry URL"),
    ],
)
def test_unsafe_sources_are_refused_before_any_download(
    source: PluginSource, message: str, tmp_path: Path
) -> None:
    with pytest.raises(PlugmanError, match=message):
        fetch(source, tmp_path / "tree")


def test_a_tarball_url_off_this_machine_over_http_is_refused(
    registry: Registry, tmp_path: Path
) -> None:
    registry.publish("4.0.0", b"", {"tarball": "http://example.com/x.tgz", "integrity": "x"})
    source = PluginSource("npm", PACKAGE, version="4.0.0", registry=registry.site.base)
    with pytest.raises(PlugmanError, match=r"npm tarball URL 'http://example\.com/x\.tgz'"):
        fetch(source, tmp_path / "tree")


def test_unknown_package_is_named(registry: Registry, tmp_path: Path) -> None:
    source = PluginSource("npm", "@acme/nothing", registry=registry.site.base)
    with pytest.raises(PlugmanError, match="npm package '@acme/nothing' is not in the registry"):
        fetch(source, tmp_path / "tree")


def test_a_tarball_made_by_npm_pack_installs(registry: Registry, tmp_path: Path) -> None:
    if shutil.which("npm") is None:  # Node.js comes with this machine; npm pack runs offline
        pytest.fail("npm is not installed: install Node.js (npm) to run the npm source tests")
    folder = tmp_path / "src"
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text('{"name": "greeter"}')
    (folder / "skills" / "hi").mkdir(parents=True)
    (folder / "skills" / "hi" / "SKILL.md").write_text("---\nname: hi\ndescription: h\n---\nHi\n")
    manifest = {
        "name": PACKAGE,
        "version": "5.0.0",
        "dependencies": {"left-pad": "^1"},
        "scripts": {"postinstall": "echo pwned > /tmp/plugman-npm-pwned"},
    }
    (folder / "package.json").write_text(json.dumps(manifest))
    packed = subprocess.run(
        ["npm", "pack", "--ignore-scripts", "--json", "--pack-destination", str(tmp_path)],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    name = json.loads(packed.stdout)[0]["filename"]
    data = (tmp_path / name).read_bytes()
    registry.publish("5.0.0", data)
    source = PluginSource("npm", PACKAGE, version="5", registry=registry.site.base)
    warnings: list[str] = []
    from plugman.core import progress

    with progress.listening(None, warnings.append):
        got = fetch(source, tmp_path / "tree")
    assert (got.root / ".claude-plugin" / "plugin.json").is_file()
    assert got.pin == "5.0.0#" + sri(data)
    assert any("installs no dependencies" in w and "left-pad" in w for w in warnings)
    assert any("lifecycle scripts not run (postinstall)" in w for w in warnings)


TOKEN = "npm-token-7f3a9c1e5b"  # planted: must appear in no output and no file under the home


def test_a_private_registry_gets_the_users_npmrc_token_and_nothing_else_does(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The packument comes from a registry that wants a token: `~/.npmrc` gives it as
    `${NPM_TOKEN}`; the tarball lies on another host, which never sees it. Without the token the
    error says how to give one. A project's own .npmrc is never read."""
    with serving() as private, serving() as cdn:
        registry = Registry(private)
        data = tgz("1.0.0")
        url = cdn.put("/greeter-1.0.0.tgz", data, "application/octet-stream")
        registry.versions["1.0.0"] = {
            "name": PACKAGE,
            "version": "1.0.0",
            "dist": {"tarball": url, "integrity": sri(data)},
        }
        private.put(PATH, json.dumps({"name": PACKAGE, "versions": registry.versions}).encode())
        private.token = TOKEN
        project = tmp_path / "project"
        marketplace(project / "shelf", registry)
        (project / ".npmrc").write_text(
            f"{private.base.removeprefix('http:')}/:_authToken=stolen\n"
        )
        run("marketplace", "add", "./shelf", project=project)

        monkeypatch.setenv("HOME", str(tmp_path / "user"))
        shown = fails("install", "greeter@npmshelf", "--scope", "project", project=project)
        assert "HTTP 401" in shown and ":_authToken=${NPM_TOKEN}" in shown
        assert "stolen" not in str(private.authorizations)  # the project's .npmrc is not read

        (tmp_path / "user").mkdir()
        nerf = private.base.removeprefix("http:")
        (tmp_path / "user" / ".npmrc").write_text(f"; mine\n{nerf}/:_authToken=${{NPM_TOKEN}}\n")
        monkeypatch.setenv("NPM_TOKEN", TOKEN)
        done = run("install", "greeter@npmshelf", "--scope", "project", project=project)
        assert [c["id"] for c in done["changes"]] == ["greeter@npmshelf"]
        assert private.authorizations[-1] == f"Bearer {TOKEN}"
        assert cdn.authorizations == [None]  # the tarball's host got no token
        assert TOKEN not in json.dumps(done)
        run("uninstall", "greeter@npmshelf", "--scope", "project", project=project)
        cdn.token = "the-cdns-own"  # a tarball host that wants its own token: the hint names it
        shown = fails("install", "greeter@npmshelf", "--scope", "project", project=project)
        cdn_host = cdn.base.removeprefix("http:")
        assert "HTTP 401" in shown and f"{cdn_host}/:_authToken=${{NPM_TOKEN}}" in shown
        leaked = [
            p for p in isolated_home.rglob("*") if p.is_file() and TOKEN.encode() in p.read_bytes()
        ]
        assert leaked == []

"""A plugin installed directly follows the moving ref of its source through the source kind's
contract (`SourceKind.follow`): a git branch (`URL#main`, or the default branch), and an
extension kind's own ref. `outdated` only offers where the ref points now; `update` installs
it (and writes it to plugman.lock); a source pinned to an exact commit or revision is never
offered. Real git repositories (a bare origin and a clone pushing to it), no mocks."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from plugman import extensions
from plugman.core.paths import Paths
from plugman.core.sources import LockedSource
from plugman.hookspecs import hookimpl
from plugman.manifest.model import PluginSource
from plugman.plugins.sources import Progress, SourceKind
from plugman.plugins.sources.kind import Fetcher, Followed, LockFields
from tests.integration.helpers import git, run


@pytest.fixture(autouse=True)
def clean_git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user git config (signing, templates, hooks) leaks into the tests, which run in a
    folder of their own (not inside plugman's own repository)."""
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def _version(work: Path, version: str) -> str:
    """Commit version `version` of the plugin `demo` in the clone `work` and push it to main;
    the commit."""
    (work / ".claude-plugin").mkdir(exist_ok=True)
    manifest = {"name": "demo", "version": version}
    (work / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    (work / "README.md").write_text(f"demo {version}\n")
    git(work, "add", "-A")
    git(work, "-c", "commit.gpgsign=false", "commit", "-q", "-m", version)
    git(work, "push", "-q", "origin", "HEAD:main")
    return git(work, "rev-parse", "HEAD").strip()


@pytest.fixture
def origin(tmp_path: Path) -> tuple[Path, Path]:
    """A bare origin repository with version 1.0.0 on main, and a clone that pushes to it."""
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(bare), str(work))
    git(work, "checkout", "-q", "-b", "main")
    _version(work, "1.0.0")
    return bare, work


def _row(project: Path) -> dict[str, object]:
    [row] = run("list", project=project)["plugins"]
    assert isinstance(row, dict)
    return row


def test_a_git_plugin_from_a_branch_is_offered_when_the_branch_moves_and_updated(
    tmp_path: Path, origin: tuple[Path, Path]
) -> None:
    bare, work = origin
    project = tmp_path / "project"
    project.mkdir()
    url = bare.as_uri()
    run("install", f"{url}#main", "--scope", "project", project=project)
    first = _row(project)
    assert (first["version"], first["source"]) == (
        "1.0.0",
        {"type": "url", "url": url, "commit": first["pin"], "ref": "main"},
    )
    assert run("outdated", project=project)["plugins"] == []  # the branch has not moved
    locked = (project / "plugman.lock").read_bytes()

    moved = _version(work, "1.1.0")  # a new commit pushed to main
    [offered] = run("outdated", project=project)["plugins"]
    assert (offered["id"], offered["version"], offered["available"]) == (
        "demo@direct",
        "1.0.0",
        "1.1.0",
    )
    assert (offered["pin"], offered["available_pin"]) == (first["pin"], moved)
    # only offered: nothing installed, the lock as it was
    assert _row(project)["pin"] == first["pin"]
    assert (project / "plugman.lock").read_bytes() == locked

    [change] = run("update", project=project)["changes"]
    assert (change["action"], change["version"], change["pin"]) == ("updated", "1.1.0", moved)
    now = _row(project)
    assert (now["version"], now["pin"], now["source"]) == (
        "1.1.0",
        moved,
        {"type": "url", "url": url, "commit": moved, "ref": "main"},
    )
    lock = (project / "plugman.lock").read_text()
    assert f'commit = "{moved}"' in lock and 'ref = "main"' in lock
    assert run("outdated", project=project)["plugins"] == []


def test_a_git_url_without_a_ref_follows_the_default_branch(
    tmp_path: Path, origin: tuple[Path, Path]
) -> None:
    bare, work = origin
    run("install", bare.as_uri())
    assert run("outdated")["plugins"] == []
    moved = _version(work, "2.0.0")
    assert [r["available_pin"] for r in run("outdated")["plugins"]] == [moved]


def test_a_git_plugin_pinned_to_a_commit_is_never_offered(
    tmp_path: Path, origin: tuple[Path, Path]
) -> None:
    bare, work = origin
    pinned = git(work, "rev-parse", "HEAD").strip()
    run("install", f"{bare.as_uri()}#{pinned}")
    assert run("list")["plugins"][0]["pin"] == pinned
    _version(work, "1.1.0")
    assert run("outdated")["plugins"] == []
    assert run("update")["changes"] == []
    assert run("list")["plugins"][0]["pin"] == pinned


class Shelf:
    """An out-of-tree source kind: plugins kept on a shelf folder, one subfolder per revision,
    and a file `CURRENT` per plugin naming its current revision (the moving ref).
    `shelf+NAME` follows CURRENT; `shelf+NAME@REV` pins revision REV."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def fetch(
        self, source: PluginSource, dest: Path, _base: Path | None, _progress: Progress
    ) -> tuple[Path, str | None]:
        revision = source.sha or (self.folder / source.location / "CURRENT").read_text().strip()
        shutil.copytree(self.folder / source.location / revision, dest)
        return dest, revision

    @hookimpl
    def plugman_sources(self) -> list[SourceKind]:
        return [ShelfKind(self.folder, self.fetch)]


class ShelfKind(SourceKind):
    """The shelf kind's contract: its own lock fields (`package`, `rev`, `follows`), its
    install specs, and `follow` reading CURRENT."""

    def __init__(self, folder: Path, fetch: Fetcher) -> None:
        super().__init__(("shelf",), fetch, location="package")
        self.folder = folder

    def lock_fields(
        self, source: PluginSource, pin: str | None, marketplace_commit: str | None
    ) -> LockFields:
        return {"package": source.location, "rev": pin, "follows": source.ref}

    def from_lock(self, locked: LockedSource) -> PluginSource:
        return PluginSource("shelf", str(locked["package"]), locked.get("follows"), locked["rev"])

    def pin_of(self, locked: LockedSource) -> str | None:
        return locked.get("rev")

    def claim(self, text: str, cwd: Path) -> PluginSource | None:
        if not text.startswith("shelf+"):
            return None
        name, _, revision = text.removeprefix("shelf+").partition("@")
        if revision:
            return PluginSource("shelf", name, sha=revision)
        return PluginSource("shelf", name, ref="CURRENT")

    def follow(self, locked: LockedSource, paths: Paths) -> Followed | None:
        if locked.get("follows") != "CURRENT":
            return None  # pinned to a revision
        package = str(locked["package"])
        revision = (self.folder / package / "CURRENT").read_text().strip()
        return Followed(PluginSource("shelf", package, "CURRENT", revision), revision)


def _shelve(folder: Path, revision: str, version: str) -> None:
    plugin = folder / "tool" / revision / ".claude-plugin"
    plugin.mkdir(parents=True)
    (plugin / "plugin.json").write_text(json.dumps({"name": "tool", "version": version}))
    (folder / "tool" / "CURRENT").write_text(revision)


@pytest.fixture
def shelf(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "shelf"
    _shelve(folder, "r1", "1.0.0")
    extension = Shelf(folder)
    extensions.manager().register(extension)
    yield folder
    extensions.manager().unregister(extension)


def test_an_extension_kind_follows_its_own_ref_through_the_contract(shelf: Path) -> None:
    run("install", "shelf+tool")
    assert run("outdated")["plugins"] == []
    _shelve(shelf, "r2", "2.0.0")  # the ref moves
    [offered] = run("outdated")["plugins"]
    assert (offered["id"], offered["available"], offered["available_pin"]) == (
        "tool@direct",
        "2.0.0",
        "r2",
    )
    assert run("list")["plugins"][0]["pin"] == "r1"  # only offered
    [change] = run("update")["changes"]
    assert (change["version"], change["pin"]) == ("2.0.0", "r2")
    [row] = run("list")["plugins"]
    assert row["source"] == {"type": "shelf", "package": "tool", "rev": "r2", "follows": "CURRENT"}


def test_an_extension_source_pinned_to_a_revision_is_never_offered(shelf: Path) -> None:
    run("install", "shelf+tool@r1")
    _shelve(shelf, "r2", "2.0.0")
    assert run("outdated")["plugins"] == []
    assert run("update")["changes"] == []
    assert run("list")["plugins"][0]["pin"] == "r1"

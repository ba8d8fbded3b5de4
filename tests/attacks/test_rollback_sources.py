"""Rollback attacks through git sources, marketplaces and an npm registry (issue 33 point 6;
TUF's rollback and freeze attacks on the catalog), with real git repositories reached by
file:// and a real npm-style registry on 127.0.0.1.

The attacker controls where a plugin is followed from: a git tag it re-points, a marketplace
whose entry or branch it moves back, an npm `latest` dist-tag it lowers. Invariant attacked:
`update` and `sync` never take an installed plugin back to an older version unless the user
passes `--allow-downgrade` (or, for sync, plugman.lock pins exactly that release: the
project's explicit request); `outdated` shows it as a downgrade. Each refusal is paired with
the consenting variant, and each attack with the legitimate move forward.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from plugman.cli import invoke
from plugman.cli.runner import Result
from plugman.core.paths import Paths
from plugman.core.state import InstallRecord
from tests.integration.helpers import fails, git, run, snapshot
from tests.integration.http_fixture import serving
from tests.integration.test_sources_npm import PACKAGE, PATH, Registry, tgz


class World(NamedTuple):
    root: Path
    project: Path
    market: Path  # the marketplace's git repository
    home: Path


@pytest.fixture
def world(tmp_path: Path, isolated_home: Path) -> World:
    project = tmp_path / "project"
    project.mkdir()
    return World(tmp_path, project, tmp_path / "market", isolated_home)


@pytest.fixture
def npm() -> Iterator[Registry]:
    with serving() as site:
        found = Registry(site)
        for version in ("1.0.0", "1.2.0"):
            found.publish(version, tgz(version))
        yield found


def cli(*args: str, project: Path) -> Result:
    return invoke(["--project", str(project), *args])


def write_plugin(folder: Path, version: str | None, text: str) -> None:
    (folder / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (folder / "skills" / "hello").mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"name": "tool", "description": "A tool."}
    if version is not None:
        manifest["version"] = version
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    (folder / "skills" / "hello" / "SKILL.md").write_text(
        f"---\nname: hello\ndescription: Greets.\n---\n{text}\n"
    )


def write_market(world: World, entry: dict[str, Any], message: str) -> str:
    """Commit the marketplace `shelf` with the one entry `entry`; the commit."""
    catalog = {"name": "shelf", "owner": {"name": "Publisher"}, "plugins": [entry]}
    (world.market / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (world.market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    if not (world.market / ".git").exists():
        git(world.market, "init", "-q", "-b", "main")
    git(world.market, "add", "-A")
    git(world.market, "commit", "-qm", message)
    return git(world.market, "rev-parse", "HEAD").strip()


def plugin_repo(world: World, version: str, text: str) -> str:
    """Commit `tool` at `version` in its own git repository; the commit."""
    repo = world.root / "tool-repo"
    write_plugin(repo, version, text)
    if not (repo / ".git").exists():
        git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", version)
    return git(repo, "rev-parse", "HEAD").strip()


# Each scenario: `start` publishes the release the victim installs and returns a step that
# moves the source to another release; the attack moves it back.


class Scenario(NamedTuple):
    installed: str  # the version the victim has
    older: str  # the version the source goes back to
    newer: str  # the version of the legitimate move forward
    start: Callable[[World, Registry], None]  # the source at `installed`
    back: Callable[[World, Registry], None]  # the attacker moves the source to `older`
    forward: Callable[[World, Registry], None]  # the publisher moves it to `newer`
    where: str  # how the refusal names the source


def _git_tag_start(world: World, _npm: Registry) -> None:
    plugin_repo(world, "1.0.0", "Old text.")
    plugin_repo(world, "1.1.0", "New text.")
    git(world.root / "tool-repo", "tag", "stable")
    url = (world.root / "tool-repo").as_uri()
    write_market(
        world, {"name": "tool", "source": {"source": "url", "url": url, "ref": "stable"}}, "m"
    )


def _git_tag_back(world: World, _npm: Registry) -> None:
    repo = world.root / "tool-repo"
    git(repo, "tag", "-f", "stable", "HEAD~1")  # re-pointed at the older, 1.0.0 commit


def _git_tag_forward(world: World, _npm: Registry) -> None:
    plugin_repo(world, "1.2.0", "Newer text.")
    git(world.root / "tool-repo", "tag", "-f", "stable")


def _entry_start(world: World, _npm: Registry) -> None:
    write_plugin(world.market / "plugins" / "tool", None, "Text of 2.0.0.")
    write_market(world, {"name": "tool", "source": "./plugins/tool", "version": "2.0.0"}, "2.0.0")


def _entry_back(world: World, _npm: Registry) -> None:
    write_plugin(world.market / "plugins" / "tool", None, "Text of 1.0.0.")
    write_market(world, {"name": "tool", "source": "./plugins/tool", "version": "1.0.0"}, "1.0.0")


def _entry_forward(world: World, _npm: Registry) -> None:
    write_plugin(world.market / "plugins" / "tool", None, "Text of 2.1.0.")
    write_market(world, {"name": "tool", "source": "./plugins/tool", "version": "2.1.0"}, "2.1.0")


def _branch_start(world: World, _npm: Registry) -> None:
    write_plugin(world.market / "plugins" / "tool", "1.4.0", "Text of 1.4.0.")
    write_market(world, {"name": "tool", "source": "./plugins/tool"}, "1.4.0")
    write_plugin(world.market / "plugins" / "tool", "1.5.0", "Text of 1.5.0.")
    write_market(world, {"name": "tool", "source": "./plugins/tool"}, "1.5.0")


def _branch_back(world: World, _npm: Registry) -> None:
    git(world.market, "reset", "-q", "--hard", "HEAD~1")  # the catalog's branch rolled back


def _branch_forward(world: World, _npm: Registry) -> None:
    write_plugin(world.market / "plugins" / "tool", "1.6.0", "Text of 1.6.0.")
    write_market(world, {"name": "tool", "source": "./plugins/tool"}, "1.6.0")


def _npm_start(world: World, npm: Registry) -> None:
    source = {"source": "npm", "package": PACKAGE, "version": "^1.0", "registry": npm.site.base}
    write_market(world, {"name": "tool", "source": source}, "npm")


def _npm_latest(npm: Registry, version: str) -> None:
    npm.tags["latest"] = version
    packument = {"name": PACKAGE, "versions": npm.versions, "dist-tags": npm.tags}
    npm.site.put(PATH, json.dumps(packument).encode())


def _npm_back(world: World, npm: Registry) -> None:
    _npm_latest(npm, "1.0.0")  # `latest` lowered: npm (and plugman) pick it in ^1.0


def _npm_forward(world: World, npm: Registry) -> None:
    npm.publish("1.3.0", tgz("1.3.0"))


SCENARIOS = {
    "git-tag-repointed-at-an-older-commit": Scenario(
        "1.1.0", "1.0.0", "1.2.0", _git_tag_start, _git_tag_back, _git_tag_forward, "at stable"
    ),
    "marketplace-entry-version-lowered": Scenario(
        "2.0.0", "1.0.0", "2.1.0", _entry_start, _entry_back, _entry_forward, "of marketplace shelf"
    ),
    "marketplace-branch-reset-to-an-older-commit": Scenario(
        "1.5.0", "1.4.0", "1.6.0", _branch_start, _branch_back, _branch_forward, "of marketplace"
    ),
    "npm-latest-lowered": Scenario(
        "1.2.0", "1.0.0", "1.3.0", _npm_start, _npm_back, _npm_forward, f"npm package {PACKAGE}"
    ),
}


def _installed(world: World, scenario: Scenario, npm: Registry, scope: str) -> None:
    scenario.start(world, npm)
    run("marketplace", "add", world.market.as_uri(), project=world.project)
    done = run("install", "tool@shelf", "--scope", scope, project=world.project)
    assert done["changes"][0]["version"] == scenario.installed


def _version(world: World, scope: str = "user") -> str:
    paths = Paths.from_env(project=world.project)
    return InstallRecord.load(paths, scope).plugins["tool@shelf"].version  # type: ignore[arg-type]


@pytest.mark.parametrize("scenario", SCENARIOS.values(), ids=list(SCENARIOS))
def test_a_source_gone_back_is_refused_by_update(
    world: World, npm: Registry, scenario: Scenario
) -> None:
    """Attack: the source an installed plugin follows goes back to an older release (a git
    tag re-pointed, a catalog entry's version lowered, a marketplace branch reset, npm's
    `latest` lowered). Invariant: outdated shows a downgrade; update refuses it, saying
    installed, offered and where, and changes nothing; --allow-downgrade takes it."""
    _installed(world, scenario, npm, "user")
    scenario.back(world, npm)
    (row,) = run("outdated", project=world.project)["plugins"]
    assert (row["version"], row["available"]) == (scenario.installed, scenario.older)
    assert row["downgrade"] == f"version {scenario.older} is older than the installed " + (
        scenario.installed
    )
    shown = cli("outdated", project=world.project).stdout
    assert shown.startswith(f"tool@shelf (user): DOWNGRADE {scenario.installed} -> ")
    # the catalogs are refreshed first (as `npm outdated` asks the registry): what is
    # installed must not change
    watched = (world.project, world.home / "state" / "installed")
    before = snapshot(*watched)
    refused = fails("update", "tool", project=world.project)
    assert "tool@shelf (user) would go back to an older release" in refused
    assert f"version {scenario.older} is older than the installed {scenario.installed}" in refused
    assert scenario.where in refused and "plugman update --allow-downgrade tool@shelf" in refused
    assert snapshot(*watched) == before
    assert _version(world) == scenario.installed
    done = run("update", "tool", "--allow-downgrade", project=world.project)["changes"]
    assert [(c["from_version"], c["version"]) for c in done] == [
        (scenario.installed, scenario.older)
    ]
    assert _version(world) == scenario.older


@pytest.mark.parametrize("scenario", SCENARIOS.values(), ids=list(SCENARIOS))
def test_a_source_moved_forward_updates_without_asking(
    world: World, npm: Registry, scenario: Scenario
) -> None:
    """The legitimate variant: the publisher moves the same source forward. Invariant: no
    downgrade is shown and update takes it with no flag."""
    _installed(world, scenario, npm, "user")
    scenario.forward(world, npm)
    (row,) = run("outdated", project=world.project)["plugins"]
    assert row["downgrade"] is None and row["available"] == scenario.newer
    done = run("update", "tool", project=world.project)["changes"]
    assert [(c["from_version"], c["version"]) for c in done] == [
        (scenario.installed, scenario.newer)
    ]


def test_sync_refuses_a_declared_plugin_whose_marketplace_went_back(
    world: World, npm: Registry
) -> None:
    """Attack: a project's declared plugin, its marketplace entry's version lowered; `sync`
    resolves plugman.toml afresh. Invariant: refused, nothing changed; `sync
    --allow-downgrade` takes it (still waiting for trust approve, as all synced content)."""
    scenario = SCENARIOS["marketplace-entry-version-lowered"]
    _installed(world, scenario, npm, "project")
    scenario.back(world, npm)
    run("marketplace", "update", "shelf", project=world.project)
    watched = (world.project, world.home / "state" / "installed")
    before = snapshot(*watched)
    refused = fails("sync", project=world.project)
    assert "tool@shelf (project) would go back to an older release" in refused
    assert "plugman sync --allow-downgrade" in refused
    assert snapshot(*watched) == before
    done = run("sync", "--allow-downgrade", project=world.project)
    assert [c["version"] for c in done["changes"]] == ["1.0.0"]
    assert _version(world, "project") == "1.0.0"


def test_sync_follows_a_lock_that_pins_the_older_release(world: World, npm: Registry) -> None:
    """The project's explicit request: plugman.lock pins exactly the older release (a teammate
    committed it, as Cargo's lock holds a version back). Invariant: `sync --frozen` installs
    that pin without --allow-downgrade: a lock is a request, its content still waits for
    trust approve (plugman.config.scopes), and the downgrade is the lock's, said in the diff."""
    scenario = SCENARIOS["git-tag-repointed-at-an-older-commit"]
    scenario.start(world, npm)
    git(world.root / "tool-repo", "tag", "-f", "stable", "HEAD~1")  # the team was at 1.0.0
    run("marketplace", "add", world.market.as_uri(), project=world.project)
    run("install", "tool@shelf", "--scope", "project", project=world.project)
    held = (world.project / "plugman.lock").read_text()
    git(world.root / "tool-repo", "tag", "-f", "stable", "main")
    run("update", "tool", project=world.project)
    assert _version(world, "project") == "1.1.0"
    (world.project / "plugman.lock").write_text(held)  # the committed lock holds 1.0.0
    done = run("sync", "--frozen", project=world.project)
    assert [c["version"] for c in done["changes"]] == ["1.0.0"]
    assert _version(world, "project") == "1.0.0"

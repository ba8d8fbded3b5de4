"""One entry's problem is that entry's: every command over many plugins or marketplaces, with
one plugin the managed policy blocks (its marketplace blocked), one marketplace whose folder has
moved, and one good plugin with an update. Each command reports the blocked and the moved one
as findings of their own (in the text and the JSON, with what and what to do), goes on with the
good one, and exits 1 to say some failed (docs/cli.md, "Exit codes")."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from plugman.cli import invoke
from tests.conftest import SAMPLES
from tests.integration.helpers import snapshot

GOOD, BLOCKED, MOVED = "writing-skills@good", "guardrails@doomed", "code-review@moved"


class Ran(NamedTuple):
    code: int
    out: str  # stdout
    err: str  # stderr

    @property
    def json(self) -> Any:
        return json.loads(self.out)


class World(NamedTuple):
    project: Path
    home: Path  # PLUGMAN_HOME

    def run(self, *args: str) -> Ran:
        argv = ["--project", str(self.project), *args]
        result = invoke(argv)
        assert result.exception is None or isinstance(result.exception, SystemExit), result
        return Ran(result.exit_code, result.stdout, result.stderr)


def _market(project: Path, name: str) -> Path:
    folder = project / f"{name}-market"
    shutil.copytree(SAMPLES, folder, ignore=shutil.ignore_patterns("invalid"))
    catalog = folder / ".claude-plugin" / "marketplace.json"
    data = json.loads(catalog.read_text())
    catalog.write_text(json.dumps({**data, "name": name}, indent=2))
    return folder


@pytest.fixture
def world(tmp_path: Path, isolated_home: Path, home: Path) -> World:
    """Three project marketplaces and one plugin from each, installed at project scope; then
    the good one's plugin gets new content, the `moved` marketplace's folder moves away and
    the managed policy blocks the `doomed` marketplace."""
    project = tmp_path / "project"
    project.mkdir()
    w = World(project, isolated_home)
    for name in ("good", "doomed", "moved"):
        _market(project, name)
        assert w.run("marketplace", "add", f"./{name}-market", "--scope", "project").code == 0
    assert w.run("install", GOOD, BLOCKED, MOVED, "--scope", "project").code == 0
    plugin = project / "good-market" / "plugins" / "writing-skills"
    skill = plugin / "skills" / "commit-message" / "SKILL.md"
    skill.write_text(skill.read_text() + "\nKeep the subject under 50 characters.\n")
    (project / "moved-market").rename(project / "moved-elsewhere")
    managed = Path(os.environ["PLUGMAN_MANAGED_DIR"])
    managed.mkdir(parents=True, exist_ok=True)
    (managed / "managed-settings.toml").write_text(
        '[[blockedMarketplaces]]\nsource = "pathPattern"\npathPattern = "doomed-market"\n'
    )
    return w


def _findings(rows: list[dict[str, Any]]) -> dict[str, str]:
    return {row["id"]: row["problem"] for row in rows}


def _check_failed(failed: dict[str, str], ids: tuple[str, str]) -> None:
    """The blocked entry and the moved one, each said for what it is."""
    blocked, moved = ids
    assert "blocked by" in failed[blocked] and "managed" in failed[blocked]
    assert "is gone (moved or deleted)" in failed[moved] or "does not exist" in failed[moved]


def test_outdated_lists_the_good_update_and_each_failure(world: World) -> None:
    ran = world.run("outdated", "--json")
    assert ran.code == 1, ran
    rows = {row["id"]: row for row in ran.json["plugins"]}
    assert rows[GOOD]["available_hash"] != rows[GOOD]["content_hash"]
    assert "problem" not in rows[GOOD]
    _check_failed(_findings([r for r in rows.values() if "problem" in r]), (BLOCKED, MOVED))
    assert "plugman marketplace remove moved" in rows[MOVED]["hint"]
    assert "plugman policy explain" in rows[BLOCKED]["hint"]
    text = world.run("outdated")
    assert text.code == 1
    assert f"{GOOD} (project): new content" in text.out
    assert f"{MOVED} (project): 1.0.0: marketplace 'moved'" in text.out
    assert "  hint: " in text.out


def test_the_update_notice_keeps_the_good_update(world: World) -> None:
    """What `outdated` found is the agents' notice, though two plugins failed the check."""
    assert world.run("outdated").code == 1
    cache = json.loads((world.home / "state" / "update-notice.json").read_text())
    assert [row["id"] for row in cache["updates"]] == [GOOD]
    env = {**os.environ, "PLUGMAN_HOME": str(world.home)}
    said = subprocess.run(
        [sys.executable, "-m", "plugman", "hooks", "notify", "gemini"],
        cwd=world.project,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "writing-skills" in said.stdout, said


def test_update_dry_run_says_what_would_change_and_changes_nothing(world: World) -> None:
    before = snapshot(world.home / "state", world.project)
    ran = world.run("update", "--dry-run", "--json")
    assert ran.code == 1, ran
    assert [c["id"] for c in ran.json["changes"]] == [GOOD]
    _check_failed(_findings(ran.json["failed"]), (BLOCKED, MOVED))
    assert snapshot(world.home / "state", world.project) == before


def test_update_updates_the_good_one(world: World) -> None:
    listed = world.run("list", "--json").json
    was = {p["id"]: p["content_hash"] for p in listed["plugins"]}
    ran = world.run("update")
    assert ran.code == 1, ran
    assert f"updated {GOOD} (project)" in ran.out
    assert f"not updated: {BLOCKED} (project): plugin {BLOCKED} is blocked" in ran.out
    assert f"not updated: {MOVED} (project): marketplace 'moved'" in ran.out
    now = {p["id"]: p["content_hash"] for p in world.run("list", "--json").json["plugins"]}
    assert now[GOOD] != was[GOOD]
    assert now[BLOCKED] == was[BLOCKED] and now[MOVED] == was[MOVED]
    assert world.run("outdated").code == 1  # the two failures stay; the good one is current
    assert GOOD not in world.run("outdated").out


def test_search_searches_the_readable_marketplaces(world: World) -> None:
    ran = world.run("search", "review", "--json")
    assert ran.code == 1, ran
    assert {hit["id"] for hit in ran.json["plugins"]} == {"code-review@good", "code-review@doomed"}
    assert "is gone" in _findings(ran.json["failed"])["moved"]
    assert "not searched: moved: " in world.run("search", "review").out


def test_marketplace_update_updates_the_others(world: World) -> None:
    ran = world.run("marketplace", "update", "--json")
    assert ran.code == 1, ran
    assert [m["name"] for m in ran.json["marketplaces"]] == ["good"]
    _check_failed(_findings(ran.json["failed"]), ("doomed", "moved"))
    assert world.run("marketplace", "update", "good").code == 0  # named and fine: fine


def test_sync_on_a_fresh_machine_installs_the_rest(world: World) -> None:
    lock = (world.project / "plugman.lock").read_text()
    for folder in world.home.iterdir():  # a fresh machine, under the same managed policy
        if "managed" not in folder.name:
            shutil.rmtree(folder)
    ran = world.run("sync", "--json")
    assert ran.code == 1, ran
    assert [c["id"] for c in ran.json["changes"]] == [GOOD]
    assert "does not exist" in _findings(ran.json["failed"])[MOVED]
    assert f"plugin {BLOCKED} is blocked by managed policy" in ran.err  # policy: skipped
    for plugin_id in (BLOCKED, MOVED):  # the team's pins stay in the lock
        assert f'id = "{plugin_id}"' in (world.project / "plugman.lock").read_text()
    assert lock != (world.project / "plugman.lock").read_text()  # the good one moved on
    assert {p["id"] for p in world.run("list", "--json").json["plugins"]} == {GOOD}


def test_list_and_doctor_name_each_problem(world: World) -> None:
    listed = world.run("list")
    assert listed.code == 0, listed
    assert all(plugin_id in listed.out for plugin_id in (GOOD, BLOCKED, MOVED))
    assert "not delivered: its marketplace 'doomed' is blocked" in listed.out
    doctor = world.run("doctor", "--json")
    assert doctor.code == 1, doctor
    problems = {p["message"] for p in doctor.json["problems"]}
    assert any("marketplace 'moved': its folder" in m for m in problems), problems
    assert any(BLOCKED in m and "blocked" in m for m in problems), problems


def test_audit_goes_on(world: World) -> None:
    ran = world.run("audit", "--json")
    assert ran.code == 0, ran

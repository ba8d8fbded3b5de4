"""The update notice's cache and line (plugman.runtime.launch.notices), on real files."""

from __future__ import annotations

import json
from pathlib import Path

from plugman.core.paths import Paths
from plugman.runtime.launch import notices
from plugman.runtime.launch.notices import Row

NOW = 1_800_000_000.0


def paths_in(tmp_path: Path, project: str) -> Paths:
    folder = tmp_path / project
    folder.mkdir(exist_ok=True)
    return Paths.from_env({"PLUGMAN_HOME": str(tmp_path / "home")}, project=folder)


def test_a_check_keeps_other_projects_rows_and_replaces_its_own(tmp_path: Path) -> None:
    a, b = paths_in(tmp_path, "a"), paths_in(tmp_path, "b")
    notices.save(a, [Row("x@m", "project", "h1"), Row("u@m", "user", "h2")], NOW)
    notices.save(b, [Row("y@m", "local", "h3")], NOW)
    assert notices.line(a, NOW) == (
        "plugman: 1 plugin has an update (x@m): run `plugman update`"
    )  # its user row went with b's check, which found none
    assert notices.line(b, NOW) == ("plugman: 1 plugin has an update (y@m): run `plugman update`")
    kept = json.loads(notices.path(a).read_text())["updates"]
    assert {r["id"]: r.get("project") for r in kept} == {
        "x@m": str(a.project_dir),
        "y@m": str(b.project_dir),
    }


def test_many_updates_are_counted_and_a_few_named(tmp_path: Path) -> None:
    here = paths_in(tmp_path, "p")
    notices.save(here, [Row(f"p{n}@m", "user", None) for n in range(5)], NOW)
    assert notices.line(here, NOW + 3600) == (
        "plugman: 5 plugins have updates (p0@m, p1@m, p2@m, +2 more): run `plugman update`"
    )
    notices.save(here, [], NOW)
    assert notices.line(here, NOW) is None and notices.notice(here, "claude", NOW) == ""


def test_prune_drops_what_is_not_installed_as_checked_here_only(tmp_path: Path) -> None:
    a, b = paths_in(tmp_path, "a"), paths_in(tmp_path, "b")
    notices.save(a, [Row("x@m", "project", "h1")], NOW)
    notices.save(b, [Row("y@m", "project", "h3")], NOW)
    notices.prune(b)  # nothing is installed: b's row goes, a's stays until a prunes
    assert notices.line(b, NOW) is None
    assert notices.line(a, NOW) is not None


def test_the_user_setting_wins_over_the_link() -> None:
    assert notices.wanted(True, None) and not notices.wanted(False, None)
    assert notices.wanted(False, True) and not notices.wanted(True, False)
    assert notices.wanted(True, "yes")  # not a boolean: the link decides


def test_the_hook_names_no_machine_path_in_a_project_file() -> None:
    group = notices.group("codex", "project")
    assert group["hooks"] == [
        {"type": "command", "command": "plugman hooks notify codex", "timeout": notices.TIMEOUT}
    ]
    assert (
        "-m plugman hooks notify gemini" in notices.group("gemini", "user")["hooks"][0]["command"]
    )

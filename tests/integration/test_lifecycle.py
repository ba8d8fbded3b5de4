"""sync, lock, update, outdated, dependencies, search and info, for real."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import SAMPLES
from tests.integration.helpers import fails, run, snapshot


def make_marketplace(root: Path, plugins: dict[str, dict[str, object]]) -> Path:
    (root / ".claude-plugin").mkdir(parents=True)
    entries = []
    for name, manifest in plugins.items():
        folder = root / "plugins" / name
        (folder / ".claude-plugin").mkdir(parents=True)
        (folder / ".claude-plugin" / "plugin.json").write_text(
            json.dumps({"name": name, **manifest})
        )
        (folder / "commands").mkdir()
        (folder / "commands" / f"{name}.md").write_text(f"Run {name}.\n")
        entries.append({"name": name, "source": f"./plugins/{name}"})
    catalog = {"name": "deps", "owner": {"name": "t"}, "plugins": entries}
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    shutil.copytree(SAMPLES, folder / "marketplace", ignore=shutil.ignore_patterns("invalid"))
    return folder


def store_trees(home: Path) -> set[str]:
    return {p.name for p in (home / "data" / "store").iterdir() if not p.name.startswith(".")}


def test_sync_frozen_on_a_fresh_home_reproduces_the_store(
    project: Path, isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("marketplace", "add", "./marketplace", project=project)
    run("install", "guardrails", "writing-skills", "toolbox", "--scope", "project", project=project)
    first = store_trees(isolated_home)
    lock = (project / "plugman.lock").read_bytes()
    toml = (project / "plugman.toml").read_text()
    assert '[marketplaces]\nplugman-samples = {source = "./marketplace"}' in toml
    fresh = tmp_path / "fresh-home"
    monkeypatch.setenv("PLUGMAN_HOME", str(fresh))
    done = run("sync", "--frozen", project=project)["changes"]
    assert sorted(c["id"].split("@")[0] for c in done) == [
        "guardrails",
        "toolbox",
        "writing-skills",
    ]
    assert store_trees(fresh) == first
    assert (project / "plugman.lock").read_bytes() == lock
    assert len(run("list", project=project)["plugins"]) == 3
    assert run("sync", "--locked", project=project)["changes"] == []


def test_a_direct_install_is_locked_and_synced_from_the_lock(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """plugman.toml names a direct install by id only; its source is in plugman.lock, which
    `lock` and `sync` read (both failed before: "marketplace 'direct' is not known")."""
    folder = project / "marketplace" / "plugins" / "writing-skills"
    run("install", str(folder), "--scope", "project", project=project)
    lock = (project / "plugman.lock").read_bytes()
    assert run("lock", project=project)["plugins"][0]["id"] == "writing-skills@direct"
    assert (project / "plugman.lock").read_bytes() == lock
    assert run("sync", project=project)["changes"] == []
    assert run("sync", "--locked", project=project)["changes"] == []
    monkeypatch.setenv("PLUGMAN_HOME", str(tmp_path / "fresh-home"))
    [done] = run("sync", project=project)["changes"]
    assert (done["id"], done["action"]) == ("writing-skills@direct", "installed")
    (project / "plugman.lock").unlink()
    said = fails("sync", project=project)
    assert "writing-skills@direct was installed from a source given directly" in said
    assert "plugman install SOURCE --scope project" in said


def test_sync_locked_fails_on_a_stale_lock_and_lock_refreshes_it(project: Path) -> None:
    run("marketplace", "add", "./marketplace", project=project)
    run("install", "toolbox", "--scope", "project", project=project)
    (project / "marketplace" / "plugins" / "toolbox" / "README.md").write_text("changed\n")
    before = snapshot(project / "plugman.lock")
    assert "plugman.lock is out of date" in fails("sync", "--locked", project=project)
    assert "does not match plugman.lock" in fails("sync", "--frozen", project=project)
    assert snapshot(project / "plugman.lock") == before
    pins = run("lock", project=project)["plugins"]
    assert snapshot(project / "plugman.lock") != before
    assert run("sync", "--locked", project=project)["changes"][0]["id"] == pins[0]["id"]


def test_update_is_content_hash_aware(project: Path) -> None:
    run("marketplace", "add", "./marketplace", project=project)
    first = run("install", "toolbox", project=project)["changes"][0]
    assert run("outdated", project=project)["plugins"] == []
    assert run("update", project=project)["changes"] == []
    (project / "marketplace" / "plugins" / "toolbox" / "README.md").write_text("changed\n")
    [row] = run("outdated", project=project)["plugins"]
    assert (row["version"], row["available"]) == ("0.1.0", "0.1.0")
    [change] = run("update", "toolbox", project=project)["changes"]
    assert change["content_hash"] != first["content_hash"]
    assert run("outdated", project=project)["plugins"] == []


def test_update_and_sync_record_what_the_new_content_brings(project: Path) -> None:
    run("marketplace", "add", "./marketplace", project=project)
    run("install", "code-review", "--scope", "project", project=project)
    commands = project / "marketplace" / "plugins" / "code-review" / "commands"
    commands.mkdir(exist_ok=True)
    (commands / "added-later.md").write_text("Run it.\n")
    run("update", "code-review", project=project)
    [row] = run("list", project=project)["plugins"]
    assert "added-later" in row["components"]["commands"]
    (commands / "added-later.md").unlink()
    run("sync", project=project)  # the declaration's plugin, resolved afresh
    [row] = run("list", project=project)["plugins"]
    assert "added-later" not in row["components"]["commands"]


def test_dependencies_are_installed_and_removed_with_their_dependent(
    tmp_path: Path, isolated_home: Path
) -> None:
    market = make_marketplace(
        tmp_path / "m",
        {
            "app": {"version": "1.0.0", "dependencies": [{"name": "lib", "version": "^1.1"}]},
            "lib": {"version": "1.2.0"},
            "old": {"version": "1.0.0", "dependencies": [{"name": "lib", "version": "<1.0"}]},
        },
    )
    run("marketplace", "add", str(market))
    before = snapshot(isolated_home)
    done = run("install", "app")["changes"]
    assert [c["id"] for c in done] == ["app@deps", "lib@deps"]
    assert "lib@deps is needed by app@deps" in fails("uninstall", "lib")
    out = fails("install", "old")
    assert "cannot install lib@deps 1.2.0" in out
    assert "old@deps require <1.0" in out
    assert [c["id"] for c in run("uninstall", "app")["changes"]] == ["app@deps", "lib@deps"]
    assert snapshot(isolated_home) == before


def test_optional_dependencies_install_with_their_plugin_and_stand_alone(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Claude Code 2.1.332's optionalDependencies: installed with the plugin (a version range
    chooses the version), one that cannot be installed is left out with a warning, and each
    can be uninstalled on its own; a plugin in both lists is required."""
    from plugman.cli import invoke

    market = make_marketplace(
        tmp_path / "m",
        {
            "app": {"version": "1.0.0", "optionalDependencies": ["extra", "not-there", 5]},
            "extra": {"version": "1.2.0"},
            "strict": {"dependencies": ["not-there"], "optionalDependencies": ["not-there"]},
        },
    )
    run("marketplace", "add", str(market))
    before = snapshot(isolated_home)
    done = invoke(["install", "app"])
    assert done.exit_code == 0, done.output
    assert "optional dependency not-there@deps of app@deps left out" in done.stderr, done.stderr
    assert sorted(p["id"] for p in run("list")["plugins"]) == ["app@deps", "extra@deps"]
    assert [c["id"] for c in run("uninstall", "extra")["changes"]] == ["extra@deps"]
    assert "not-there" in fails("install", "strict")  # required after all
    assert [c["id"] for c in run("uninstall", "app")["changes"]] == ["app@deps"]
    assert snapshot(isolated_home) == before


def test_search_and_info(project: Path) -> None:
    run("marketplace", "add", "./marketplace", project=project)
    ids = [row["id"] for row in run("search", "hook", project=project)["plugins"]]
    assert "guardrails@plugman-samples" in ids
    run("install", "guardrails", project=project)
    found = run("info", "guardrails@plugman-samples", project=project)["plugin"]
    assert found["installed"] == {"user": "1.1.0"}
    assert found["source"]["type"] == "path"


def test_install_from_a_path_a_git_url_and_an_archive(tmp_path: Path) -> None:
    import subprocess
    import zipfile

    plugin = SAMPLES / "plugins" / "writing-skills"
    done = run("install", str(plugin))["changes"]
    assert done[0]["id"] == "writing-skills@direct"
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLES / "plugins" / "code-review", repo)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    assert run("install", f"file://{repo}")["changes"][0]["id"] == "code-review@direct"
    archive = tmp_path / "guardrails.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in (SAMPLES / "plugins" / "guardrails").rglob("*"):
            zipped.write(
                path, Path("guardrails") / path.relative_to(SAMPLES / "plugins" / "guardrails")
            )
    import hashlib

    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert "sha256 mismatch" in fails("install", f"file://{archive}#sha256={'0' * 64}")
    assert run("install", f"file://{archive}#sha256={digest}")["changes"][0]["id"] == (
        "guardrails@direct"
    )
    listed = {p["id"]: p["source"]["type"] for p in run("list")["plugins"]}
    assert listed == {
        "writing-skills@direct": "path",
        "code-review@direct": "url",
        "guardrails@direct": "archive",
    }


def test_progress_messages_reach_a_listener(tmp_path: Path) -> None:
    import subprocess

    from plugman.commands import install as installer
    from plugman.core import progress
    from plugman.core.paths import Paths

    repo = tmp_path / "repo"
    shutil.copytree(SAMPLES / "plugins" / "toolbox", repo)
    (repo / ".claude-plugin").mkdir()
    (repo / ".claude-plugin" / "plugin.json").write_text('{"name": "toolbox"}')
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    messages: list[str | progress.Step] = []
    with progress.listening(messages.append):
        installer.install(Paths.from_env(project=tmp_path), [f"file://{repo}"], "user")
    assert messages == [progress.Step(1, 1, f"fetching file://{repo}"), f"cloning file://{repo}"]


def test_list_shows_pin_and_components(tmp_path: Path) -> None:
    import zipfile

    archive = tmp_path / "skills.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in (SAMPLES / "plugins" / "writing-skills").rglob("*"):
            zipped.write(path, path.relative_to(SAMPLES / "plugins" / "writing-skills"))
    run("install", f"file://{archive}")
    run("install", str(SAMPLES / "plugins" / "guardrails"))
    rows = {row["id"]: row for row in run("list")["plugins"]}
    skills = rows["writing-skills@direct"]
    assert skills["pin"] == skills["source"]["sha256"]
    assert len(skills["pin"]) == 64
    assert skills["components"]["skills"] == ["changelog-writer", "commit-message"]
    guard = rows["guardrails@direct"]
    assert guard["pin"] is None
    assert guard["components"]["hooks"] == [
        "PostToolUse",
        "PreToolUse",
        "SessionStart",
        "Stop",
        "UserPromptSubmit",
    ]


def test_a_lock_from_a_newer_plugman_is_refused(project: Path) -> None:
    (project / "plugman.lock").write_text("format = 2\nplugins = []\n")
    (project / "plugman.toml").write_text('[plugins]\n"x@y" = "*"\n')
    assert "has format 2; this plugman reads 1" in fails("sync", "--frozen", project=project)

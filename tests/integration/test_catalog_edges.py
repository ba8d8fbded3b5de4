"""Rough edges of the catalog commands a new user hit (issue 24, section 2), each kept fixed
with the real CLI on real files: `info` and `search` show the version `install` installs,
`outdated` and `update` say what moved, `marketplace add` says what is wrong with a path, and
marketplace names follow Claude Code's rule."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from plugman.cli import invoke
from plugman.cli.runner import Result
from tests.conftest import SAMPLES
from tests.integration.helpers import git, run, snapshot
from tests.integration.test_marketplaces import files


def cli(*args: str, project: Path) -> Result:
    return invoke(["--project", str(project), *args])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def sample_market(folder: Path, name: str = "plugman-samples") -> Path:
    shutil.copytree(SAMPLES, folder, ignore=shutil.ignore_patterns("invalid"))
    edit_json(folder / ".claude-plugin" / "marketplace.json", lambda doc: doc.update(name=name))
    return folder


def edit_json(file: Path, change: Any) -> None:
    doc = json.loads(file.read_text())
    change(doc)
    file.write_text(json.dumps(doc, indent=2) + "\n")


# marketplace add: a missing folder is a missing folder; a file is not a marketplace


def test_a_missing_folder_is_said_to_be_missing(project: Path, isolated_home: Path) -> None:
    missing = cli("marketplace", "add", "/does/not/exist", project=project)
    assert missing.exit_code == 1
    assert "the folder '/does/not/exist' does not exist" in missing.stderr
    relative = cli("marketplace", "add", "./nowhere", project=project)
    assert relative.exit_code == 1
    assert f"the folder './nowhere' does not exist (looked for {project / 'nowhere'})" in (
        relative.stderr
    )
    assert "github" not in relative.stderr.lower()  # never taken for owner/repo
    not_json = json.loads(
        cli("marketplace", "add", "/does/not/exist", "--json", project=project).stdout
    )
    assert "does not exist" in not_json["error"]["message"]
    assert not (isolated_home / "state" / "marketplaces.json").exists()


def test_a_local_file_that_is_not_an_archive_is_named_as_such(
    project: Path, isolated_home: Path
) -> None:
    (project / "plugin.zip").write_text("not a zip\n")
    before = files(snapshot(isolated_home, project))
    failed = cli("install", "./plugin.zip", project=project)
    assert failed.exit_code == 1, failed.output
    said = failed.stderr
    assert f"the local file {project / 'plugin.zip'} is not a valid archive" in said
    assert "zip or tar" in said
    assert "download" not in said and "URL" not in said
    assert files(snapshot(isolated_home, project)) == before
    added = cli("marketplace", "add", "./plugin.zip", project=project)
    assert added.exit_code == 1
    assert "'./plugin.zip' is a file, not a marketplace" in added.stderr


# marketplace names: Claude Code's rule, for marketplace.json's name and for --name


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("bad name", "cannot contain spaces"),
        ("a..b", "cannot contain '..'"),
        ("Inline", "is reserved for Claude Code's --plugin-dir session plugins"),
        ("claude-plugins-extra", "impersonates an official Anthropic/Claude marketplace"),
    ],
)
def test_marketplace_names_follow_claude_codes_rule(
    name: str, says: str, tmp_path: Path, project: Path, isolated_home: Path
) -> None:
    given = cli(
        "marketplace", "add", str(sample_market(tmp_path / "m1")), "--name", name, project=project
    )
    assert given.exit_code == 1, given.output
    assert f"marketplace name {name!r} {says}" in given.stderr
    own = cli("marketplace", "add", str(sample_market(tmp_path / "m2", name)), project=project)
    assert own.exit_code == 1, own.output
    assert f"marketplace name {name!r} {says}" in own.stderr
    assert run("marketplace", "list", project=project)["marketplaces"] == []
    shown = cli("validate", str(tmp_path / "m2"), project=project)
    assert shown.exit_code == 1 and f"marketplace name {name!r} {says}" in shown.stdout


# info and search show the version install installs (plugin.json's wins, as in Claude Code)


def git_market(folder: Path, plugins: dict[str, dict[str, Any]]) -> Path:
    """A real git repository holding a marketplace `versions` of these plugins, each with a
    skill: name -> {"listed": catalog version or None, "own": plugin.json version or None}."""
    entries = []
    for name, versions in plugins.items():
        root = folder / "plugins" / name
        (root / ".claude-plugin").mkdir(parents=True)
        (root / "skills" / "hello").mkdir(parents=True)
        manifest = {"name": name, "description": f"The {name} plugin."}
        if versions.get("own"):
            manifest["version"] = versions["own"]
        (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
        (root / "skills" / "hello" / "SKILL.md").write_text(
            "---\nname: hello\ndescription: Says hello.\n---\nSay hello.\n"
        )
        entry = {"name": name, "source": f"./plugins/{name}", "description": f"The {name} one."}
        if versions.get("listed"):
            entry["version"] = versions["listed"]
        entries.append(entry)
    catalog = {"name": "versions", "owner": {"name": "Tester"}, "plugins": entries}
    (folder / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (folder / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog, indent=2))
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "first")
    return folder


def test_info_and_search_show_the_version_install_installs(tmp_path: Path, project: Path) -> None:
    upstream = git_market(
        tmp_path / "upstream",
        {"bumped": {"listed": "1.0.0", "own": "2.0.0"}, "listed-only": {"listed": "0.4.0"}},
    )
    run("marketplace", "add", f"file://{upstream}", project=project)
    shown = cli("info", "bumped", project=project)
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert lines[0] == "bumped@versions 2.0.0"
    assert "version:    2.0.0 from its plugin.json (the catalog entry says 1.0.0)" in lines
    doc = run("info", "bumped", project=project)["plugin"]
    assert (doc["version"], doc["catalog_version"], doc["plugin_json_version"]) == (
        "2.0.0",
        "1.0.0",
        "2.0.0",
    )
    found = cli("search", "bumped", project=project).stdout
    assert found.startswith("bumped@versions 2.0.0 (catalog: 1.0.0)  The bumped one."), found
    hit = run("search", "bumped", project=project)["plugins"][0]
    assert (hit["version"], hit["catalog_version"], hit["plugin_json_version"]) == (
        "2.0.0",
        "1.0.0",
        "2.0.0",
    )
    done = run("install", "bumped", "listed-only", project=project)["changes"]
    assert {c["id"]: c["version"] for c in done} == {
        "bumped@versions": "2.0.0",
        "listed-only@versions": "0.4.0",  # no version in plugin.json: the entry's, as Claude's
    }
    assert cli("info", "bumped", project=project).stdout.splitlines()[0] == "bumped@versions 2.0.0"
    assert "installed:  user 2.0.0" in cli("info", "bumped", project=project).stdout
    assert cli("info", "listed-only", project=project).stdout.splitlines()[0] == (
        "listed-only@versions 0.4.0"
    )


# outdated says when new content keeps its version; update says what it moved from


def test_outdated_and_update_say_what_moves(tmp_path: Path, project: Path) -> None:
    upstream = git_market(
        tmp_path / "upstream",
        {"steady": {"listed": "1.6.0", "own": "1.6.0"}, "bumped": {"own": "1.0.0"}},
    )
    first = git(upstream, "rev-parse", "HEAD").strip()
    run("marketplace", "add", f"file://{upstream}", project=project)
    run("install", "steady", "bumped", project=project)
    (upstream / "plugins" / "steady" / "skills" / "hello" / "SKILL.md").write_text(
        "---\nname: hello\ndescription: Says hello.\n---\nSay hello, warmly.\n"
    )
    edit_json(
        upstream / "plugins" / "bumped" / ".claude-plugin" / "plugin.json",
        lambda doc: doc.update(version="1.1.0"),
    )
    git(upstream, "commit", "-qam", "new content")
    second = git(upstream, "rev-parse", "HEAD").strip()
    shown = cli("outdated", project=project)
    assert shown.exit_code == 0, shown.output
    assert sorted(shown.stdout.splitlines()) == [
        "bumped@versions (user): 1.0.0 -> 1.1.0",
        "steady@versions (user): new content, same version 1.6.0 "
        f"(commit {first[:7]} -> {second[:7]})",
    ]
    rows = {r["id"]: r for r in run("outdated", project=project)["plugins"]}
    steady = rows["steady@versions"]
    assert (steady["version"], steady["available"], steady["same_version"]) == (
        "1.6.0",
        "1.6.0",
        True,
    )
    assert (steady["pin"], steady["available_pin"]) == (first, second)
    assert steady["content_hash"] != steady["available_hash"]
    assert rows["bumped@versions"]["same_version"] is False
    done = cli("update", "steady", project=project)
    assert done.exit_code == 0, done.output
    assert done.stdout.strip() == (
        "updated steady@versions (user): new content, same version 1.6.0 "
        f"(commit {first[:7]} -> {second[:7]})"
    )
    change = run("update", "bumped", project=project)["changes"][0]
    assert (change["from_version"], change["version"]) == ("1.0.0", "1.1.0")
    assert (change["from_pin"], change["pin"]) == (first, second)
    assert change["from_content_hash"] != change["content_hash"]
    assert "from_version" not in run("uninstall", "bumped", project=project)["changes"][0]


@pytest.mark.slow
def test_the_marketplace_name_rule_agrees_with_claude_code(tmp_path: Path) -> None:
    """Claude Code 2.1.332's own `plugin validate` refuses exactly the names plugman refuses."""
    import subprocess
    import sys

    from plugman.manifest.names import marketplace_refusal, unsafe_reason
    from tests.integration.agents import agent_env, claude_bin

    names = {
        "bad space": True,
        "Inline": True,
        "a..b": True,
        "claude-plugins-extra": True,
        "official.claude": True,
        "claude-code-marketplace-2": False,
        "my-agent-skills": False,
        "claude.code.official": False,
        "Upper.Case_ok": False,
    }
    home = tmp_path / "home"
    home.mkdir()
    env = agent_env(home, Path(sys.executable).parent)
    for index, (name, refused) in enumerate(names.items()):
        folder = tmp_path / f"m{index}"
        (folder / ".claude-plugin").mkdir(parents=True)
        catalog = {"name": name, "owner": {"name": "x"}, "description": "d", "plugins": []}
        (folder / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
        claude = subprocess.run(
            [str(claude_bin()), "plugin", "validate", str(folder)],
            env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert (claude.returncode != 0) is refused, (name, claude.stdout + claude.stderr)
        assert bool(unsafe_reason(name) or marketplace_refusal(name)) is refused, name

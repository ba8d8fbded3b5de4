"""`plugman tag [DIR]`: NAME--vVERSION on HEAD, in real git repositories built in tmp_path."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from plugman.cli import invoke
from plugman.cli.runner import Result
from plugman.plugins.authoring.tagging import tag_name


def cli(*args: str) -> Result:
    return invoke(list(args))


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture(autouse=True)
def clean_git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user git config leaks in; an identity comes from the environment, as a CI job's."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for kind in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{kind}_NAME", "Release Bot")
        monkeypatch.setenv(f"GIT_{kind}_EMAIL", "bot@example.invalid")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A marketplace repository with one committed plugin, plugins/tools (version 1.0.0)."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    result = cli("new", "tools", "--dir", str(root / "plugins" / "tools"), "--with", "skill")
    assert result.exit_code == 0, result.output
    set_version(root / "plugins" / "tools", "1.0.0")
    commit(root, "tools 1.0.0")
    return root


def set_version(plugin: Path, version: str) -> None:
    manifest = plugin / ".claude-plugin" / "plugin.json"
    data = json.loads(manifest.read_text())
    data["version"] = version
    manifest.write_text(json.dumps(data, indent=2) + "\n")


def tags(repo: Path) -> list[str]:
    return git(repo, "tag", "--list").split()


def test_tag_creates_an_annotated_name_version_tag_on_head(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    result = cli("tag", str(repo / "plugins" / "tools"), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["tag"], doc["action"], doc["commit"]) == ("tools--v1.0.0", "created", head)
    assert doc["annotated"] is True
    assert tags(repo) == ["tools--v1.0.0"]
    assert git(repo, "cat-file", "-t", "tools--v1.0.0") == "tag"
    assert git(repo, "rev-parse", "tools--v1.0.0^{commit}") == head
    assert git(repo, "tag", "-l", "--format=%(contents)", "tools--v1.0.0") == "tools v1.0.0"
    assert tag_name("tools", "1.0.0") == "tools--v1.0.0"


def test_tag_from_inside_the_plugin_lightweight_and_with_a_message(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo / "plugins" / "tools")
    result = cli("tag", "--lightweight")
    assert result.exit_code == 0, result.output
    assert "created lightweight tag tools--v1.0.0" in result.stdout
    assert "next: git push origin tools--v1.0.0" in result.stdout
    assert git(repo, "cat-file", "-t", "tools--v1.0.0") == "commit"
    set_version(repo / "plugins" / "tools", "1.1.0")
    commit(repo, "tools 1.1.0")
    assert cli("tag", "-m", "Tools 1.1: faster").exit_code == 0
    assert git(repo, "tag", "-l", "--format=%(contents)", "tools--v1.1.0") == "Tools 1.1: faster"


def test_tag_again_is_a_no_op_even_after_unrelated_commits(repo: Path) -> None:
    plugin = str(repo / "plugins" / "tools")
    first = git(repo, "rev-parse", "HEAD")
    assert cli("tag", plugin).exit_code == 0
    (repo / "other.txt").write_text("another plugin's change\n")
    commit(repo, "unrelated")
    result = cli("tag", plugin)
    assert result.exit_code == 0, result.output
    assert "nothing to do" in result.stdout
    assert git(repo, "rev-parse", "tools--v1.0.0^{commit}") == first


def test_tag_refuses_a_tag_at_another_commit_where_the_plugin_differs(repo: Path) -> None:
    plugin = repo / "plugins" / "tools"
    old = git(repo, "rev-parse", "HEAD")
    assert cli("tag", str(plugin)).exit_code == 0
    (plugin / "README.md").write_text("changed, version not raised\n")
    commit(repo, "change without a version bump")
    result = cli("tag", str(plugin))
    assert result.exit_code == 1
    assert "tag tools--v1.0.0 already exists, at commit" in result.stderr
    assert "hint: a released version is never moved: raise the version" in result.stderr
    assert git(repo, "rev-parse", "tools--v1.0.0^{commit}") == old


@pytest.mark.parametrize("change", ["modified", "staged", "untracked"])
def test_tag_refuses_uncommitted_changes_in_the_plugin(repo: Path, change: str) -> None:
    plugin = repo / "plugins" / "tools"
    if change == "untracked":
        (plugin / "skills" / "new.md").write_text("new\n")
    else:
        (plugin / "README.md").write_text("edited\n")
    if change == "staged":
        git(repo, "add", "-A")
    result = cli("tag", str(plugin))
    assert result.exit_code == 1, result.output
    assert "the plugin has uncommitted changes: plugins/tools/" in result.stderr
    assert "hint: commit (or stash) them first" in result.stderr
    assert tags(repo) == []


def test_changes_outside_the_plugin_do_not_block_it(repo: Path) -> None:
    (repo / "scratch.txt").write_text("not the plugin's\n")
    assert cli("tag", str(repo / "plugins" / "tools")).exit_code == 0
    assert tags(repo) == ["tools--v1.0.0"]


def test_tag_refuses_a_folder_outside_git(tmp_path: Path) -> None:
    result = cli("new", "solo", "--dir", str(tmp_path / "solo"))
    assert result.exit_code == 0
    result = cli("tag", str(tmp_path / "solo"))
    assert result.exit_code == 2
    assert "is not in a git repository" in result.stderr
    assert "hint: the version tag is a git tag: `git init`" in result.stderr


def test_tag_refuses_a_repository_without_commits_or_a_plugin_not_committed(
    tmp_path: Path, repo: Path
) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q")
    assert cli("new", "solo", "--dir", str(fresh / "solo")).exit_code == 0
    result = cli("tag", str(fresh / "solo"))
    assert result.exit_code == 1
    assert "the repository has no commits yet" in result.stderr
    assert cli("new", "ignored", "--dir", str(repo / "ignored")).exit_code == 0
    (repo / ".gitignore").write_text("ignored/\n")
    commit(repo, "ignore a folder")
    result = cli("tag", str(repo / "ignored"))
    assert result.exit_code == 1
    assert "the plugin is not in the last commit" in result.stderr


def test_tag_refuses_a_plugin_without_a_version_or_invalid(repo: Path) -> None:
    plugin = repo / "plugins" / "tools"
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "tools"}\n')
    commit(repo, "no version")
    result = cli("tag", str(plugin))
    assert result.exit_code == 1
    assert "the plugin 'tools' has no version" in result.stderr
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "tools", "version": 1}\n')
    commit(repo, "a number")
    result = cli("tag", str(plugin), "--json")
    assert result.exit_code == 1
    error = json.loads(result.stdout)["error"]
    assert error["message"] == "the plugin is not valid (1 error)"
    assert [d["code"] for d in error["diagnostics"]] == ["schema-type"]
    assert tags(repo) == []


def test_tag_refuses_a_version_git_cannot_name(repo: Path) -> None:
    plugin = repo / "plugins" / "tools"
    set_version(plugin, "1.0 beta")
    commit(repo, "odd version")
    result = cli("tag", str(plugin))
    assert result.exit_code == 1
    assert "'tools--v1.0 beta' is not a valid git tag name" in result.stderr


def test_dry_run_and_bad_options_create_nothing(repo: Path) -> None:
    plugin = str(repo / "plugins" / "tools")
    result = cli("tag", plugin, "--dry-run")
    assert result.exit_code == 0
    assert "would create annotated tag tools--v1.0.0" in result.stdout
    both = cli("tag", plugin, "--lightweight", "-m", "x")
    assert both.exit_code == 2
    assert "--message and --lightweight do not go together" in both.stderr
    assert tags(repo) == []


def test_tag_a_plugin_at_the_repository_root(tmp_path: Path) -> None:
    root = tmp_path / "solo"
    assert cli("new", "solo", "--dir", str(root), "--with", "hook").exit_code == 0
    git(root, "init", "-q")
    head = commit(root, "solo 0.1.0")
    result = cli("tag", str(root), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["commit"] == head
    assert tags(root) == ["solo--v0.1.0"]
    (root / "README.md").write_text("changed\n")
    commit(root, "change")
    assert cli("tag", str(root)).exit_code == 1

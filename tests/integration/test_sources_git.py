"""git sources against real repositories built with the `git` binary in tmp_path."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest

from plugman.core.errors import PlugmanError
from plugman.manifest.model import PluginSource
from plugman.plugins.sources import fetch
from plugman.plugins.sources.git import run_git


class Repo(NamedTuple):
    path: Path  # a working repository
    v1: str  # commit tagged v1 (version 1.0.0)
    main: str  # head of main (version 2.0.0)
    dev: str  # head of branch dev (version 3.0.0)


def git(cwd: Path, *args: str) -> str:
    """Run git for building fixtures (never through plugman's hardened runner)."""
    identity = ("-c", "user.name=Test", "-c", "user.email=test@example.com")
    argv = ["git", *identity, "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]
    result = subprocess.run([*argv, *args], cwd=cwd, check=True, capture_output=True, text=True)
    return result.stdout.strip()


def write_version(root: Path, version: str) -> None:
    manifest = {"name": "demo", "version": version}
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    sub = {"name": "sub", "version": version}
    (root / "plugins" / "sub" / ".claude-plugin" / "plugin.json").write_text(json.dumps(sub))


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture(autouse=True)
def clean_git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No user git config (signing, templates, hooks) leaks into the tests."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return home


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    path = tmp_path / "src"
    path.mkdir()
    git(path, "init", "-q")
    (path / ".claude-plugin").mkdir()
    (path / "plugins" / "sub" / ".claude-plugin").mkdir(parents=True)
    (path / "skills" / "hello").mkdir(parents=True)
    (path / "skills" / "hello" / "SKILL.md").write_text("---\nname: hello\n---\nHello\n")
    (path / "bin").mkdir()
    (path / "bin" / "tool").write_text("#!/bin/sh\necho tool\n")
    (path / "bin" / "tool").chmod(0o755)
    (path / "docs").symlink_to("skills")
    (path / "passwd").symlink_to("/etc/passwd")
    (path / "plugins" / "sub" / "up").symlink_to("../../skills")
    write_version(path, "1.0.0")
    v1 = commit(path, "one")
    git(path, "tag", "v1")
    write_version(path, "2.0.0")
    main = commit(path, "two")
    git(path, "checkout", "-q", "-b", "dev")
    write_version(path, "3.0.0")
    dev = commit(path, "three")
    git(path, "checkout", "-q", "main")
    return Repo(path, v1, main, dev)


@pytest.fixture
def github(tmp_path: Path, repo: Repo, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake GitHub: a folder of bare repositories, reached through a file:// base URL."""
    base = tmp_path / "github"
    (base / "acme").mkdir(parents=True)
    git(tmp_path, "clone", "-q", "--bare", str(repo.path), str(base / "acme" / "tools.git"))
    monkeypatch.setenv("PLUGMAN_GITHUB_URL", base.as_uri())
    return base


def version(root: Path) -> str:
    data = json.loads((root / ".claude-plugin" / "plugin.json").read_text())
    return str(data["version"])


def test_url_file_scheme_default_branch(tmp_path: Path, repo: Repo) -> None:
    dest = tmp_path / "stage"
    result = fetch(PluginSource("url", repo.path.as_uri()), dest)
    assert (result.root, result.pin, result.kind) == (dest, repo.main, "url")
    assert version(dest) == "2.0.0"
    assert not (dest / ".git").exists()
    assert (dest / "bin" / "tool").stat().st_mode & 0o111
    assert (dest / "docs").readlink() == Path("skills")
    assert not os.path.lexists(dest / "passwd")  # a link out of the plugin is dropped


def test_url_plain_path(tmp_path: Path, repo: Repo) -> None:
    result = fetch(PluginSource("url", str(repo.path)), tmp_path / "stage")
    assert result.pin == repo.main
    assert version(result.root) == "2.0.0"


def test_github_shorthand(tmp_path: Path, repo: Repo, github: Path) -> None:
    result = fetch(PluginSource("github", "acme/tools"), tmp_path / "stage")
    assert result.pin == repo.main and result.kind == "github"
    assert version(result.root) == "2.0.0"


@pytest.mark.parametrize(("ref", "expected"), [("v1", "1.0.0"), ("dev", "3.0.0")])
def test_ref_tag_and_branch(
    tmp_path: Path, repo: Repo, github: Path, ref: str, expected: str
) -> None:
    result = fetch(PluginSource("github", "acme/tools", ref=ref), tmp_path / "stage")
    assert version(result.root) == expected
    assert result.pin == {"v1": repo.v1, "dev": repo.dev}[ref]


def test_sha_wins_over_ref(tmp_path: Path, repo: Repo) -> None:
    source = PluginSource("url", repo.path.as_uri(), ref="dev", sha=repo.v1)
    result = fetch(source, tmp_path / "stage")
    assert result.pin == repo.v1
    assert version(result.root) == "1.0.0"


def test_git_subdir(tmp_path: Path, repo: Repo, github: Path) -> None:
    dest = tmp_path / "stage"
    source = PluginSource("git-subdir", "acme/tools", ref="v1", subdir="./plugins/sub/")
    result = fetch(source, dest)
    assert result.root == dest / "plugins" / "sub"
    assert result.pin == repo.v1
    assert version(result.root) == "1.0.0"
    assert not os.path.lexists(result.root / "up")  # leads out of the plugin folder


def test_inherited_git_environment_is_ignored(
    tmp_path: Path, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setenv("GIT_WORK_TREE", str(tmp_path / "nowhere"))
    assert fetch(PluginSource("url", str(repo.path)), tmp_path / "stage").pin == repo.main


def refused(tmp_path: Path, source: PluginSource, match: str) -> PlugmanError:
    dest = tmp_path / "stage"
    with pytest.raises(PlugmanError, match=match) as caught:
        fetch(source, dest)
    assert not os.path.lexists(dest)
    assert caught.value.hint
    return caught.value


@pytest.mark.parametrize("subdir", ["plugins/none", "../src", "/etc", "skills/hello/SKILL.md"])
def test_git_subdir_bad_path(tmp_path: Path, repo: Repo, subdir: str) -> None:
    refused(tmp_path, PluginSource("git-subdir", str(repo.path), subdir=subdir), "path")


def test_missing_repository(tmp_path: Path, github: Path) -> None:
    error = refused(tmp_path, PluginSource("github", "acme/nothing"), "could not clone")
    assert "acme/nothing.git" in error.message
    refused(tmp_path, PluginSource("url", str(tmp_path / "none")), "could not clone")


def test_missing_ref_and_sha(tmp_path: Path, repo: Repo) -> None:
    url = repo.path.as_uri()
    refused(tmp_path, PluginSource("url", url, ref="nope"), "ref 'nope' not found in file://")
    refused(tmp_path, PluginSource("url", url, sha="0" * 40), f"commit {'0' * 40} not found")
    refused(tmp_path, PluginSource("url", url, sha="abc123"), "not a full commit id")


@pytest.mark.parametrize("where", ["url", "ref"])
def test_option_injection_is_refused(tmp_path: Path, repo: Repo, where: str) -> None:
    canary = tmp_path / "canary"
    evil = f"--upload-pack=touch {canary}"
    if where == "url":
        source = PluginSource("url", evil)
    else:
        source = PluginSource("url", repo.path.as_uri(), ref=evil)
    refused(tmp_path, source, "starts with '-'")
    refused(tmp_path, PluginSource("url", f"ssh://-oProxyCommand=touch {canary}/x"), "host")
    refused(tmp_path, PluginSource("url", f"-oProxyCommand=touch {canary}:x"), "'-'")
    assert not canary.exists()


def test_ext_transport_is_refused(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    for url in (f"ext::sh -c touch% {canary}", "fd::3", "git://example.com/x.git"):
        refused(tmp_path, PluginSource("url", url), "transport|scheme")
    # git itself refuses too, with the options plugman passes (defence in depth)
    result = run_git(["clone", "--", f"ext::sh -c touch% {canary}", str(tmp_path / "x")])
    assert result.returncode != 0
    assert not canary.exists()


def test_hooks_never_run(tmp_path: Path, repo: Repo, clean_git_home: Path) -> None:
    canary = tmp_path / "canary"
    hook = f"#!/bin/sh\ntouch '{canary}'\n"
    for hooks in (repo.path / ".git" / "hooks", tmp_path / "template" / "hooks"):
        hooks.mkdir(parents=True, exist_ok=True)
        (hooks / "post-checkout").write_text(hook)
        (hooks / "post-checkout").chmod(0o755)
    # a template directory from the user's config installs hooks into every new clone
    git(clean_git_home, "config", "--global", "init.templateDir", str(tmp_path / "template"))
    git(tmp_path, "clone", "-q", str(repo.path), str(tmp_path / "plain"))
    assert canary.exists(), "the fixture hook should run for a plain clone"
    canary.unlink()
    fetch(PluginSource("url", str(repo.path), ref="dev"), tmp_path / "stage")
    fetch(PluginSource("url", str(repo.path), sha=repo.v1), tmp_path / "stage2")
    assert not canary.exists()


def test_submodules_are_not_fetched(tmp_path: Path, repo: Repo) -> None:
    parent = tmp_path / "parent"
    parent.mkdir()
    git(parent, "init", "-q")
    (parent / ".claude-plugin").mkdir()
    (parent / ".claude-plugin" / "plugin.json").write_text('{"name": "parent"}')
    git(parent, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(repo.path), "m")
    commit(parent, "with submodule")
    result = fetch(PluginSource("url", str(parent)), tmp_path / "stage")
    assert (result.root / "m").is_dir()
    assert list((result.root / "m").iterdir()) == []

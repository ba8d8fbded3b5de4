"""Attacks on following a moving ref (SourceKind.follow), with real git repositories.

The ref a direct git install follows comes from plugman.lock (committed: whoever wrote the last
commit) once `sync` installed it, and the revision it points to comes from the network. The
invariants attacked:

- a ref is never read by git as an option (`--upload-pack=…` would run a program): `follow`
  checks it as a clone does and passes it after `--` under `refs/heads/` / `refs/tags/`;
- what a moved ref points to is only offered by `outdated`: nothing is installed, and the
  record and plugman.lock stay as they were, until the user runs `update`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plugman.cli import invoke
from plugman.core.errors import FetchError
from plugman.core.sources import LockedSource
from plugman.manifest.model import PluginSource
from plugman.plugins.sources.git import follow
from tests.integration.helpers import git, run, snapshot


@pytest.fixture(autouse=True)
def clean_git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def _origin(tmp_path: Path) -> tuple[Path, Path]:
    bare, work = tmp_path / "origin.git", tmp_path / "work"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(tmp_path, "clone", "-q", str(bare), str(work))
    git(work, "checkout", "-q", "-b", "main")
    _push(work, "1.0.0")
    return bare, work


def _push(work: Path, version: str) -> None:
    (work / ".claude-plugin").mkdir(exist_ok=True)
    (work / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": "demo", "version": version})
    )
    git(work, "add", "-A")
    git(work, "-c", "commit.gpgsign=false", "commit", "-q", "-m", version)
    git(work, "push", "-q", "origin", "HEAD:main")


@pytest.mark.parametrize(
    "ref",
    ["--upload-pack=touch PWNED", "-oProxyCommand=touch PWNED", "main --upload-pack=touch PWNED"],
)
def test_a_hostile_ref_is_never_a_git_option(tmp_path: Path, ref: str) -> None:
    bare, _work = _origin(tmp_path)
    locked = LockedSource("url", {"url": bare.as_uri(), "commit": "0" * 40, "ref": ref})
    with pytest.raises(FetchError, match="git ref"):
        follow(locked, PluginSource("url", bare.as_uri()))
    assert not list(tmp_path.rglob("PWNED"))


def test_a_hostile_ref_in_a_committed_lock_is_refused_at_outdated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, _work = _origin(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    run("install", f"{bare.as_uri()}#main", "--scope", "project", project=project)
    lock = project / "plugman.lock"
    lock.write_text(lock.read_text().replace('ref = "main"', 'ref = "--upload-pack=touch PWNED"'))
    monkeypatch.setenv("PLUGMAN_HOME", str(tmp_path / "teammate"))  # a teammate's machine
    run("sync", "--frozen", project=project)
    said = invoke(["--project", str(project), "outdated", "--json"])
    assert said.exit_code == 1  # a source that cannot be checked, said as such
    [row] = json.loads(said.stdout)["plugins"]
    assert "starts with '-'" in str(row["problem"])
    assert not list(tmp_path.rglob("PWNED"))


def test_a_moved_branch_is_only_offered(tmp_path: Path) -> None:
    bare, work = _origin(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    run("install", f"{bare.as_uri()}#main", "--scope", "project", project=project)
    _push(work, "6.6.6")
    home = Path(str(tmp_path / "home"))
    before = snapshot(project, home)
    [offered] = run("outdated", project=project)["plugins"]
    assert offered["available"] == "6.6.6"
    assert snapshot(project, home) == before
    assert run("list", project=project)["plugins"][0]["version"] == "1.0.0"

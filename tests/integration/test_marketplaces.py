"""marketplace add / update / remove from a folder, a git repository, GitHub shorthand and a URL."""

from __future__ import annotations

import http.server
import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SAMPLES
from tests.integration.helpers import fails, run, snapshot

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]


def git_repo(folder: Path) -> Path:
    shutil.copytree(SAMPLES, folder, ignore=shutil.ignore_patterns("invalid"))
    subprocess.run([*GIT, "init", "-q", "-b", "main", str(folder)], check=True)
    commit(folder, "first")
    return folder


def files(found: dict[str, tuple[str, bytes]]) -> dict[str, tuple[str, bytes]]:
    """A snapshot without plugman's standing layout (its folders and empty lock file)."""
    return {k: v for k, v in found.items() if v[0] != "dir" and not k.endswith("/state/lock")}


def commit(folder: Path, message: str) -> None:
    subprocess.run([*GIT, "-C", str(folder), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(folder), "commit", "-qm", message], check=True)


@pytest.fixture
def http_root(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "www"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(root), **kwargs)  # type: ignore[arg-type]

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root
    server.shutdown()


def test_git_marketplace_with_ref_update_and_remove(tmp_path: Path, isolated_home: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    subprocess.run([*GIT, "-C", str(repo), "tag", "v1"], check=True)
    (repo / "plugins" / "toolbox" / "README.md").write_text("second\n")
    commit(repo, "second")
    before = snapshot(isolated_home)
    [added] = run("marketplace", "add", f"file://{repo}#v1")["marketplaces"]
    assert (added["name"], added["kind"], added["ref"]) == ("plugman-samples", "git", "v1")
    cache = isolated_home / "cache" / "marketplaces" / "plugman-samples"
    assert (cache / ".claude-plugin" / "marketplace.json").is_file()
    assert not (cache / ".git").exists()
    first = run("install", "toolbox")["changes"][0]
    assert (
        isolated_home / "data" / "store" / first["content_hash"][7:] / "README.md"
    ).read_text() != ("second\n")
    assert "toolbox@plugman-samples (user)" in fails("marketplace", "remove", "plugman-samples")
    run("uninstall", "toolbox")
    [updated] = run("marketplace", "update")["marketplaces"]
    assert updated["commit"] == added["commit"]  # still pinned to v1
    run("marketplace", "remove", "plugman-samples")
    assert files(snapshot(isolated_home)) == files(before)


def test_github_shorthand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hub = tmp_path / "hub"
    repo = git_repo(hub / "acme" / "plugins")
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(repo), str(hub / "acme" / "plugins.git")], check=True
    )
    monkeypatch.setenv("PLUGMAN_GITHUB_URL", f"file://{hub}")
    [added] = run("marketplace", "add", "acme/plugins@main")["marketplaces"]
    assert added["source"] == f"file://{hub}/acme/plugins.git"
    assert run("install", "guardrails@plugman-samples")["changes"][0]["version"] == "1.1.0"


def test_marketplace_json_url(http_root: tuple[str, Path], tmp_path: Path) -> None:
    base, root = http_root
    catalog = {
        "name": "remote",
        "owner": {"name": "t"},
        "plugins": [{"name": "local-only", "source": "./plugins/x"}],
    }
    (root / "marketplace.json").write_text(json.dumps(catalog))
    [added] = run("marketplace", "add", f"{base}/marketplace.json")["marketplaces"]
    assert (added["name"], added["kind"]) == ("remote", "url")
    assert "local-only" in [p["id"].split("@")[0] for p in run("search", "local")["plugins"]]


def test_bad_marketplaces_are_refused_without_a_trace(
    tmp_path: Path, http_root: tuple[str, Path], isolated_home: Path
) -> None:
    base, _root = http_root
    before = snapshot(isolated_home)
    evil = tmp_path / "evil" / ".claude-plugin"
    evil.mkdir(parents=True)
    (evil / "marketplace.json").write_text(
        json.dumps({"name": "../../../.ssh", "owner": {"name": "x"}, "plugins": []})
    )
    assert "'../../../.ssh' contains a path separator" in fails(
        "marketplace", "add", str(evil.parent)
    )
    assert "is not a marketplace source" in fails("marketplace", "add", "not a source at all")
    assert "404" in fails("marketplace", "add", f"{base}/missing.json")
    assert "git" in fails("marketplace", "add", f"file://{tmp_path}/nope.git").lower()
    assert not (tmp_path / "pwned").exists()
    fails("marketplace", "add", f"--upload-pack=touch {tmp_path / 'pwned'}.git")
    assert not (tmp_path / "pwned").exists()
    assert files(snapshot(isolated_home)) == files(before)


def test_project_scope_marketplace_is_declared_and_removed(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(SAMPLES, project / "market", ignore=shutil.ignore_patterns("invalid"))
    (project / "plugman.toml").write_text("# ours\n")
    before = snapshot(project / "plugman.toml")
    run("marketplace", "add", "./market", "--scope", "project", project=project)
    assert (project / "plugman.toml").read_text() == (
        '# ours\n\n[marketplaces]\nplugman-samples = {source = "./market"}\n'
    )
    run("marketplace", "remove", "plugman-samples", project=project)
    assert snapshot(project / "plugman.toml") == before


def test_managed_policy_refuses_marketplaces_before_any_io(
    tmp_path: Path, isolated_home: Path
) -> None:
    managed = isolated_home / "managed"
    managed.mkdir()
    allowed = tmp_path / "allowed"
    shutil.copytree(SAMPLES, allowed, ignore=shutil.ignore_patterns("invalid"))
    (managed / "managed-settings.toml").write_text(
        f'strictKnownMarketplaces = [{{ source = "directory", path = "{allowed}" }}]\n'
    )
    before = snapshot(isolated_home)
    out = fails("marketplace", "add", f"file://{tmp_path}/elsewhere.git")
    assert "not in strictKnownMarketplaces (managed policy)" in out
    assert snapshot(isolated_home) == before
    run("marketplace", "add", str(allowed))
    run("install", "toolbox")
    (managed / "managed-settings.toml").write_text(
        f'blockedMarketplaces = [{{ source = "directory", path = "{allowed}" }}]\n'
    )
    assert "blocked by blockedMarketplaces" in fails("install", "guardrails")
    (managed / "managed-settings.toml").write_text("strictKnownMarketplaces = [\n")
    assert "is not valid TOML" in fails("install", "guardrails")

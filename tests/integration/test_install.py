"""Install and uninstall for real: the store, records, plugman.toml and plugman.lock."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import SAMPLES
from tests.integration.helpers import fails, run, snapshot

SAMPLE_PLUGINS = [
    "notes-server",
    "remote-docs",
    "guardrails",
    "code-review",
    "writing-skills",
    "toolbox",
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "plugman.toml").write_text("# my team's plugins\n[tool]\nx = 1  # keep me\n")
    return folder


@pytest.mark.parametrize("scope", ["user", "project", "local"])
def test_install_then_uninstall_every_sample_leaves_no_trace(
    scope: str, project: Path, isolated_home: Path
) -> None:
    run("marketplace", "add", str(SAMPLES), project=project)
    before = snapshot(isolated_home, project)
    for name in SAMPLE_PLUGINS:
        installed = run("install", name, "--scope", scope, project=project)["changes"]
        assert [c["id"] for c in installed] == [f"{name}@plugman-samples"]
        listed = run("list", project=project)["plugins"]
        assert [(p["id"], p["scope"]) for p in listed] == [(f"{name}@plugman-samples", scope)]
        tree = (
            isolated_home / "data" / "store" / installed[0]["content_hash"].removeprefix("sha256:")
        )
        assert (tree / "README.md").is_file()
        run("uninstall", name, "--scope", scope, project=project)
        assert snapshot(isolated_home, project) == before, name


def test_project_install_writes_declaration_and_lock(project: Path) -> None:
    run("marketplace", "add", str(SAMPLES), project=project)
    run(
        "install",
        "guardrails@plugman-samples>=1.0",
        "code-review",
        "--scope",
        "project",
        project=project,
    )
    toml = (project / "plugman.toml").read_text()
    assert toml.startswith("# my team's plugins\n[tool]\nx = 1  # keep me\n")
    assert '"guardrails@plugman-samples" = ">=1.0"' in toml
    assert '"code-review@plugman-samples" = "*"' in toml
    lock = (project / "plugman.lock").read_text()
    assert 'id = "code-review@plugman-samples"' in lock
    assert 'source = {path = "./plugins/guardrails", type = "path"}' in lock
    assert lock.count('content_hash = "sha256:') == 2


def test_same_content_is_stored_once(project: Path, isolated_home: Path) -> None:
    run("marketplace", "add", str(SAMPLES), project=project)
    first = run("install", "toolbox", "--scope", "user", project=project)["changes"][0]
    second = run("install", "toolbox", "--scope", "project", project=project)["changes"][0]
    assert first["content_hash"] == second["content_hash"]
    assert len(list((isolated_home / "data" / "store").iterdir())) == 2  # the tree + .staging
    run("uninstall", "toolbox", "--scope", "user", project=project)
    tree = isolated_home / "data" / "store" / first["content_hash"].removeprefix("sha256:")
    assert tree.is_dir()  # still used by the project scope


def test_errors_name_the_next_step(project: Path) -> None:
    run("marketplace", "add", str(SAMPLES), project=project)
    assert "plugin 'nope' not found in any known marketplace" in fails(
        "install", "nope", project=project
    )
    assert "Run" in fails("install", "nope", project=project) or "plugman search" in fails(
        "install", "nope", project=project
    )
    out = fails("install", "guardrails@plugman-samples>=2", project=project)
    assert "require >=2" in out
    assert "is not installed in the user scope" in fails("uninstall", "guardrails", project=project)


def test_uninstall_refuses_a_changed_declaration(project: Path) -> None:
    run("marketplace", "add", str(SAMPLES), project=project)
    run("install", "toolbox", "--scope", "project", project=project)
    toml = project / "plugman.toml"
    toml.write_text(
        toml.read_text().replace(
            '"toolbox@plugman-samples" = "*"', '"toolbox@plugman-samples" = ">=0.1"'
        )
    )
    before = snapshot(project)
    assert "not as plugman wrote it" in fails(
        "uninstall", "toolbox", "--scope", "project", project=project
    )
    assert snapshot(project) == before
    run("uninstall", "toolbox", "--scope", "project", "--force", project=project)
    assert "toolbox" not in toml.read_text()


def test_enable_disable(project: Path) -> None:
    run("marketplace", "add", str(SAMPLES), project=project)
    run("install", "toolbox", project=project)
    run("disable", "toolbox", project=project)
    assert run("list", project=project)["plugins"][0]["enabled"] is False
    run("enable", "toolbox", project=project)
    assert run("list", project=project)["plugins"][0]["enabled"] is True


def test_marketplace_remove_is_refused_while_plugins_use_it(project: Path) -> None:
    run("marketplace", "add", str(SAMPLES), project=project)
    run("install", "toolbox", project=project)
    assert "toolbox@plugman-samples (user)" in fails(
        "marketplace", "remove", "plugman-samples", project=project
    )
    run("uninstall", "toolbox", project=project)
    run("marketplace", "remove", "plugman-samples", project=project)
    assert run("marketplace", "list", project=project)["marketplaces"] == []


def test_dry_run_changes_nothing(project: Path, isolated_home: Path) -> None:
    run("marketplace", "add", str(SAMPLES), project=project)
    before = snapshot(isolated_home, project)
    planned = run("install", "guardrails", "--dry-run", project=project)["changes"]
    assert planned[0]["action"] == "would install"
    assert snapshot(isolated_home, project) == before
    json.dumps(planned)


def test_written_files_match_their_published_schemas(project: Path) -> None:
    import tomllib

    from plugman.manifest import schema

    run("marketplace", "add", str(SAMPLES), project=project)
    run("install", "guardrails>=1", "toolbox", "--scope", "project", project=project)
    for file, name in (
        ("plugman.toml", "plugman-toml.schema.json"),
        ("plugman.lock", "plugman-lock.schema.json"),
    ):
        data = tomllib.loads((project / file).read_text())
        found = [
            (f.severity, f.path, f.message) for f in schema.check(data, schema.load(name), name, ())
        ]
        assert found == [("warning", ("tool",), "unknown key 'tool'")] * (file == "plugman.toml"), (
            file
        )


def test_a_failed_install_changes_nothing(
    project: Path, isolated_home: Path, tmp_path: Path
) -> None:
    run("marketplace", "add", str(SAMPLES), project=project)
    before = snapshot(isolated_home, project)
    broken = tmp_path / "broken"
    (broken / ".claude-plugin").mkdir(parents=True)
    (broken / ".claude-plugin" / "plugin.json").write_text('{"name": "broken", "skills": "../x"}')
    out = fails("install", "guardrails", str(broken), "--scope", "project", project=project)
    assert "is not a valid plugin" in out
    assert "leaves the plugin root" in out
    assert snapshot(isolated_home, project) == before


def test_reinstall_keeps_a_hand_written_declaration(project: Path) -> None:
    run("marketplace", "add", str(SAMPLES), project=project)
    toml = project / "plugman.toml"
    toml.write_text(toml.read_text() + '\n[plugins]\n"toolbox@plugman-samples" = "~=0.1"  # ours\n')
    before = toml.read_text()
    run("install", "toolbox", "--scope", "project", project=project)
    run("install", "toolbox>=0.1", "--scope", "project", project=project)
    assert toml.read_text().startswith(before)
    run("uninstall", "toolbox", "--scope", "project", project=project)
    assert "toolbox" not in toml.read_text()

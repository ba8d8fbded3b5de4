"""`plugman import claude` on the Claude Code states the real binary is not needed to make: a
GitHub marketplace (no GitHub here), a marketplace name that is a path (`../../.ssh`, seen in
the wild), a plugin another project installed, a broken state file, `CLAUDE_CONFIG_DIR`, and
`--scope`. The files are written in the shapes Claude Code 2.1.328 writes (see
test_claude_import.py, where the binary writes them itself)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from plugman.cli import invoke
from tests.integration.helpers import run, snapshot
from tests.integration.test_claude_import import make_marketplace


def claude_state(
    config: Path, markets: dict[str, Any], installed: dict[str, Any], enabled: dict[str, bool]
) -> None:
    plugins = config / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    known = {
        name: {"source": source, "installLocation": str(plugins / "marketplaces" / name)}
        for name, source in markets.items()
    }
    (plugins / "known_marketplaces.json").write_text(json.dumps(known, indent=2))
    (plugins / "installed_plugins.json").write_text(
        json.dumps({"version": 2, "plugins": installed}, indent=2)
    )
    (config / "settings.json").write_text(json.dumps({"enabledPlugins": enabled}, indent=2))


def entry(scope: str, project: Path | None = None) -> list[dict[str, Any]]:
    found: dict[str, Any] = {"scope": scope, "version": "1.0.0", "installPath": "/nowhere"}
    return [found | ({"projectPath": str(project)} if project else {})]


@pytest.fixture
def project(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("PLUGMAN_GITHUB_URL", str(tmp_path / "no-github"))  # no network
    return folder.resolve()


def test_what_cannot_be_imported_is_reported_with_why_and_the_rest_is_imported(
    tmp_path: Path, home: Path, project: Path
) -> None:
    tools = make_marketplace(tmp_path / "tools", "tools", {"alpha": False}, git=False)
    claude_state(
        home / ".claude",
        {
            "tools": {"source": "directory", "path": str(tools)},
            "gh": {"source": "github", "repo": "someone/market"},
            "../../.ssh": {"source": "directory", "path": str(tools)},
            "hdr": {"source": "url", "url": "https://x.test/m.json", "headers": {"A": "b"}},
        },
        {
            "alpha@tools": entry("user") + entry("project", tmp_path / "other-project"),
            "beta@gh": entry("user"),
            "mine@skills-dir": entry("user"),
            "ghost@tools": entry("user"),  # gone from its marketplace since Claude installed it
        },
        {"alpha@tools": True, "beta@gh": True},
    )
    dry = run("import", "claude", project=project)
    plugins = {(p["id"], p["scope"]): p for p in dry["plugins"]}
    assert plugins["alpha@tools", "user"]["action"] == "install"
    assert "another project" in plugins["alpha@tools", "project"]["reason"]
    assert plugins["mine@skills-dir", "user"]["reason"] == "not from a marketplace"
    markets = {m["name"]: m for m in dry["marketplaces"]}
    assert markets["../../.ssh"]["action"] == "skip"
    assert markets["hdr"]["action"] == "skip" and "headers" in markets["hdr"]["reason"]
    assert markets["gh"]["action"] == "add"  # it may be reachable: only fetching tells

    done = run("import", "claude", "--apply", project=project)
    markets = {m["name"]: m for m in done["marketplaces"]}
    assert markets["gh"]["action"] == "skip" and markets["gh"]["reason"], markets["gh"]
    plugins = {(p["id"], p["scope"]): p for p in done["plugins"]}
    assert plugins["beta@gh", "user"]["action"] == "skip"
    assert plugins["alpha@tools", "user"]["action"] == "install"
    ghost = plugins["ghost@tools", "user"]
    assert ghost["action"] == "skip" and "ghost" in ghost["reason"], ghost
    listed = run("list", project=project)["plugins"]
    assert [(p["id"], p["scope"], p["enabled"]) for p in listed] == [("alpha@tools", "user", True)]
    assert [m["name"] for m in run("marketplace", "list", project=project)["marketplaces"]] == [
        "tools"
    ]
    assert not (home / ".ssh").exists() and not (tmp_path / ".ssh").exists()


def test_claude_config_dir_and_scope_choose_what_is_read(
    tmp_path: Path, home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = make_marketplace(
        tmp_path / "tools", "tools", {"alpha": False, "beta": False}, git=False
    )
    config = tmp_path / "elsewhere"
    claude_state(
        config,
        {"tools": {"source": "directory", "path": str(tools)}},
        {"alpha@tools": entry("user"), "beta@tools": entry("local", project)},
        {"alpha@tools": False},
    )
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    local = run("import", "claude", "--scope", "local", project=project)
    assert [(p["id"], p["scope"]) for p in local["plugins"]] == [("beta@tools", "local")]
    user = run("import", "claude", "--scope", "user", "--apply", project=project)
    assert [(p["id"], p["enabled"]) for p in user["plugins"]] == [("alpha@tools", False)]
    listed = run("list", project=project)["plugins"]
    assert [(p["id"], p["enabled"]) for p in listed] == [("alpha@tools", False)]


def test_a_broken_state_file_is_a_clear_error_and_changes_nothing(
    home: Path, project: Path, isolated_home: Path
) -> None:
    (home / ".claude" / "plugins").mkdir(parents=True)
    (home / ".claude" / "plugins" / "installed_plugins.json").write_text("{not json")
    before = snapshot(isolated_home, project)
    result = invoke(["import", "claude", "--apply", "--json"])
    assert result.exit_code == 1, result.output
    error = json.loads(result.stdout)["error"]
    assert "installed_plugins.json" in error["message"] and error["hint"]
    assert snapshot(isolated_home, project) == before


def test_undo_with_nothing_imported_says_so(project: Path) -> None:
    result = invoke(["import", "claude", "--undo"])
    assert result.exit_code == 1 and "no Claude import to undo" in result.output
    usage = invoke(["import", "claude", "--scope", "managed"])
    assert usage.exit_code == 2 and "user, project, local or all" in usage.output

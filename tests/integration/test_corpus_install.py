"""Every plugin of the corpus marketplaces installs as in Claude Code, and leaves no trace.

The marketplaces of `tests/corpus/manifests` are served as git repositories on a stand-in GitHub
(`PLUGMAN_GITHUB_URL`, a folder of bare repositories), so Anthropic's own are added as
`anthropics/<repo>`, as on github.com, and count as official. Plugins whose source is another
repository cannot be fetched here (no network); every plugin the marketplace holds in a folder
is installed and uninstalled. The slow test asks Claude Code 2.1.332 itself, as the oracle.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from plugman.cli import invoke
from tests.conftest import CORPUS
from tests.integration import agents
from tests.integration.helpers import run, snapshot

MARKETPLACES = {  # corpus folder → owner/repo on the stand-in GitHub
    "anthropics__claude-plugins-official": "anthropics/claude-plugins-official",
    "anthropics__financial-services-plugins": "anthropics/financial-services-plugins",
    "anthropics__knowledge-work-plugins": "anthropics/knowledge-work-plugins",
    "anthropics__knowledge-work-plugins/partner-built/brand-voice": "tribeai/brand-voice",
    "obra__superpowers": "obra/superpowers",
    "thedotmack__claude-mem": "thedotmack/claude-mem",
    "wshobson__agents": "wshobson/agents",
}


def catalog(folder: Path) -> dict[str, object]:
    doc = json.loads((folder / ".claude-plugin" / "marketplace.json").read_text())
    assert isinstance(doc, dict)
    return doc


def local_plugins(folder: Path) -> list[str]:
    """The entries whose plugin is a folder of the marketplace (the corpus keeps data files
    only: a few folders are missing, and Claude Code cannot install those either)."""
    doc = catalog(folder)
    plugins = doc["plugins"]
    assert isinstance(plugins, list)
    root = doc.get("metadata", {}).get("pluginRoot")  # type: ignore[attr-defined]
    found = []
    for entry in plugins:
        source = entry["source"]
        if not isinstance(source, str):
            continue
        if root and "/" not in source and not source.startswith("."):
            source = f"{root}/{source}"
        if (folder / source).is_dir():
            found.append(entry["name"])
    return found


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every corpus marketplace as a git repository under a stand-in GitHub."""
    root = tmp_path / "github"
    for folder, repo in MARKETPLACES.items():
        work = root / f"{repo}.git"
        shutil.copytree(CORPUS / folder, work)
        git("init", "-q", "-b", "main", cwd=work)
        git("add", "-A", cwd=work)
        git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "corpus", cwd=work)
    monkeypatch.setenv("PLUGMAN_GITHUB_URL", root.as_uri())
    return root


def test_every_corpus_plugin_installs_and_uninstalls_without_a_trace(
    tmp_path: Path,
    isolated_home: Path,
    github: Path,
    record_property: Callable[[str, object], None],
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "plugman.toml").write_text("# hand-written\n[tool]\nkeep = true\n")
    installed: list[str] = []
    refused: list[str] = []
    for folder, repo in MARKETPLACES.items():
        added = invoke(["--project", str(project), "marketplace", "add", repo])
        assert added.exit_code == 0, added.output
        market = str(catalog(CORPUS / folder)["name"])
        before = snapshot(isolated_home, project)
        for plugin in local_plugins(CORPUS / folder):
            spec = f"{plugin}@{market}"
            result = invoke(["--project", str(project), "install", spec, "--scope", "project"])
            assert result.exception is None or isinstance(result.exception, SystemExit)
            if result.exit_code != 0:
                refused.append(f"{spec}: {result.output}")
                continue
            run("uninstall", spec, "--scope", "project", project=project)
            assert snapshot(isolated_home, project) == before, spec
            installed.append(spec)
        run("marketplace", "remove", market, project=project)
    # As Claude Code 2.1.332 refuses it: its plugin.json lists the folder "./agents" as an agent
    # path, which must end in .md (tests/claude_rules/rules.json, row agents-folder-list).
    assert [line.split(":")[0] for line in refused] == ["pptx-deck-creation@claude-code-workflows"]
    # Claude Code installs the same 164: the slow test below compares them one by one.
    assert len(installed) == 164
    record_property("summary", f"corpus install: {len(installed)} installed and removed")


def test_a_reserved_marketplace_name_needs_anthropics_github(
    isolated_home: Path, github: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(CORPUS / "thedotmack__claude-mem", copy)
    doc = catalog(copy) | {"name": "claude-plugins-official"}
    (copy / ".claude-plugin" / "marketplace.json").write_text(json.dumps(doc))
    result = invoke(["marketplace", "add", str(copy)])
    assert result.exit_code == 1
    assert "reserved for official Anthropic marketplaces" in result.stderr
    assert "'anthropics' organization" in result.stderr
    listed = run("marketplace", "list")["marketplaces"]
    assert listed == []
    official = invoke(["marketplace", "add", "anthropics/claude-plugins-official"])
    assert official.exit_code == 0, official.output


@pytest.mark.slow
def test_plugman_installs_every_plugin_claude_code_installs(
    tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    """Claude Code 2.1.332 as the oracle, over every corpus marketplace (each copy renamed:
    Claude Code takes a reserved name only from github.com/anthropics)."""
    claude = agents.claude_bin()
    home = tmp_path / "claude-home"
    home.mkdir()
    env = agents.agent_env(home, claude.parent)
    claude_installed: set[str] = set()
    plugman_installed: set[str] = set()
    for number, folder in enumerate(MARKETPLACES):
        copy = tmp_path / f"oracle-{number}"
        shutil.copytree(CORPUS / folder, copy)
        doc = catalog(copy) | {"name": copy.name}
        (copy / ".claude-plugin" / "marketplace.json").write_text(json.dumps(doc))
        added = subprocess.run(
            [str(claude), "plugin", "marketplace", "add", str(copy)],
            env=env,
            cwd=home,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert added.returncode == 0, added.stdout + added.stderr
        run("marketplace", "add", str(copy))
        for plugin in local_plugins(copy):
            spec = f"{plugin}@{copy.name}"
            done = subprocess.run(
                [str(claude), "plugin", "install", spec],
                env=env,
                cwd=home,
                capture_output=True,
                text=True,
                timeout=120,
            )
            if done.returncode == 0:
                claude_installed.add(spec)
            if invoke(["install", spec]).exit_code == 0:
                plugman_installed.add(spec)
    assert claude_installed - plugman_installed == set()
    assert plugman_installed - claude_installed == set()
    record_property(
        "summary",
        f"corpus oracle: Claude Code 2.1.332 installs {len(claude_installed)}, plugman "
        f"{len(plugman_installed)}; plugman only: {sorted(plugman_installed - claude_installed)}",
    )

"""Attacks on the project's files as the user's (issue 33: origins), end to end with real git
clones.

Invariants attacked:

- a project file (plugman.toml, plugman.lock, `.claude/settings.json`) reached through a
  symbolic link is never read nor written by `sync`, `lock` (declarations.check_project_file,
  the rule of origins.link_on_path); the same files as real files work.
- `.claude/settings.local.json` is the user's only when git does not track it and no link is
  on its path (origins.personal): `import claude` imports the plugins a tracked (or linked) one
  enables disabled, with a note (claude_import._local_settings); the user's untracked one is
  imported as before.
- a tracked `.claude/settings.local.json` pre-approving the project's `.mcp.json` servers for
  Claude Code is named by a warning (claude_settings.pre_approved); the user's own is not.
- a credential's origin is compared in the URL standard's canonical form, and only where
  urllib connects to the same host (core.http_auth.origin).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from plugman.core.paths import Paths
from plugman.core.state import InstallRecord
from tests.integration.helpers import fails, git, run, snapshot


def make_market(root: Path) -> Path:
    folder = root / "plugins" / "alpha"
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "alpha"}))
    (folder / "commands").mkdir()
    (folder / "commands" / "alpha.md").write_text("Run alpha.\n")
    catalog = {
        "name": "deps",
        "owner": {"name": "t"},
        "plugins": [{"name": "alpha", "source": "./plugins/alpha"}],
    }
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    return root


def declaration(market: Path) -> str:
    return f'[marketplaces.deps]\nsource = "{market}"\n\n[plugins]\n"alpha@deps" = "*"\n'


def files(found: dict[str, tuple[str, bytes]]) -> dict[str, tuple[str, bytes]]:
    """A snapshot's files and links (the folders a session creates empty left out)."""
    return {k: v for k, v in found.items() if v[0] != "dir" and not k.endswith("state/lock")}


def commit(clone: Path) -> None:
    git(clone, "add", "-A", "-f")
    git(clone, "commit", "-qm", "the attacker's files")


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    folder = tmp_path / "clone"
    folder.mkdir()
    git(folder, "init", "-q")
    return folder


LINKS = [  # (what is a link, to what, the command)
    ("plugman.toml", "plugman.toml", ["sync"]),
    ("plugman.toml", "plugman.toml", ["lock"]),
    ("plugman.lock", "plugman.lock", ["sync", "--frozen"]),
    ("plugman.lock", "plugman.lock", ["lock"]),
    (".claude", ".claude", ["sync"]),
]


@pytest.mark.parametrize(("name", "target", "command"), LINKS)
def test_sync_does_not_read_or_write_a_project_file_through_a_link(
    clone: Path, tmp_path: Path, name: str, target: str, command: list[str]
) -> None:
    """Attack: the clone commits `plugman.toml`, `plugman.lock` or `.claude` as a link to a
    file elsewhere (the user's own, or the attacker's); `sync`/`lock` would read it as the
    project's declaration or write the lock there. Refused, nothing changed."""
    market = make_market(tmp_path / "market")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".claude").mkdir(parents=True)
    (elsewhere / "plugman.toml").write_text(declaration(market))
    (elsewhere / "plugman.lock").write_text("format = 1\nplugins = []\n")
    settings = {"enabledPlugins": {"alpha@deps": True}}
    (elsewhere / ".claude" / "settings.json").write_text(json.dumps(settings))
    if name != "plugman.toml":
        (clone / "plugman.toml").write_text(declaration(market))
    (clone / name).symlink_to(elsewhere / target)
    commit(clone)
    home = Path(os.environ["PLUGMAN_HOME"])
    before = files(snapshot(clone, elsewhere, home))
    said = fails(*command, project=clone)
    assert "symbolic link" in said and name in said
    assert files(snapshot(clone, elsewhere, home)) == before  # no file written, no marketplace


@pytest.mark.parametrize("command", [["sync"], ["lock"]])
def test_sync_reads_the_same_declaration_as_real_files(
    clone: Path, tmp_path: Path, command: list[str]
) -> None:
    """Paired: the same declaration, committed as real files, is synced and locked."""
    market = make_market(tmp_path / "market")
    (clone / "plugman.toml").write_text(declaration(market))
    commit(clone)
    run(*command, project=clone)
    assert "alpha@deps" in (clone / "plugman.lock").read_text()


def claude_home(tmp_path: Path, clone: Path, market: Path, monkeypatch: Any) -> Path:
    """The user's ~/.claude: the marketplace known, alpha installed at the local scope of
    this clone (disabled unless something enables it)."""
    home = tmp_path / "home"
    plugins = home / ".claude" / "plugins"
    plugins.mkdir(parents=True)
    known = {"deps": {"source": {"source": "directory", "path": str(market)}}}
    (plugins / "known_marketplaces.json").write_text(json.dumps(known))
    entry = {"scope": "local", "projectPath": str(clone.resolve()), "version": "1"}
    installed = {"version": 2, "plugins": {"alpha@deps": [entry]}}
    (plugins / "installed_plugins.json").write_text(json.dumps(installed))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return home


LOCAL_CASES = [  # (how the local settings come, enabled after import, note says)
    ("tracked", False, "tracked by git"),
    ("linked", False, "symbolic link"),
    ("untracked", True, None),
]


@pytest.mark.parametrize(("how", "enabled", "note"), LOCAL_CASES)
def test_import_claude_takes_local_settings_only_when_they_are_the_users(
    clone: Path, tmp_path: Path, monkeypatch: Any, how: str, enabled: bool, note: str | None
) -> None:
    """Attack: the clone commits `.claude/settings.local.json` (or a link standing for it)
    enabling a plugin: Claude Code's "local" settings are the user's only when git does not
    track them. `import claude` imports the plugin disabled and says why; the user's own
    untracked file enables it, as before."""
    market = make_market(tmp_path / "market")
    claude_home(tmp_path, clone, market, monkeypatch)
    settings = json.dumps({"enabledPlugins": {"alpha@deps": True}})
    (clone / ".claude").mkdir()
    if how == "linked":
        (tmp_path / "theirs.json").write_text(settings)
        (clone / ".claude" / "settings.local.json").symlink_to(tmp_path / "theirs.json")
    else:
        (clone / ".claude" / "settings.local.json").write_text(settings)
    (clone / "README").write_text("x\n")
    if how == "untracked":
        git(clone, "add", "README")
        git(clone, "commit", "-qm", "init")
    else:
        commit(clone)
    found = run("import", "claude", "--scope", "local", project=clone)
    [step] = found["plugins"]
    assert (step["action"], step["enabled"]) == ("install", enabled)
    if note is None:
        assert found["notes"] == [] and step["reason"] == ""
    else:
        assert any(note in n for n in found["notes"]), found["notes"]
    if how == "tracked":  # read, not taken as the user's: the way to enable it is said
        assert "plugman enable alpha@deps --scope local" in step["reason"]
    run("import", "claude", "--scope", "local", "--apply", project=clone)
    record = InstallRecord.load(Paths.from_env(project=clone), "local")
    assert record.plugins["alpha@deps"].enabled is enabled


@pytest.mark.parametrize(
    ("setting", "tracked"),
    [
        ({"enableAllProjectMcpServers": True}, True),
        ({"enabledMcpjsonServers": ["evil"]}, True),
        ({"enableAllProjectMcpServers": True}, False),
    ],
)
def test_a_tracked_pre_approval_of_project_servers_is_named(
    clone: Path, setting: dict[str, Any], tracked: bool
) -> None:
    """Attack: the clone commits `.claude/settings.local.json` with Claude Code's own
    pre-approval of the project's `.mcp.json` servers (Claude honours it: it starts them
    without asking). `config resolve` and `list` warn; the user's own untracked file is not
    warned about."""
    (clone / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": {"command": "true"}}}))
    (clone / ".claude").mkdir()
    (clone / ".claude" / "settings.local.json").write_text(json.dumps(setting))
    if tracked:
        commit(clone)
    else:
        git(clone, "add", ".mcp.json")
        git(clone, "commit", "-qm", "init")
    found = run("config", "resolve", project=clone)
    words = json.dumps(found)
    assert ("Claude Code takes" in words) is tracked
    if tracked:
        assert next(iter(setting)) in words and "git rm --cached" in words

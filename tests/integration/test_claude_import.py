"""Issue 27 point 2 with the real agents: Claude Code 2.1.332 itself installs plugins, and
`plugman import claude` brings them to plugman (and from there to a linked Codex); a project's
committed `.claude/settings.json` reaches a linked Gemini CLI through `plugman sync`.

Everything runs offline with a throwaway HOME: the marketplaces are folders (one of them a git
working tree) in the test's temp dir, the plugins' MCP server is the sample notes server, and
each delivery is read back by the agent's own CLI (`codex mcp list`, `codex debug
prompt-input`, `gemini mcp list`, `gemini skills list`).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SAMPLES
from tests.integration.agents import (
    agent_env,
    claude_bin,
    claude_session_events,
    codex_bin,
    connected,
    gemini_bin,
    gemini_mcp_list,
    trust_gemini_folder,
)
from tests.integration.helpers import snapshot

BIN = Path(sys.executable).parent
SERVER = SAMPLES / "plugins" / "notes-server" / "server" / "notes_server.py"


def make_plugin(root: Path, name: str, *, server: bool) -> None:
    """A plugin with one skill `<name>-skill` and, with `server`, the notes server `notes`."""
    folder = root / "plugins" / name
    (folder / ".claude-plugin").mkdir(parents=True)
    manifest: dict[str, Any] = {"name": name, "version": "1.0.0"}
    if name == "alpha":  # an option, which Claude keeps in the user's settings
        level = {"type": "string", "title": "Level", "description": "How strict"}
        manifest["userConfig"] = {"level": level}
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    skill = folder / "skills" / f"{name}-skill" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(f"---\nname: {name}-skill\ndescription: The {name} skill\n---\nDo it.\n")
    if server:
        (folder / "server").mkdir()
        shutil.copy(SERVER, folder / "server" / "notes_server.py")
        mcp = {"command": "python3", "args": ["${CLAUDE_PLUGIN_ROOT}/server/notes_server.py"]}
        (folder / ".mcp.json").write_text(json.dumps({"mcpServers": {"notes": mcp}}))


def make_marketplace(root: Path, name: str, plugins: dict[str, bool], *, git: bool) -> Path:
    for plugin, server in plugins.items():
        make_plugin(root, plugin, server=server)
    catalog = {
        "name": name,
        "owner": {"name": "tests"},
        "plugins": [{"name": p, "source": f"./plugins/{p}"} for p in plugins],
    }
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog, indent=2))
    if git:
        git_commit(root)
    return root


def git_commit(folder: Path) -> None:
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "initial"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *cmd], cwd=folder, check=True
        )


class World:
    def __init__(self, root: Path) -> None:
        self.home, self.project = root / "home", root / "project"
        self.home.mkdir()
        self.project.mkdir()
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        self.project = self.project.resolve()
        self.plugman_home = root / "plugman-home"
        self.env = agent_env(self.home, BIN) | {"PLUGMAN_HOME": str(self.plugman_home)}
        self.warnings: list[str] = []

    def run(self, cmd: list[str], *, cwd: Path | None = None, ok: bool = True) -> str:
        """An agent's (or plugman's) stdout and stderr."""
        proc = self.process(cmd, cwd)
        if ok:
            assert proc.returncode == 0, (cmd, proc.stdout, proc.stderr)
        return proc.stdout + proc.stderr

    def process(self, cmd: list[str], cwd: Path | None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            cmd, cwd=cwd or self.project, env=self.env, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip

    def plugman(self, *args: str, project: Path | None = None) -> str:
        """plugman's stdout (it must succeed); its warnings are kept in `warnings`."""
        where = project or self.project
        cmd = [sys.executable, "-m", "plugman", "--project", str(where), *args]
        proc = self.process(cmd, where)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        self.warnings += [line for line in proc.stderr.splitlines() if "warning" in line]
        return proc.stdout

    def plugman_json(self, *args: str) -> Any:
        return json.loads(self.plugman(*args, "--json"))

    def snapshot(self) -> dict[str, tuple[str, bytes]]:
        return snapshot(self.plugman_home, self.project, self.home)

    def claude(self, *args: str) -> str:
        return self.run([str(claude_bin()), *args])


@pytest.mark.slow
def test_plugins_claude_installed_are_imported_reach_codex_and_the_undo_leaves_no_trace(
    tmp_path: Path,
) -> None:
    codex_bin()  # installs the pinned agents (or skips when npm cannot be reached)
    world = World(tmp_path)
    tools = make_marketplace(
        tmp_path / "tools", "tools-market", {"alpha": True, "beta": False}, git=False
    )
    team = make_marketplace(
        tmp_path / "team", "team-market", {"gamma": True, "delta": False}, git=True
    )
    # Claude Code itself: a user marketplace and a project one; three plugins at two scopes
    # (one disabled), and a fourth at the local scope, which plugman keeps but Codex has no
    # files for
    world.claude("plugin", "marketplace", "add", str(tools))
    world.claude("plugin", "marketplace", "add", str(team), "--scope", "project")
    world.claude(
        "plugin", "install", "alpha@tools-market", "--scope", "user", "--config", "level=high"
    )
    world.claude("plugin", "install", "beta@tools-market", "--scope", "user")
    world.claude("plugin", "install", "gamma@team-market", "--scope", "project")
    world.claude("plugin", "install", "delta@team-market", "--scope", "local")
    world.claude("plugin", "disable", "beta@tools-market", "--scope", "user")
    claude_list = json.loads(world.claude("plugin", "list", "--json"))
    theirs = {  # not Claude Code 2.1.332's own bundled plugins (cc-plugin-*@builtin)
        (p["id"], p["scope"], p["enabled"]) for p in claude_list if not p["id"].endswith("@builtin")
    }
    assert len(theirs) == 4, claude_list

    (world.home / ".codex").mkdir()
    (world.home / ".codex" / "config.toml").write_text(
        f'[projects."{world.project}"]\ntrust_level = "trusted"\n'
    )
    world.plugman("agents", "add", "codex")
    world.plugman("agents", "add", "codex", "--scope", "project")
    before = world.snapshot()

    dry = world.plugman_json("import", "claude")
    assert not dry["applied"] and world.snapshot() == before
    assert {p["action"] for p in dry["plugins"]} == {"install"}, dry

    done = world.plugman_json("import", "claude", "--apply")
    assert done["applied"] and len(done["undo"]) == 6, done
    [alpha] = [p for p in done["plugins"] if p["id"] == "alpha@tools-market"]
    assert alpha["options"] == ["level"]  # the name, never the value
    imported = world.snapshot()  # before any agent ran: every change is plugman's
    touched = {p for p in before.keys() | imported.keys() if before.get(p) != imported.get(p)}
    listed = world.plugman_json("list")
    ours = {(p["id"], p["scope"], p["enabled"]) for p in listed["plugins"]}
    assert ours == theirs, (ours, theirs)
    configured = world.plugman_json("configure", "alpha", "--scope", "user")
    assert [(o["key"], o["value"]) for o in configured["options"]] == [("level", "high")]

    prompt = world.run([str(codex_bin()), "debug", "prompt-input", "hi"])
    for line in ("- alpha-skill: The alpha skill", "- gamma-skill: The gamma skill"):
        assert prompt.count(line) == 1, (line, prompt[-3000:])
    assert "beta-skill" not in prompt and "delta-skill" not in prompt  # disabled; local
    servers = world.run([str(codex_bin()), "mcp", "list"])
    rows = [line.split() for line in servers.splitlines() if line.startswith("plugin_")]
    assert sorted(r[0] for r in rows if "enabled" in r) == [
        "plugin_alpha_notes",
        "plugin_gamma_notes",
    ], servers

    undone = world.plugman_json("import", "claude", "--undo")
    assert len(undone["undone"]) == 6, undone
    after = world.snapshot()
    # the store's empty working folder, which any install leaves, is not a file
    staging = str(world.plugman_home / "data" / "store" / ".staging")
    assert after.get(staging) == ("dir", b"")
    back = sorted(p for p in touched if after.get(p) != before.get(p) and p != staging)
    assert back == [], back  # every path plugman wrote is as it was
    home = str(world.home)
    assert {k: v for k, v in after.items() if not k.startswith(home) and k != staging} == {
        k: v for k, v in before.items() if not k.startswith(home)
    }  # plugman's home and the project tree are as they were, byte for byte


def team_project(tmp_path: Path, settings: dict[str, Any]) -> tuple[Path, Path]:
    """A team's marketplace (a git repository: kit, with a skill and the notes server; other,
    a skill) and a project repository whose committed `.claude/settings.json` is `settings`
    (`MARKET` in it stands for the marketplace's URL); both paths."""
    market = make_marketplace(
        tmp_path / "team-market", "team-market", {"kit": True, "other": False}, git=True
    )
    origin = tmp_path / "origin"
    (origin / ".claude").mkdir(parents=True)
    text = json.dumps(settings, indent=2).replace("MARKET", market.as_uri())
    (origin / ".claude" / "settings.json").write_text(text + "\n")
    git_commit(origin)
    return market, origin


TEAM_SETTINGS = {
    "extraKnownMarketplaces": {"team-market": {"source": {"source": "git", "url": "MARKET"}}},
    "enabledPlugins": {"kit@team-market": True, "other@team-market": False},
}


@pytest.mark.slow
def test_sync_in_a_fresh_clone_delivers_what_claude_settings_enable_to_gemini(
    tmp_path: Path,
) -> None:
    gemini_bin()  # installs the pinned agent (or skips when npm cannot be reached)
    world = World(tmp_path)
    _, origin = team_project(tmp_path, TEAM_SETTINGS)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
    clone = clone.resolve()
    trust_gemini_folder(world.home, clone)
    world.plugman("agents", "add", "gemini", "--scope", "project", project=clone)

    frozen = [sys.executable, "-m", "plugman", "--project", str(clone), "sync", "--frozen"]
    refused = world.process(frozen, clone)  # declared, not locked: --frozen has nothing to use
    assert refused.returncode == 1 and "no plugman.lock" in refused.stderr, refused.stderr
    synced = json.loads(world.plugman("sync", "--json", project=clone))
    assert [c["id"] for c in synced["changes"]] == ["kit@team-market"], synced
    listed = json.loads(world.plugman("list", "--json", project=clone))
    assert [(p["id"], p["scope"]) for p in listed["plugins"]] == [("kit@team-market", "project")]

    skills = world.run([str(gemini_bin()), "skills", "list"], cwd=clone)
    assert len(re.findall(r"(?m)^\s*kit-skill\b", skills)) == 1, skills
    assert "other-skill" not in skills
    # the project brought this server: it waits for the user's approval, as plugman.toml's do
    before = gemini_mcp_list(world.home, clone, world.env)
    assert not connected(before, "plugin_kit_notes"), before
    world.plugman("trust", "approve", "--all", project=clone)
    after = gemini_mcp_list(world.home, clone, world.env)
    assert connected(after, "plugin_kit_notes"), after


def test_plugman_toml_wins_and_each_conflict_is_a_warning_naming_both_files(
    tmp_path: Path,
) -> None:
    world = World(tmp_path)
    market, origin = team_project(tmp_path, TEAM_SETTINGS)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(market, elsewhere)
    (origin / "plugman.toml").write_text(
        '[plugins]\n"other@team-market" = "*"\n\n'
        f'[marketplaces]\nteam-market = {{source = "{elsewhere}"}}\n'
    )
    synced = json.loads(world.plugman("sync", "--json", project=origin))
    warnings = world.warnings
    assert any(
        "marketplace 'team-market'" in w and "plugman.toml" in w and ".claude/settings.json" in w
        for w in warnings
    ), warnings
    assert any(
        "other@team-market" in w and "plugman.toml" in w and ".claude/settings.json" in w
        for w in warnings
    ), warnings
    markets = json.loads(world.plugman("marketplace", "list", "--json", project=origin))
    [team] = [m for m in markets["marketplaces"] if m["name"] == "team-market"]
    assert str(elsewhere) in json.dumps(team), team  # plugman.toml's source, not Claude's
    ids = sorted(p["id"] for p in synced["changes"])
    assert ids == ["kit@team-market", "other@team-market"]  # both declarations, unioned


def test_a_plugin_from_a_marketplace_no_file_declares_is_a_warning_not_a_failed_sync(
    tmp_path: Path,
) -> None:
    world = World(tmp_path)
    settings = TEAM_SETTINGS | {
        "enabledPlugins": {"kit@team-market": True, "review@claude-plugins-official": True}
    }
    _, origin = team_project(tmp_path, settings)
    synced = json.loads(world.plugman("sync", "--json", project=origin))
    assert [c["id"] for c in synced["changes"]] == ["kit@team-market"]
    [warning] = [w for w in world.warnings if "review@claude-plugins-official" in w]
    assert "declared in neither file" in warning and "plugman marketplace add" in warning


CLAUDE_INSTALLS = (
    ("alpha@tools-market", "user"),
    ("beta@tools-market", "user"),
    ("gamma@team-market", "project"),
    ("delta@team-market", "local"),
)


def claude_records(world: World) -> dict[str, bytes | None]:
    """The files Claude keeps its installs and their enabled state in (and its own marketplaces'
    entries: a session also records plugman's there, which Claude keeps: docs/claude-native.md)."""
    config, local = world.home / ".claude", world.project / ".claude"
    known = json.loads((config / "plugins" / "known_marketplaces.json").read_bytes())
    mine = {k: v for k, v in known.items() if not k.startswith("plugman-")}
    files = [
        config / "plugins" / "installed_plugins.json",
        config / "settings.json",
        local / "settings.json",
        local / "settings.local.json",
    ]
    return {str(f): f.read_bytes() if f.exists() else None for f in files} | {
        "known marketplaces": json.dumps(mine).encode()
    }


def loaded_plugins(world: World) -> list[tuple[str, str]]:
    """(name, Claude's id) of each plugin a real session's init event lists, builtins aside."""
    events = claude_session_events(world.project, world.env)
    [init] = [e for e in events if e.get("subtype") == "init"]
    return sorted(
        (p["name"], p["source"]) for p in init["plugins"] if not p["source"].endswith("@builtin")
    )


@pytest.mark.slow
def test_import_leaves_claude_one_copy_of_each_plugin_and_the_undo_gives_claude_its_own_back(
    tmp_path: Path,
) -> None:
    claude_bin()  # installs the pinned agent (or skips when npm cannot be reached)
    world = World(tmp_path)
    tools = make_marketplace(tmp_path / "tools", "tools-market", {"alpha": True, "beta": False},
                             git=True)  # fmt: skip
    team = make_marketplace(tmp_path / "team", "team-market", {"gamma": True, "delta": False},
                            git=True)  # fmt: skip
    # Claude Code installs four plugins at three scopes itself
    world.claude("plugin", "marketplace", "add", str(tools))
    world.claude("plugin", "marketplace", "add", str(team))
    for plugin, scope in CLAUDE_INSTALLS:
        world.claude("plugin", "install", plugin, "--scope", scope)
    names = ["alpha", "beta", "delta", "gamma"]
    theirs = loaded_plugins(world)
    assert theirs == [
        ("alpha", "alpha@tools-market"),
        ("beta", "beta@tools-market"),
        ("delta", "delta@team-market"),
        ("gamma", "gamma@team-market"),
    ], theirs
    for scope in ("user", "project", "local"):
        world.plugman("agents", "add", "claude-code", "--scope", scope)
    before = claude_records(world)

    dry = world.plugman_json("import", "claude")
    assert claude_records(world) == before
    assert sorted((c["id"], c["scope"], c["action"]) for c in dry["claude_installs"]) == [
        ("alpha@tools-market", "user", "retire"),
        ("beta@tools-market", "user", "retire"),
        ("delta@team-market", "local", "retire"),
        ("gamma@team-market", "project", "retire"),
    ], dry
    world.plugman("import", "claude", "--apply")
    ours = loaded_plugins(world)
    # each plugin exactly once, and it is plugman's copy (its skills-folder link at user
    # scope, its generated marketplace at project and local scope)
    assert [name for name, _ in ours] == names, ours
    hashed = claude_plugin_marketplace_names(world.project)
    assert dict(ours) == {
        "alpha": "alpha@skills-dir",
        "beta": "beta@skills-dir",
        "gamma": f"gamma@{hashed['project']}",
        "delta": f"delta@{hashed['local']}",
    }, ours
    listed = json.loads(world.claude("plugin", "list", "--json"))
    assert [p["id"] for p in listed if p.get("errors")] == [], listed  # no "name already taken"
    doctor = world.run([sys.executable, "-m", "plugman", "doctor", "--json"], ok=False)
    assert "two copies" not in doctor and "already taken" not in doctor, doctor

    world.plugman("import", "claude", "--undo")
    assert claude_records(world) == before  # Claude's own files, byte for byte
    assert loaded_plugins(world) == theirs


def claude_plugin_marketplace_names(project: Path) -> dict[str, str]:
    from plugman.agents.claude_plugin import marketplace_name

    return {scope: marketplace_name(scope, project) for scope in ("project", "local")}

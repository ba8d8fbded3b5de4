"""The real agents read back each state of a two-scope run (issue 34, "Must show"): Gemini CLI
and Claude Code linked at user and project scope, a plugin with a SessionStart hook, a stdio
MCP server (the repository's sample notes server, a real one) and a skill installed at each
scope, the agent writing its own keys between the steps; at each state the agent's own view
(`gemini mcp list`, `gemini skills list`; Claude's init event: its MCP servers, skills and the
SessionStart hook's output) holds exactly what plugman says it delivered, and `list --check`
reports nothing missing or false; after everything is removed, the home and project trees are
byte-identical to the start plus the agent's own writes. Codex is in test_wedge and
test_readback_hooks_real. One module-scoped run per agent (slow)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SAMPLES
from tests.integration.agents import (
    Machine,
    claude_bin,
    claude_session_events,
    gemini_bin,
    trust_claude_project,
    trust_gemini_folder,
)
from tests.integration.shared_files import tree
from tests.integration.test_claude_native import SESSION

pytestmark = pytest.mark.slow
NOTES = SAMPLES / "plugins" / "notes-server" / "server" / "notes_server.py"
PLUGINS = {"user": "ukit", "project": "pkit"}
BAD = {"missing", "failed", "disabled", "untrusted", "waits"}
STATES = ("user", "both", "project-uninstalled", "removed")


def marker(name: str) -> str:
    return f"{name.upper()}-SESSION-START"


def market(root: Path) -> None:
    """Two plugins, one per scope, each with a SessionStart hook, a stdio server, a skill."""
    for name in PLUGINS.values():
        plugin = root / name
        (plugin / ".claude-plugin").mkdir(parents=True)
        (plugin / "hooks").mkdir()
        (plugin / "server").mkdir()
        (plugin / "skills" / f"{name}-skill").mkdir(parents=True)
        manifest = {"name": name, "version": "1.0.0"}
        (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
        start = {"hooks": [{"type": "command", "command": f"echo {marker(name)}"}]}
        (plugin / "hooks" / "hooks.json").write_text(
            json.dumps({"hooks": {"SessionStart": [start]}})
        )
        shutil.copy(NOTES, plugin / "server" / "notes_server.py")
        server = {"command": "python3", "args": ["${CLAUDE_PLUGIN_ROOT}/server/notes_server.py"]}
        (plugin / ".mcp.json").write_text(json.dumps({"mcpServers": {"notes": server}}))
        skill = f"---\nname: {name}-skill\ndescription: Says hello.\n---\nSay hello.\n"
        (plugin / "skills" / f"{name}-skill" / "SKILL.md").write_text(skill)
    catalog = {
        "name": "matrix",
        "owner": {"name": "t"},
        "plugins": [{"name": n, "source": f"./{n}"} for n in PLUGINS.values()],
    }
    (root / ".claude-plugin").mkdir()
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))


class World(Machine):
    def __init__(self, root: Path, agent: str, tools: Path) -> None:
        super().__init__(root, [tools])
        self.agent = agent
        self.shadow: tuple[Path, Path] | None = None
        (self.project / ".gitignore").write_text(".claude/settings.local.json\n")
        market(root / "market")
        self.json("marketplace", "add", str(root / "market"))

    def agent_run(self, *argv: str) -> str:
        done = subprocess.run(
            argv, cwd=self.project, env=self.env, capture_output=True, text=True, timeout=180,
            check=False,
        )  # fmt: skip
        return done.stdout + done.stderr

    def plugman_says(self) -> dict[str, Any]:
        """What `list --check` says: the agent's items by kind of ask, and the plugins listed."""
        found = self.json("list", "--check")
        reports = [r for r in found["agents"] if r["agent"] == self.agent]
        assert all(r["checked"] for r in reports), reports
        return {
            "plugins": sorted((p["id"].split("@")[0], p["scope"]) for p in found["plugins"]),
            "items": {r["command"]: r["items"] for r in reports},
        }

    def agent_says(self) -> dict[str, Any]:
        if self.agent == "gemini":
            return {
                "mcp": self.agent_run("gemini", "mcp", "list"),
                "skills": self.agent_run("gemini", "skills", "list"),
            }
        events = claude_session_events(self.project, self.env)
        init = next(e for e in events if e.get("subtype") == "init")
        hooks = [str(e.get("stdout", "")) for e in events if e.get("subtype") == "hook_response"]
        return {"init": init, "hooks": hooks}

    def own_writes(self, n: int) -> None:
        """The agent writes its own keys, as it does when the user works with it: alike in the
        real trees and in their shadow copies (which plugman never touches)."""
        pairs = [(self.home, self.project)]
        if self.shadow is not None:
            pairs.append(self.shadow)
        for home, project in pairs:
            if self.agent == "gemini":  # its settings at both scopes, a real setting each
                key, value = GEMINI_WRITES[n]
                for folder in (home / ".gemini", project / ".gemini"):
                    own_key(folder / "settings.json", key, value)
                if n == 0:
                    trust_gemini_folder(home, self.project)
            elif n == 0:  # the folder trusted in ~/.claude.json's projects table
                trust_claude_project(home, self.project, [])
            else:  # Claude records more of the project there
                own_key(home / ".claude.json", "projects", {**claude_projects(home), f"{n}": {}})

    def start(self) -> None:
        """The trees as they are now, copied aside: the shadow takes the agent's later writes."""
        shadow = (self.home.parent / "shadow-home", self.home.parent / "shadow-project")
        shutil.copytree(self.home, shadow[0], symlinks=True)
        shutil.copytree(
            self.project, shadow[1], symlinks=True, ignore=shutil.ignore_patterns(".git")
        )
        self.shadow = shadow


GEMINI_WRITES = [
    ("general", {"vimMode": False}),
    ("ui", {"hideTips": True}),
    ("privacy", {"usageStatisticsEnabled": False}),
]


def claude_projects(home: Path) -> dict[str, Any]:
    projects = json.loads((home / ".claude.json").read_text()).get("projects", {})
    return dict(projects) if isinstance(projects, dict) else {}


def own_key(path: Path, key: str, value: Any) -> None:
    """A top-level key written into the agent's JSON file, every other byte left."""
    from plugman.manifest.edit import jsonc

    text = path.read_text() if path.exists() else "{}\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(jsonc.set_member(text, (), key, value, str(path)))


def scenario(world: World) -> dict[str, Any]:
    agent = world.agent
    world.agent_says()  # the agent's own first-run files exist before the start
    world.own_writes(0)
    world.start()
    seen: dict[str, Any] = {}
    world.json("agents", "add", agent, "--scope", "user")
    world.json("agents", "add", agent, "--scope", "project")
    world.json("install", PLUGINS["user"], "--scope", "user")
    world.own_writes(1)
    seen["user"] = (world.plugman_says(), world.agent_says())
    world.json("install", PLUGINS["project"], "--scope", "project")
    world.own_writes(2)
    seen["both"] = (world.plugman_says(), world.agent_says())
    world.json("uninstall", PLUGINS["project"], "--scope", "project")
    seen["project-uninstalled"] = (world.plugman_says(), world.agent_says())
    world.json("uninstall", PLUGINS["user"], "--scope", "user")
    world.json("agents", "remove", agent, "--scope", "project")
    world.json("agents", "remove", agent, "--scope", "user")
    seen["removed"] = (world.plugman_says(), world.agent_says())
    assert world.shadow is not None
    start = {"home": tree(world.shadow[0]), "project": tree(world.shadow[1])}
    end = {"home": tree(world.home), "project": tree(world.project, frozenset({".git"}))}
    return {"world": world, "seen": seen, "start": start, "end": end}


@pytest.fixture(scope="module")
def gemini(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return scenario(World(tmp_path_factory.mktemp("gemini"), "gemini", gemini_bin().parent))


@pytest.fixture(scope="module")
def claude(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return scenario(World(tmp_path_factory.mktemp("claude"), "claude-code", claude_bin().parent))


def installed(state: str) -> set[str]:
    """The plugins installed in each state."""
    return {
        "user": {"ukit"},
        "both": {"ukit", "pkit"},
        "project-uninstalled": {"ukit"},
        "removed": set(),
    }[state]


def nothing_false(plugman: dict[str, Any], state: str) -> None:
    items = [i for found in plugman["items"].values() for i in found]
    assert not [i for i in items if i["state"] in BAD], (state, items)
    assert {i["plugin"].split("@")[0] for i in items if i["plugin"]} == installed(state), state


GEMINI_ROW = re.compile(r"^\s*\S\s+([^\s:]+): .* - (\w+)", re.M)


@pytest.mark.parametrize("state", STATES)
def test_gemini_lists_exactly_what_plugman_delivered(gemini: dict[str, Any], state: str) -> None:
    plugman, own = gemini["seen"][state]
    nothing_false(plugman, state)
    servers = dict(GEMINI_ROW.findall(re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", own["mcp"])))
    said = {i["name"]: i["state"] for i in plugman["items"].get("gemini mcp list", [])}
    assert servers == dict.fromkeys(said, "Connected"), (state, own["mcp"])
    assert sorted(servers) == sorted(f"plugin_{p}_notes" for p in installed(state))
    skills = plugman["items"].get("gemini skills list", [])
    assert sorted(i["name"] for i in skills if i["state"] == "ok") == sorted(
        i["name"] for i in skills
    )
    listed = re.findall(r"^(\S+-skill) \[Enabled\]", own["skills"], re.M)
    assert sorted(listed) == sorted(f"{p}-skill" for p in installed(state)), own["skills"]
    assert all(i["name"] in own["skills"] for i in skills)


@pytest.mark.parametrize("state", STATES)
def test_claude_loads_exactly_what_plugman_delivered(claude: dict[str, Any], state: str) -> None:
    plugman, own = claude["seen"][state]
    nothing_false(plugman, state)
    init = own["init"]
    ours = installed(state)
    plugins = [p for p in init["plugins"] if not str(p.get("source", "")).endswith("@builtin")]
    assert sorted(p["name"] for p in plugins) == sorted(ours), init["plugins"]
    servers = [s for s in init["mcp_servers"] if s["name"].startswith("plugin:")]
    assert sorted(s["name"] for s in servers) == sorted(f"plugin:{p}:notes" for p in ours)
    skills = [s for s in init["skills"] if s.endswith("-skill")]
    assert sorted(skills) == sorted(f"{p}:{p}-skill" for p in ours)
    ran = [m for m in (marker(p) for p in PLUGINS.values()) if any(m in h for h in own["hooks"])]
    assert sorted(ran) == sorted(marker(p) for p in ours)
    listed = {
        i["name"].split("@")[0] for i in plugman["items"].get("claude plugin list --json", [])
    }
    assert listed == ours


def changed(run: dict[str, Any]) -> dict[str, list[str]]:
    return {
        where: sorted(
            k
            for k in run["start"][where].keys() | run["end"][where].keys()
            if run["start"][where].get(k) != run["end"][where].get(k)
        )
        for where in ("home", "project")
    }


def test_gemini_removal_leaves_the_trees_as_they_were_plus_its_own_writes(
    gemini: dict[str, Any],
) -> None:
    diff = changed(gemini)
    assert diff["project"] == [], diff
    assert not [k for k in diff["home"] if not f"{k}/".startswith(GEMINI_OWN)], diff["home"]


def test_claude_removal_leaves_the_trees_as_they_were_plus_its_own_writes(
    claude: dict[str, Any],
) -> None:
    diff = changed(claude)
    assert diff["project"] == [], diff
    left = [k for k in diff["home"] if not f"{k}/".startswith(CLAUDE_OWN)]
    assert left == [], diff


# What the agents write themselves on every run (and what the test's own-writes put there).
GEMINI_OWN = (".gemini/tmp/",)  # its session records
# Claude: what it writes on any session (test_claude_native), its logs, and what it records of
# the plugins it read (`NativePlan.claude_writes`: its marketplace and install records, data).
CLAUDE_OWN = (
    *SESSION,
    ".cache/",
    ".claude/plugins/known_marketplaces.json",
    ".claude/plugins/installed_plugins.json",
    ".claude/plugins/marketplaces/",
    ".claude/plugins/data/",
)

"""The issue's "must show", with the real agents, offline: one plugin `kit` (a skill, a command,
a subagent, a SessionStart hook and a stdio MCP server), installed by plugman at project scope
with Claude Code, Gemini CLI, Codex and Copilot CLI linked there, reaches each agent once; and
uninstalling it and unlinking the agents leaves every file plugman touched as it was.

The user's part is done here as a user would: each agent's trust in the project folder is
granted before anything else (Claude `hasTrustDialogAccepted` in `~/.claude.json`, Gemini
`~/.gemini/trustedFolders.json`, Codex `trust_level = "trusted"` in `~/.codex/config.toml`,
Copilot `trusted_folders` in `~/.copilot/config.json`); plugman grants none of it.

What "as it was" means, precisely. Snapshots (`helpers.snapshot`: every file, folder and link
with its bytes) are taken of HOME and the project:

- `before`: after the trust grants, before plugman ran;
- `deployed`: right after `marketplace add`, `agents add` and `install`, before any agent ran.
  `touched` is every path that differs between the two: what plugman created or changed.
- `after`: after the agents ran, `uninstall` and `agents remove`.

Then (1) every path in `touched` is in `after` exactly as in `before` (absent if it was absent),
but for a folder plugman made that an agent has since put its own files in (`~/.claude`: Claude's
`sessions/`, `backups/`, `plugins/`...), which stays as long as it is not empty (`agents_folder`);
(2) the project tree in `after` equals `before` except the agents' own writes listed in
`AGENT_PROJECT_WRITES` (none observed with the pinned versions: the tuple is the allowance, and
is kept empty unless an agent is seen writing there); (3) plugman's generated Claude marketplace
folder (under PLUGMAN_HOME, outside HOME) is gone. Everything else under HOME that changed was
written by the agents while running (Claude's `~/.claude.json` counters, `sessions/`, `backups/`,
`plugins/` records; Gemini's, Codex's and Copilot's logs, caches, history and unpacked package)
and is not compared: none of it is a path plugman wrote, since `touched` is taken before any
agent ran.
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
    copilot_bin,
    gemini_bin,
    gemini_mcp_list,
    trust_gemini_folder,
)
from tests.integration.helpers import snapshot

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent
AGENTS = ("claude-code", "gemini", "codex", "copilot-cli")
MARKER = "KIT-SESSION-START-4f1d"
SERVER = "plugin_kit_notes"  # how plugman names the plugin's server `notes` for the others
AGENT_PROJECT_WRITES: tuple[str, ...] = ()  # project paths the agents write themselves
Snapshot = dict[str, tuple[str, bytes]]
PLUGIN = {
    ".claude-plugin/plugin.json": json.dumps({"name": "kit", "version": "0.1.0"}),
    "skills/kit-skill/SKILL.md": (
        "---\nname: kit-skill\ndescription: Kit skill for the acceptance test\n---\nDo it.\n"
    ),
    "commands/kit-cmd.md": (
        "---\ndescription: Kit command for the acceptance test\n---\nReview $ARGUMENTS for kit.\n"
    ),
    "agents/kit-agent.md": (
        "---\nname: kit-agent\ndescription: Kit agent for the acceptance test\n---\n"
        "You are the kit agent.\n"
    ),
    "hooks/hooks.json": json.dumps(
        {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": f"echo {MARKER}"}]}]}}
    ),
    ".mcp.json": json.dumps(
        {
            "mcpServers": {
                "notes": {
                    "command": "python3",  # the venv's, first on the agents' PATH (agent_env)
                    "args": ["${CLAUDE_PLUGIN_ROOT}/server/notes_server.py"],
                }
            }
        }
    ),
}


def build_marketplace(root: Path) -> None:
    kit = root / "plugins" / "kit"
    for rel, text in PLUGIN.items():
        (kit / rel).parent.mkdir(parents=True, exist_ok=True)
        (kit / rel).write_text(text, encoding="utf-8")
    server = SAMPLES / "plugins" / "notes-server" / "server" / "notes_server.py"
    (kit / "server").mkdir()
    shutil.copy(server, kit / "server" / "notes_server.py")
    catalog = {
        "name": "kit-market",
        "owner": {"name": "tests"},
        "plugins": [{"name": "kit", "source": "./plugins/kit"}],
    }
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog, indent=2))


def grant_trust(home: Path, project: Path) -> None:
    """What the user does once per agent for this folder (plugman never does it)."""
    claude = {"projects": {str(project): {"hasTrustDialogAccepted": True}}}
    (home / ".claude.json").write_text(json.dumps(claude, indent=2) + "\n")
    trust_gemini_folder(home, project)
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        f'[projects."{project}"]\ntrust_level = "trusted"\n'
    )
    (home / ".copilot").mkdir()
    (home / ".copilot" / "config.json").write_text(json.dumps({"trusted_folders": [str(project)]}))


class World:
    def __init__(self, root: Path) -> None:
        self.home, self.project, self.market = root / "home", root / "project", root / "market"
        self.home.mkdir()
        self.project.mkdir()
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        self.project = self.project.resolve()
        self.plugman_home = root / "plugman-home"
        self.env = agent_env(self.home, BIN) | {"PLUGMAN_HOME": str(self.plugman_home)}
        self.warnings: list[str] = []
        build_marketplace(self.market)

    def plugman(self, *args: str) -> str:
        cmd = [sys.executable, "-m", "plugman", "--project", str(self.project), *args]
        proc = subprocess.run(
            cmd, cwd=self.project, env=self.env, capture_output=True, text=True, timeout=120,
            check=False,
        )  # fmt: skip
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        self.warnings += [line.strip() for line in proc.stderr.splitlines() if "warning" in line]
        return proc.stdout

    def agent(self, cmd: list[str], env: dict[str, str] | None = None) -> str:
        proc = subprocess.run(
            cmd, cwd=self.project, env=env or self.env, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=150, check=False,
        )  # fmt: skip
        return proc.stdout + proc.stderr

    def copilot_env(self) -> dict[str, str]:
        env = self.env | {"COPILOT_OFFLINE": "true"}
        for name in ("GITHUB_TOKEN", "GH_TOKEN"):
            env.pop(name, None)
        return env


def check_claude(world: World, failures: list[str]) -> None:
    events = claude_session_events(world.project, world.env)
    init = next(e for e in events if e.get("subtype") == "init")
    want = {
        "skills": ("kit-skill", ["kit:kit-skill"]),
        "slash_commands": ("kit-cmd", ["kit:kit-cmd"]),
        "agents": ("kit-agent", ["kit:kit-agent"]),
    }
    for key, (needle, expected) in want.items():
        found = [name for name in init[key] if needle in name]
        if found != expected:
            failures.append(f"claude {key}: {found} != {expected}")
    servers = [s["name"] for s in init["mcp_servers"] if "notes" in s["name"]]
    if servers != ["plugin:kit:notes"]:
        failures.append(f"claude mcp_servers: {servers} != ['plugin:kit:notes']")
    hooks = [
        e for e in events if e.get("subtype") == "hook_response" and MARKER in str(e.get("stdout"))
    ]
    if len(hooks) != 1 or not str(hooks[0].get("hook_name", "")).startswith("SessionStart"):
        failures.append(f"claude SessionStart hook ran {len(hooks)} times: {hooks}")


def check_gemini(world: World, failures: list[str]) -> None:
    skills = world.agent([str(gemini_bin()), "skills", "list"])
    lines = [line for line in skills.splitlines() if re.match(r"\s*kit-skill\b", line)]
    if len(lines) != 1:
        failures.append(f"gemini skills list: kit-skill {len(lines)} times:\n{skills[-2000:]}")
    listed = gemini_mcp_list(world.home, world.project, world.env)
    if not connected(listed, SERVER) or listed.count(f"{SERVER}:") != 1:
        failures.append(f"gemini mcp list: {SERVER} not connected once:\n{listed[-2000:]}")


def check_codex(world: World, failures: list[str]) -> None:
    prompt = world.agent([str(codex_bin()), "debug", "prompt-input", "hi"])
    for line in (
        "- kit-skill: Kit skill for the acceptance test",
        "- kit-cmd: Kit command for the acceptance test",
        "kit-agent: {\\nKit agent for the acceptance test",
    ):
        if prompt.count(line) != 1:
            failures.append(f"codex prompt-input: {line!r} {prompt.count(line)} times")
    listed = world.agent([str(codex_bin()), "mcp", "list"])
    rows = [line.split() for line in listed.splitlines() if line.startswith(SERVER)]
    if len(rows) != 1 or "enabled" not in rows[0]:
        failures.append(f"codex mcp list: {SERVER} not listed enabled once:\n{listed[-2000:]}")


def check_copilot(world: World, failures: list[str]) -> None:
    env = world.copilot_env()
    out = world.agent([str(copilot_bin()), "skill", "list", "--json"], env)
    start = out.find("[")
    skills: list[dict[str, Any]] = json.loads(out[start:]) if start >= 0 else []
    names = [skill.get("name") for skill in skills]
    for name in ("kit-skill", "kit-cmd"):
        if names.count(name) != 1:
            failures.append(f"copilot skill list: {name} {names.count(name)} times: {names}")
    listed = world.agent([str(copilot_bin()), "mcp", "list"], env)
    rows = [line.strip() for line in listed.splitlines() if SERVER in line]
    if rows != [f"{SERVER} (local)"]:
        failures.append(f"copilot mcp list: {rows}:\n{listed[-2000:]}")


def agents_folder(path: str, before: Snapshot, after: Snapshot) -> bool:
    """A folder plugman made (`~/.claude`) that stays because the agent has put its own files in
    it since: plugman removes only the files it wrote, and a folder it made once it is empty."""
    inside = [p for p in after if p.startswith(path + "/")]
    return path not in before and after.get(path) == ("dir", b"") and bool(inside)


def test_kit_reaches_every_agent_once_and_leaves_no_trace(
    tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    for find in (claude_bin, gemini_bin, codex_bin, copilot_bin):
        find()  # installs the pinned agent (or skips when npm cannot be reached)
    world = World(tmp_path)
    grant_trust(world.home, world.project)
    before = snapshot(world.home, world.project)

    world.plugman("marketplace", "add", str(world.market))
    world.plugman("agents", "add", *AGENTS, "--scope", "project")
    world.plugman("install", "kit", "--scope", "project")
    deployed = snapshot(world.home, world.project)
    touched = {p for p in before.keys() | deployed.keys() if before.get(p) != deployed.get(p)}
    listing = world.plugman("list")
    record_property("plugman list", listing)
    record_property("plugman warnings", "\n".join(world.warnings))
    record_property("plugman wrote", "\n".join(sorted(touched)))
    assert all(name in listing for name in AGENTS), listing

    failures: list[str] = []
    for check in (check_claude, check_gemini, check_codex, check_copilot):
        check(world, failures)
    record_property("agent checks", "\n".join(failures) or "all passed")

    world.plugman("uninstall", "kit", "--scope", "project")
    world.plugman("agents", "remove", *AGENTS, "--scope", "project")
    after = snapshot(world.home, world.project)
    back = sorted(
        p for p in touched if after.get(p) != before.get(p) and not agents_folder(p, before, after)
    )
    prefix = str(world.project)
    project = {
        p
        for p in before.keys() | after.keys()
        if p.startswith(prefix)
        and before.get(p) != after.get(p)
        and not p.removeprefix(prefix + "/").startswith(AGENT_PROJECT_WRITES or ("\0",))
    }
    generated = list((world.plugman_home / "data" / "claude").glob("*/plugins/kit"))
    events = claude_session_events(world.project, world.env)
    init = next(e for e in events if e.get("subtype") == "init")
    still = [p for p in init["plugins"] if p["name"] == "kit"]

    assert failures == [], "\n".join(failures)
    assert back == [], back  # every path plugman wrote is as it was
    assert project == set(), sorted(project)  # the project tree is as it was
    assert generated == [] and still == [], (generated, still)
    record_property("summary", f"4 agents saw kit once each; {len(touched)} paths restored")

"""Hooks exported for the real agents: Gemini CLI's own `hooks migrate` as the oracle, and
Codex's `app-server` listing plugman's hooks as trusted."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from plugman.core.paths import Paths
from tests.integration.agents import agent_env, codex_bin, gemini_bin
from tests.integration.test_export import cli

pytestmark = pytest.mark.slow

HOOKS = """
[[hooks.PreToolUse]]
matcher = "Bash"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "$CLAUDE_PROJECT_DIR/check.sh"
timeout = 30

[[hooks.PreToolUse]]
matcher = "Edit|Write|Read"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "echo edit"

[[hooks.UserPromptSubmit]]
[[hooks.UserPromptSubmit.hooks]]
type = "command"
command = "echo prompt"

[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = "echo stop"
timeout = 5

[[hooks.PreCompact]]
[[hooks.PreCompact.hooks]]
type = "command"
command = "echo compact"

[[hooks.SessionStart]]
matcher = "startup"
[[hooks.SessionStart.hooks]]
type = "command"
command = "echo start"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "plugman.toml").write_text(HOOKS)
    return folder


def normalized(hooks: dict[str, Any], scale: int = 1) -> dict[str, Any]:
    """Events → groups, with each timeout divided by `scale` and empty events left out."""
    found: dict[str, Any] = {}
    for event, groups in hooks.items():
        for group in groups:
            for handler in group.get("hooks", []):
                if "timeout" in handler:
                    handler["timeout"] //= scale
        if groups:
            found[event] = groups
    return found


def test_gemini_hooks_match_gemini_hooks_migrate(home: Path, project: Path, tmp_path: Path) -> None:
    gemini = gemini_bin()
    cli(project, "trust", "approve", "--all")
    cli(project, "export", "--target", "claude-code", "--scope", "project", "--write")
    cli(project, "export", "--target", "gemini", "--scope", "project", "--write")
    ours = json.loads((project / ".gemini" / "settings.json").read_text())["hooks"]
    oracle = tmp_path / "oracle"
    shutil.copytree(project / ".claude", oracle / ".claude")
    env = agent_env(tmp_path / "agent-home", Path(sys.executable).parent)
    subprocess.run(
        [str(gemini), "hooks", "migrate", "--from-claude"],
        cwd=oracle,
        env=env,
        check=True,
        capture_output=True,
        timeout=110,
    )
    # The project's hooks need approval: both files name the launcher, each with its own
    # AGENT word (checked at each call); the rest is the translation under test.
    text = (oracle / ".gemini" / "settings.json").read_text()
    assert "hooks exec claude-code" in text
    migrated = json.loads(text.replace("hooks exec claude-code", "hooks exec gemini"))["hooks"]
    # The same events, matchers, commands and fields; plugman writes the timeout in ms, as
    # Gemini's hook runner reads it (migrate copies the seconds).
    assert normalized(ours, 1000) == normalized(migrated)


def rpc_hooks(codex: Path, cwd: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    """`hooks/list` through `codex app-server` (JSON-RPC over stdio)."""
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"clientInfo": {"name": "t", "version": "0"}},
        },
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
    ]
    proc = subprocess.Popen(
        [str(codex), "app-server"],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for request in requests:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
        while line := proc.stdout.readline():
            message = json.loads(line)
            if message.get("id") == 1:
                hooks: list[dict[str, Any]] = message["result"]["data"][0]["hooks"]
                return hooks
        raise AssertionError("codex app-server closed without answering hooks/list")
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_codex_lists_plugmans_hooks_as_trusted(home: Path, project: Path, tmp_path: Path) -> None:
    codex = codex_bin()
    hooks_json = home / ".codex" / "hooks.json"
    hooks_json.parent.mkdir()
    mine = {"hooks": [{"type": "command", "command": "echo users-own"}]}
    hooks_json.write_text(json.dumps({"hooks": {"PreToolUse": [mine]}}))
    user_toml = Paths.from_env(project=project).user_config  # the user scope's declaration
    user_toml.parent.mkdir(parents=True, exist_ok=True)
    (project / "plugman.toml").rename(user_toml)
    cli(project, "export", "--target", "codex", "--scope", "user", "--write")
    env = agent_env(home, Path(sys.executable).parent)
    listed = {h["command"]: h for h in rpc_hooks(codex, project, env)}
    assert listed["echo users-own"]["trustStatus"] == "untrusted"  # not plugman's to trust
    ours = [c for c in listed if c != "echo users-own"]
    assert len(ours) == 6
    assert all(listed[c]["trustStatus"] == "trusted" for c in ours), listed
    assert listed["echo start"]["key"] == f"{hooks_json}:session_start:0:0"
    assert listed["$CLAUDE_PROJECT_DIR/check.sh"]["key"] == f"{hooks_json}:pre_tool_use:1:0"


def test_codex_trusts_the_hooks_left_after_an_uninstall(home: Path, tmp_path: Path) -> None:
    """Codex keys its trust by position: uninstalling the plugin whose group comes first moves
    the other's up, and its trust entry moves with it (none left for the removed hook)."""
    codex = codex_bin()
    market, project = tmp_path / "market", tmp_path / "p"
    project.mkdir()
    names = ("first", "second")
    for name in names:
        (market / name / ".claude-plugin").mkdir(parents=True)
        (market / name / "hooks").mkdir()
        manifest = {"name": name, "version": "1.0.0"}
        (market / name / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
        group = {"hooks": [{"type": "command", "command": f"echo {name}"}]}
        (market / name / "hooks" / "hooks.json").write_text(
            json.dumps({"hooks": {"Stop": [group]}})
        )
    catalog = {
        "name": "hooked",
        "owner": {"name": "t"},
        "plugins": [{"name": n, "source": f"./{n}"} for n in names],
    }
    (market / ".claude-plugin").mkdir()
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    cli(project, "marketplace", "add", str(market))
    cli(project, "agents", "add", "codex", "--scope", "user")
    cli(project, "install", *names, "--scope", "user")
    env = agent_env(home, Path(sys.executable).parent)
    listed = {h["command"]: h["trustStatus"] for h in rpc_hooks(codex, project, env)}
    # Plugin hooks reach Codex through the launcher (plugman.runtime.launch.hook), a Stop hook
    # with nothing to translate through its direct form (runtime.launch.shplan), by its path.
    launcher = shlex.quote(str(Path(sys.executable).parent / "plugman-hook")) + " codex Stop"
    assert listed == {f"{launcher} '{n}@hooked#0'": "trusted" for n in names}
    order = [
        g["hooks"][0]["command"]
        for g in json.loads((home / ".codex" / "hooks.json").read_text())["hooks"]["Stop"]
    ]
    cli(project, "uninstall", order[0].split("'")[1].split("@")[0], "--scope", "user")
    listed = {h["command"]: h["trustStatus"] for h in rpc_hooks(codex, project, env)}
    assert listed == {order[1]: "trusted"}
    config = (home / ".codex" / "config.toml").read_text()
    assert config.count("trusted_hash") == 1, config

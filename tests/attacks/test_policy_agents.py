"""Attack, with the real agents: a marketplace the organization blocks after its plugin was
installed keeps reaching Claude Code (natively, under its generated marketplace id), Codex and
Gemini CLI. Invariant (`plugman.config.policy_plugins.blocked`, `plugman.config.scopes`):
resolution delivers nothing of a blocked plugin, so the next command that deploys (any
mutating command: here `plugman mcp add`) takes it out of every agent, `list` says which rule
blocks it; the plugin of an allowed marketplace still reaches them (the pair).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration import agents
from tests.integration.agents import claude_bin, codex_bin, gemini_mcp_list
from tests.integration.test_orgpolicy import Run


def _market(root: Path, market: str, plugin: str, marker: str) -> Path:
    folder = root / market
    tree = folder / "plugins" / plugin
    (tree / ".claude-plugin").mkdir(parents=True)
    (tree / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": plugin}))
    hook = {"type": "command", "command": f"echo {marker}"}
    (tree / "hooks").mkdir()
    (tree / "hooks" / "hooks.json").write_text(
        json.dumps({"hooks": {"SessionStart": [{"hooks": [hook]}]}})
    )
    server = {"command": "python3", "args": ["-c", "pass"]}
    (tree / ".mcp.json").write_text(json.dumps({"mcpServers": {f"{plugin}srv": server}}))
    catalog = {
        "name": market,
        "owner": {"name": "t"},
        "plugins": [{"name": plugin, "source": f"./plugins/{plugin}"}],
    }
    (folder / ".claude-plugin").mkdir()
    (folder / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    return folder


Seen = tuple[str, str, str]  # Claude Code's hook output, `codex mcp list`, `gemini mcp list`


def delivered_then_blocked(tmp_path: Path) -> tuple[Run, Callable[[], Seen]]:
    """Two project plugins, each of its own marketplace, delivered to Claude Code, Codex and
    Gemini CLI (as each agent says), then `doomed-market` blocked by the organization; the run
    and how to ask the agents again."""
    claude_bin()
    doomed = _market(tmp_path, "doomed-market", "doomed", "DOOMED_HOOK_RAN")
    kept = _market(tmp_path, "kept-market", "kept", "KEPT_HOOK_RAN")
    managed = tmp_path / "claude-managed"
    managed.mkdir()
    run = Run(tmp_path, managed)
    for folder in (doomed, kept):
        assert run.plugman("marketplace", "add", str(folder)).returncode == 0
    added = run.plugman("agents", "add", "claude-code", "codex", "gemini", "--scope", "project")
    assert added.returncode == 0, added.stderr
    for plugin in ("doomed", "kept"):
        done = run.plugman("install", plugin, "--scope", "project")
        assert done.returncode == 0, done.stderr

    def seen() -> Seen:
        events = agents.claude_session_events(run.project, run.env)
        ran = " ".join(str(e.get("output")) for e in events if e.get("subtype") == "hook_response")
        codex = run.run([str(codex_bin()), "mcp", "list"]).stdout
        return ran, codex, gemini_mcp_list(run.home, run.project, run.env)

    before = seen()
    for found in before[1:]:
        assert "doomedsrv" in found and "keptsrv" in found, found
    assert "DOOMED_HOOK_RAN" in before[0] and "KEPT_HOOK_RAN" in before[0], before[0]

    policy = Path(run.env["PLUGMAN_MANAGED_DIR"])
    policy.mkdir(parents=True, exist_ok=True)
    (policy / "managed-settings.toml").write_text(
        '[[blockedMarketplaces]]\nsource = "pathPattern"\npathPattern = "doomed-market"\n'
    )
    return run, seen


def only_kept(seen: Seen) -> None:
    """The blocked plugin's hook and server reach no agent; the allowed plugin's still do."""
    for found in seen[1:]:
        assert "doomedsrv" not in found and "keptsrv" in found, found
    assert "DOOMED_HOOK_RAN" not in seen[0] and "KEPT_HOOK_RAN" in seen[0], seen[0]


@pytest.mark.slow
def test_marketplace_blocked_after_install_leaves_claude_codex_and_gemini(tmp_path: Path) -> None:
    """Attack: block a marketplace after its plugin is installed; Invariant: at the next
    mutating command its hook no longer runs in Claude Code and its server is gone from Codex
    and Gemini CLI, `list` names the rule; the allowed marketplace's plugin stays."""
    run, seen = delivered_then_blocked(tmp_path)
    listed = run.plugman("list")
    assert "not delivered: its marketplace 'doomed-market' is blocked" in listed.stdout
    assert "managed-settings.toml" in listed.stdout, listed.stdout
    # the next mutating command redeploys every linked agent
    nudged = run.plugman("mcp", "add", "probe", "http://127.0.0.2:9/mcp", "--scope", "project")
    assert nudged.returncode == 0, nudged.stderr
    only_kept(seen())

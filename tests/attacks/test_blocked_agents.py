"""Attack, with the real agents: a marketplace the organization blocks after its plugin was
installed for the project keeps reaching Claude Code, Codex and Gemini CLI when the next
command is `plugman sync` (the project still declares the plugin, the lock still pins it):
sync used to refuse as a whole and so redeployed nothing.

Invariant (`plugman.plugins.sync._sync_in`): sync, and then `sync --frozen`, skip the blocked
plugin with the rule named, keep the allowed one and redeploy every linked agent: the blocked
plugin's hook no longer runs in Claude Code (print mode, no model) and its server is gone from
`codex mcp list` and `gemini mcp list`; the allowed plugin's hook and server stay (the pair).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.attacks.test_policy_agents import _market
from tests.integration import agents
from tests.integration.agents import claude_bin, codex_bin, gemini_mcp_list
from tests.integration.test_orgpolicy import Run


@pytest.mark.slow
def test_marketplace_blocked_after_install_leaves_every_agent_at_the_next_sync(
    tmp_path: Path,
) -> None:
    """Attack: block a marketplace after its plugin is synced for the project; the next
    command is `plugman sync`. Invariant: sync exits 0 naming the rule, and the blocked
    plugin's hook and server are gone from Claude Code, Codex and Gemini CLI, the allowed
    plugin's still there; `sync --frozen` after it keeps them out."""
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

    def seen() -> tuple[str, str, str]:
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
    synced = run.plugman("sync")
    assert synced.returncode == 0, synced.stderr
    assert "doomed@doomed-market" in synced.stderr and "managed-settings.toml" in synced.stderr
    after = seen()
    for found in after[1:]:
        assert "doomedsrv" not in found and "keptsrv" in found, found
    assert "DOOMED_HOOK_RAN" not in after[0] and "KEPT_HOOK_RAN" in after[0], after[0]
    frozen = run.plugman("sync", "--frozen")
    assert frozen.returncode == 0, frozen.stderr
    codex = run.run([str(codex_bin()), "mcp", "list"]).stdout
    assert "doomedsrv" not in codex and "keptsrv" in codex, codex

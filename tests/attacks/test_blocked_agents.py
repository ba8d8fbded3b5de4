"""Attack, with the real agents: a marketplace the organization blocks after its plugin was
installed for the project keeps reaching Claude Code, Codex and Gemini CLI when the next
command is `plugman sync` (the project still declares the plugin, the lock still pins it):
sync used to refuse as a whole and so redeployed nothing.

Invariant (`plugman.plugins.lifecycle.sync.synced`): sync, and then `sync --frozen`, skip the
blocked plugin with the rule named, keep the allowed one and redeploy every linked agent: the
blocked plugin's hook no longer runs in Claude Code (print mode, no model) and its server is gone
from `codex mcp list` and `gemini mcp list`; the allowed plugin's hook and server stay (the pair).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.attacks.test_policy_agents import delivered_then_blocked, only_kept
from tests.integration.agents import codex_bin


@pytest.mark.slow
def test_marketplace_blocked_after_install_leaves_every_agent_at_the_next_sync(
    tmp_path: Path,
) -> None:
    """Attack: block a marketplace after its plugin is synced for the project; the next
    command is `plugman sync`. Invariant: sync exits 0 naming the rule, and the blocked
    plugin's hook and server are gone from Claude Code, Codex and Gemini CLI, the allowed
    plugin's still there; `sync --frozen` after it keeps them out."""
    run, seen = delivered_then_blocked(tmp_path)
    synced = run.plugman("sync")
    assert synced.returncode == 0, synced.stderr
    assert "doomed@doomed-market" in synced.stderr and "managed-settings.toml" in synced.stderr
    only_kept(seen())
    frozen = run.plugman("sync", "--frozen")
    assert frozen.returncode == 0, frozen.stderr
    codex = run.run([str(codex_bin()), "mcp", "list"]).stdout
    assert "doomedsrv" not in codex and "keptsrv" in codex, codex

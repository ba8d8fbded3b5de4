"""Hand edits, in Codex's own view (`codex app-server` `hooks/list`): after the user edits a hook
plugman wrote into `~/.codex/hooks.json`, `uninstall` refuses and Codex still runs the plugin's
hook as the user left it; with `--force` the plugin goes, Codex keeps the edited hook (the
warning said so), now naming a store folder that is gone, and `doctor` reports it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.integration.agents import agent_env, codex_bin
from tests.integration.helpers import snapshot
from tests.integration.test_agent_hooks import rpc_hooks
from tests.integration.test_export import cli

pytestmark = pytest.mark.slow


def marketplace(market: Path) -> None:
    (market / "first" / ".claude-plugin").mkdir(parents=True)
    (market / "first" / "hooks").mkdir()
    manifest = {"name": "first", "version": "1.0.0"}
    (market / "first" / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    group = {"hooks": [{"type": "command", "command": "echo ${CLAUDE_PLUGIN_ROOT}/stop"}]}
    (market / "first" / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"Stop": [group]}}))
    catalog = {
        "name": "hooked",
        "owner": {"name": "t"},
        "plugins": [{"name": "first", "source": "./first"}],
    }
    (market / ".claude-plugin").mkdir()
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))


def test_codex_keeps_running_the_edited_hook_until_the_user_forces_the_uninstall(
    home: Path, tmp_path: Path, isolated_home: Path
) -> None:
    codex = codex_bin()
    project = tmp_path / "p"
    project.mkdir()
    marketplace(tmp_path / "market")
    cli(project, "marketplace", "add", str(tmp_path / "market"))
    cli(project, "agents", "add", "codex", "--scope", "user")
    cli(project, "install", "first", "--scope", "user")
    env = agent_env(home, Path(sys.executable).parent)
    hooks = home / ".codex" / "hooks.json"
    hooks.write_text(hooks.read_text().replace('/stop"', '/stop --verbose"'))
    (edited,) = [h["command"] for h in rpc_hooks(codex, project, env)]
    assert edited.endswith("/stop --verbose")

    before = snapshot(home, project, isolated_home)
    refused = cli(project, "uninstall", "first", "--scope", "user", code=1)
    assert f"{hooks}: hooks.Stop[0] (first@hooked's Stop:" in refused.stderr
    assert snapshot(home, project, isolated_home) == before
    assert [h["command"] for h in rpc_hooks(codex, project, env)] == [edited]

    forced = cli(project, "uninstall", "first", "--scope", "user", "--force")
    assert "hooks.Stop[0] (first@hooked's Stop:" in forced.stderr
    assert [h["command"] for h in rpc_hooks(codex, project, env)] == [edited]  # left, as said
    store_path = edited.split()[1].removesuffix("/stop")
    assert not Path(store_path).exists()
    doctor = cli(project, "doctor", "--no-check", "--json", code=1)
    problems = json.loads(doctor.stdout)["problems"]
    assert any(
        p["where"] == str(hooks)
        and p["message"].startswith(f"hooks.Stop[0].hooks[0].command names {store_path}")
        for p in problems
    )

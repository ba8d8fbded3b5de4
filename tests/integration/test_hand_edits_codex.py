"""Hand edits, in Codex's own view (`codex app-server` `hooks/list`): after the user edits the
hook launcher plugman wrote into `~/.codex/hooks.json` (its direct form, `…/plugman-hook codex
Stop 'first@hooked#0'`), `uninstall` refuses and Codex still has the plugin's hook as the user left
it, which runs the plugin's handler; with `--force` the plugin goes, Codex keeps the edited hook
(the warning said so), whose launcher now fails (exit 1, a non-blocking error for Codex) naming
the hook it cannot find, and `doctor` reports it naming a plugin that is not installed."""

from __future__ import annotations

import json
import subprocess
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
    (written,) = [h["command"] for h in rpc_hooks(codex, project, env)]
    assert written.endswith("/plugman-hook codex Stop 'first@hooked#0'")  # the direct form
    hooks.write_text(hooks.read_text().replace(json.dumps(written)[1:-1], f"nice -n 5 {written}"))
    (edited,) = [h["command"] for h in rpc_hooks(codex, project, env)]
    assert edited == f"nice -n 5 {written}"  # the user's edit, as Codex reads it
    ran = run_hook(edited, project, env)
    assert (ran.returncode, ran.stdout.strip()) == (0, f"{store_tree(isolated_home)}/stop")

    before = snapshot(home, project, isolated_home)
    refused = cli(project, "uninstall", "first", "--scope", "user", code=1)
    assert f"{hooks}: hooks.Stop[0] (first@hooked's Stop:" in refused.stderr
    assert snapshot(home, project, isolated_home) == before
    assert [h["command"] for h in rpc_hooks(codex, project, env)] == [edited]

    forced = cli(project, "uninstall", "first", "--scope", "user", "--force")
    assert "hooks.Stop[0] (first@hooked's Stop:" in forced.stderr
    assert [h["command"] for h in rpc_hooks(codex, project, env)] == [edited]  # left, as said
    ran = run_hook(edited, project, env)
    assert ran.returncode == 1 and ran.stdout == ""  # Codex carries on; stderr says why
    assert "no Stop hook first@hooked#0 in the config resolved here" in ran.stderr
    doctor = cli(project, "doctor", "--no-check", "--json", code=1)
    problems = json.loads(doctor.stdout)["problems"]
    assert {
        "severity": "error",
        "where": str(hooks),
        "message": "hooks.Stop[0].hooks[0].command names the hook first@hooked#0, of "
        "first@hooked, which is not installed here (yours: edited by hand, or not plugman's "
        "here)",
        "hint": "install the plugin (plugman sync installs the ones the project declares), or "
        "delete the entry; plugman leaves an entry it did not write here alone",
    } in problems


def store_tree(plugman_home: Path) -> Path:
    (tree,) = (plugman_home / "data" / "store").glob("*/hooks/hooks.json")
    return tree.parents[1]


def run_hook(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The hook's command as Codex runs it: through the shell, the event JSON on stdin."""
    event = {"hook_event_name": "Stop", "cwd": str(cwd), "session_id": "s"}
    return subprocess.run(
        ["sh", "-c", command], cwd=cwd, env=env, input=json.dumps(event), capture_output=True,
        text=True, timeout=60, check=False,
    )  # fmt: skip

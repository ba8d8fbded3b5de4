"""The wedge (issue 34): Codex linked at user and project scope, the plugin installed in each,
then the project one uninstalled. The project's hook-trust keys (`hooks.state`) live in the
user's `~/.codex/config.toml`, beside the user scope's; each scope's record owns its own keys
there, so every later command goes on (it used to fail on the user's file with "cannot take
plugman's entries out without touching other settings", from then on), and after everything is
removed the user's file is what it was, plus what Codex wrote itself (its `[projects]` trust).

The slow test runs the same scenario with the real Codex reading back each state: `codex mcp
list` and `hooks/list` through `codex app-server`."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from plugman.cli import invoke
from tests.integration.agents import agent_env, codex_bin
from tests.integration.shared_files import marketplace
from tests.integration.test_agent_hooks import rpc_hooks
from tests.integration.test_export import cli

START = '# my settings\nmodel = "o3"\n\n[profiles.fast]\nmodel = "o4-mini"  # quick\n'
WEDGED = "cannot take plugman's entries out"


def trusted(project: Path) -> str:
    """What Codex appends to the user's file when the user trusts the project folder."""
    return f'\n[projects."{project}"]\ntrust_level = "trusted"\n'


def wedge(home: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The scenario up to the uninstall of the project's plugin; the project and the user's
    `config.toml` (which holds the user's settings and Codex's trust of the project)."""
    project = tmp_path / "p"
    project.mkdir()
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(START)
    marketplace(tmp_path / "market")
    cli(project, "marketplace", "add", str(tmp_path / "market"))
    cli(project, "agents", "add", "codex", "--scope", "user")
    cli(project, "agents", "add", "codex", "--scope", "project")
    cli(project, "install", "first", "--scope", "user")
    config.write_text(config.read_text() + trusted(project))  # Codex, as the user trusts it
    cli(project, "install", "first", "--scope", "project")
    return project, config


def state_keys(config: Path) -> list[str]:
    import tomllib

    return sorted(tomllib.loads(config.read_text()).get("hooks", {}).get("state", {}))


def test_uninstalling_the_project_plugin_wedges_nothing(home: Path, tmp_path: Path) -> None:
    project, config = wedge(home, tmp_path)
    user_hooks, project_hooks = home / ".codex" / "hooks.json", project / ".codex" / "hooks.json"
    keys = state_keys(config)
    assert [k.rpartition(":stop:")[0] for k in keys if ":stop:" in k] == sorted(
        [str(user_hooks), str(project_hooks)]
    )
    cli(project, "uninstall", "first", "--scope", "project")
    assert state_keys(config) == [k for k in keys if k.startswith(str(user_hooks))]
    # every mutating command goes on
    doctor = invoke(["--project", str(project), "doctor", "--no-check"])
    assert doctor.exit_code in (0, 1) and WEDGED not in doctor.output, doctor.output
    cli(project, "install", "first", "--scope", "project")
    assert state_keys(config) == keys
    cli(project, "export", "--target", "codex", "--scope", "project", "--remove", "--force")
    cli(project, "agents", "remove", "codex", "--scope", "project", "--force")
    cli(project, "uninstall", "first", "--scope", "user")
    cli(project, "agents", "remove", "codex", "--scope", "user", "--force")
    cli(project, "uninstall", "first", "--scope", "project")
    assert config.read_text() == START + trusted(project)
    assert not user_hooks.exists() and not (project / ".codex").exists()


def test_the_user_scope_goes_first_and_the_project_keeps_its_keys(
    home: Path, tmp_path: Path
) -> None:
    """The other order: the user scope is unlinked while the project's keys sit in its file
    (plugman made that file: it stays while the project's keys are there, then goes)."""
    project = tmp_path / "p"
    project.mkdir()
    marketplace(tmp_path / "market")
    cli(project, "marketplace", "add", str(tmp_path / "market"))
    for scope in ("user", "project"):
        cli(project, "agents", "add", "codex", "--scope", scope)
        cli(project, "install", "first", "--scope", scope)
    config = home / ".codex" / "config.toml"
    project_keys = [k for k in state_keys(config) if k.startswith(str(project))]
    cli(project, "agents", "remove", "codex", "--scope", "user")
    assert state_keys(config) == project_keys
    cli(project, "uninstall", "first", "--scope", "user")
    cli(project, "agents", "remove", "codex", "--scope", "project")
    assert not (home / ".codex").exists()


def codex_mcp_list(codex: Path, project: Path, env: dict[str, str]) -> list[str]:
    done = subprocess.run(
        [str(codex), "mcp", "list", "--json"], cwd=project, env=env, capture_output=True,
        text=True, timeout=120, check=True,
    )  # fmt: skip
    return sorted(entry["name"] for entry in json.loads(done.stdout))


@pytest.mark.slow
def test_the_real_codex_reads_back_each_state(home: Path, tmp_path: Path) -> None:
    codex = codex_bin()
    project, config = wedge(home, tmp_path)
    env = agent_env(home, Path(sys.executable).parent)
    # a plugin's Stop hook has nothing to translate: the direct form, by its path in a user file
    direct = shlex.quote(str(Path(sys.executable).parent / "plugman-hook")) + " codex"

    def hooks() -> dict[str, str]:
        return {f"{h['key']}": h["trustStatus"] for h in rpc_hooks(codex, project, env)}

    both = hooks()
    user_hooks, project_hooks = home / ".codex" / "hooks.json", project / ".codex" / "hooks.json"
    assert sorted({k.rpartition(".json:")[0] + ".json" for k in both}) == sorted(
        [str(user_hooks), str(project_hooks)]
    )
    assert set(both.values()) == {"trusted"}, both
    assert len(both) == 4  # Stop and PreToolUse, at each scope
    assert codex_mcp_list(codex, project, env) == ["plugin_first_notes"]
    commands = {h["command"] for h in rpc_hooks(codex, project, env)}
    assert f"{direct} Stop 'first@hooked#0'" in commands

    cli(project, "uninstall", "first", "--scope", "project")
    after = hooks()
    assert after == {k: v for k, v in both.items() if k.startswith(str(user_hooks))}
    assert codex_mcp_list(codex, project, env) == ["plugin_first_notes"]  # the user's

    cli(project, "uninstall", "first", "--scope", "user")
    assert hooks() == {}
    assert codex_mcp_list(codex, project, env) == []
    cli(project, "agents", "remove", "codex", "--scope", "project")
    cli(project, "agents", "remove", "codex", "--scope", "user")
    assert config.read_text() == START + trusted(project)

"""The hook launcher with the real Codex 0.169: a plugin's conditional hooks (security-guidance's
shape: `PostToolUse` on `Bash`, one handler `if: "Bash(git commit:*)"`, one `if: "Bash(git
push:*)"`) installed at project scope with Codex linked run in a real `codex exec` turn only
for the command their `if` names, exactly once, with the plugin's environment; the project's
`.codex/hooks.json` names `plugman hooks exec` and holds no machine path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.agents import agent_env, codex_bin
from tests.integration.fake_responses import codex_exec_args, responses_server
from tests.integration.test_export import cli

pytestmark = pytest.mark.slow

MARK = (
    'mkdir -p "$CLAUDE_PLUGIN_DATA"\n'
    'echo "$1 $(basename "$CLAUDE_PLUGIN_ROOT")" >> "$CLAUDE_PLUGIN_DATA/marks"\n'
)


def guard_market(root: Path) -> Path:
    """A marketplace with `guard`, whose two PostToolUse handlers append a line to a file in
    its data folder, one for `git commit`, one for `git push`."""
    plugin = root / "guard"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / "hooks").mkdir()
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "guard", "version": "1.0.0"}')
    (plugin / "mark.sh").write_text(MARK)
    run = 'sh "${CLAUDE_PLUGIN_ROOT}/mark.sh"'
    group = {
        "matcher": "Bash",
        "hooks": [
            {"type": "command", "command": f"{run} commit", "if": "Bash(git commit:*)"},
            {"type": "command", "command": f"{run} push", "if": "Bash(git push:*)"},
        ],
    }
    (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"PostToolUse": [group]}}))
    catalog = {
        "name": "guards",
        "owner": {"name": "t"},
        "plugins": [{"name": "guard", "source": "./guard"}],
    }
    (root / ".claude-plugin").mkdir()
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    return root


def codex_turn(codex: Path, project: Path, env: dict[str, str], command: str) -> str:
    """One real `codex exec` turn in which the (fake) model runs `command` in the shell."""
    with responses_server(command) as url:
        done = subprocess.run(
            [str(codex), *codex_exec_args(url), "run it"],
            cwd=project,
            env={**env, "FAKE_OPENAI_KEY": "sk-fake"},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout + done.stderr


def test_codex_runs_a_conditional_plugin_hook_only_for_its_command(
    home: Path, tmp_path: Path
) -> None:
    codex = codex_bin()
    project = tmp_path / "project"
    project.mkdir()
    for args in (["init", "-q"], ["config", "user.name", "t"], ["config", "user.email", "t@t"]):
        subprocess.run(["git", *args], cwd=project, check=True)
    cli(project, "marketplace", "add", str(guard_market(tmp_path / "market")))
    cli(project, "agents", "add", "codex", "--scope", "project")
    cli(project, "install", "guard", "--scope", "project")
    cli(project, "trust", "approve", "--all")

    written = (project / ".codex" / "hooks.json").read_text()
    assert os.environ["PLUGMAN_HOME"] not in written and str(tmp_path) not in written
    groups = json.loads(written)["hooks"]["PostToolUse"]
    assert {g["matcher"] for g in groups} == {"Bash"}  # Codex's own pre-filter, as Claude's
    assert [h["command"] for g in groups for h in g["hooks"]] == [
        "plugman hooks exec codex PostToolUse 'guard@guards#0'",
        "plugman hooks exec codex PostToolUse 'guard@guards#1'",
    ]
    config = home / ".codex" / "config.toml"  # the user lets Codex read the project's config
    config.write_text(config.read_text() + f'\n[projects."{project}"]\ntrust_level = "trusted"\n')
    env = agent_env(home, Path(sys.executable).parent)  # `plugman` first on PATH
    marks = Path(os.environ["PLUGMAN_HOME"]) / "data" / "plugins" / "guard-guards" / "marks"

    said = codex_turn(codex, project, env, "echo hello")
    assert "hook: PostToolUse Completed" in said, said  # Codex ran both handlers' launchers
    assert not marks.exists()  # neither `if` admits `echo hello`

    said = codex_turn(codex, project, env, "git commit --allow-empty -m first")
    assert "hook: PostToolUse Completed" in said, said
    root = marks.read_text().split()[1]
    assert marks.read_text().splitlines() == [f"commit {root}"]  # once, and only the commit one

    codex_turn(codex, project, env, "git status")
    assert marks.read_text().splitlines() == [f"commit {root}"]

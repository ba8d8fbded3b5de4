"""The hook launcher with the real Codex 0.171, Gemini CLI 0.61 and Copilot CLI 1.0.102: a
plugin's conditional hooks (security-guidance's shape: `PostToolUse` on `Bash`, one handler
`if: "Bash(git commit:*)"`, one `if: "Bash(git push:*)"`) installed at project scope with the
agent linked run in a real agent turn (a loopback fake model asks for one shell command:
tests/integration/fake_responses) only for the command their `if` names, exactly once, with the
plugin's environment; the project's hooks file names `plugman hooks exec` and holds no machine
path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.agents import (
    agent_env,
    codex_bin,
    copilot_bin,
    gemini_bin,
    trust_gemini_folder,
)
from tests.integration.fake_responses import (
    chat_server,
    codex_exec_args,
    gemini_server,
    responses_server,
)
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


def codex_turn(home: Path, project: Path, command: str) -> str:
    """One real `codex exec` turn in which the (fake) model runs `command` in the shell."""
    env = {**agent_env(home, Path(sys.executable).parent), "FAKE_OPENAI_KEY": "sk-fake"}
    with responses_server(command) as url:
        return agent_turn([str(codex_bin()), *codex_exec_args(url), "run it"], project, env)


def gemini_turn(home: Path, project: Path, command: str) -> str:
    """One real `gemini -p` turn in which the (fake) model runs `command` in the shell."""
    env = {**agent_env(home, Path(sys.executable).parent), "GEMINI_API_KEY": "fake"}
    with gemini_server(command) as url:
        argv = [str(gemini_bin()), "-m", "gemini-2.5-flash", "-p", "run it", "--yolo"]
        return agent_turn(argv, project, {**env, "GOOGLE_GEMINI_BASE_URL": url})


def copilot_turn(home: Path, project: Path, command: str) -> str:
    """One real `copilot -p` turn (BYOK) in which the (fake) model runs `command` in the shell."""
    env = agent_env(home, Path(sys.executable).parent)
    for name in ("GITHUB_TOKEN", "GH_TOKEN"):  # Copilot refuses the planted classic token
        env.pop(name, None)
    with chat_server(command) as url:
        byok = {"COPILOT_PROVIDER_BASE_URL": url, "COPILOT_PROVIDER_API_KEY": "x"}
        env = {**env, **byok, "COPILOT_MODEL": "gpt-4o", "COPILOT_OFFLINE": "true"}
        argv = [str(copilot_bin()), "-p", "run it", "--allow-all-tools"]
        return agent_turn(argv, project, env)


def agent_turn(argv: list[str], project: Path, env: dict[str, str]) -> str:
    trace = os.environ.get("PLUGMAN_LAUNCH_TRACE")  # which path each launcher call took
    env = {**env, "PLUGMAN_LAUNCH_TRACE": trace} if trace else env
    done = subprocess.run(
        argv, cwd=project, env=env, capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


def guarded_project(home: Path, tmp_path: Path, agent: str) -> Path:
    """A git project with `guard` installed at project scope and `agent` linked there."""
    project = tmp_path / "project"
    project.mkdir()
    for args in (["init", "-q"], ["config", "user.name", "t"], ["config", "user.email", "t@t"]):
        subprocess.run(["git", *args], cwd=project, check=True)
    cli(project, "marketplace", "add", str(guard_market(tmp_path / "market")))
    cli(project, "agents", "add", agent, "--scope", "project")
    cli(project, "install", "guard", "--scope", "project")
    cli(project, "trust", "approve", "--all")
    return project


def launchers(written: str, agent: str, event: str) -> list[str]:
    """The hooks file holds no machine path; its handlers' commands, in order."""
    assert os.environ["PLUGMAN_HOME"] not in written and "/tmp" not in written, written
    found = json.loads(written)["hooks"][event]
    expected = [
        f"plugman hooks exec {agent} PostToolUse 'guard@guards#{n}'" for n in range(len(found))
    ]
    assert [h["command"] for g in found for h in g["hooks"]] == expected
    return [g["matcher"] for g in found]


def paths_taken(trace: Path) -> list[str]:
    """Which path each launcher call took (PLUGMAN_LAUNCH_TRACE), in order."""
    return [line.split()[0] for line in trace.read_text().splitlines()]


def marks() -> Path:
    return Path(os.environ["PLUGMAN_HOME"]) / "data" / "plugins" / "guard-guards" / "marks"


def test_codex_runs_a_conditional_plugin_hook_only_for_its_command(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = tmp_path / "trace"
    monkeypatch.setenv("PLUGMAN_LAUNCH_TRACE", str(trace))
    project = guarded_project(home, tmp_path, "codex")
    written = (project / ".codex" / "hooks.json").read_text()
    assert launchers(written, "codex", "PostToolUse") == ["Bash", "Bash"]  # Claude's, a pre-filter
    config = home / ".codex" / "config.toml"  # the user lets Codex read the project's config
    config.write_text(config.read_text() + f'\n[projects."{project}"]\ntrust_level = "trusted"\n')

    said = codex_turn(home, project, "echo hello")
    assert "hook: PostToolUse Completed" in said, said  # Codex ran both handlers' launchers
    assert not marks().exists()  # neither `if` admits `echo hello`

    said = codex_turn(home, project, "git commit --allow-empty -m first")
    assert "hook: PostToolUse Completed" in said, said
    root = marks().read_text().split()[1]
    assert marks().read_text().splitlines() == [f"commit {root}"]  # once, only the commit one

    codex_turn(home, project, "git status")
    assert marks().read_text().splitlines() == [f"commit {root}"]
    # which path each call took: Codex runs hooks with HOME and XDG folders of its own here
    # (agent_env), not those the deployment ran with, so the first call of each hook misses
    # (its plan is keyed by them) and writes the plan every later call takes
    taken = [line.split()[0] for line in trace.read_text().splitlines()]
    assert taken == ["full", "full", "plan", "plan", "plan", "plan"], taken


def test_gemini_runs_a_conditional_plugin_hook_only_for_its_command(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = tmp_path / "trace"
    monkeypatch.setenv("PLUGMAN_LAUNCH_TRACE", str(trace))
    project = guarded_project(home, tmp_path, "gemini")
    written = (project / ".gemini" / "settings.json").read_text()
    assert launchers(written, "gemini", "AfterTool") == ["run_shell_command"] * 2
    trust_gemini_folder(home, project)
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))

    gemini_turn(home, project, "echo hello")
    assert (project / ".git").is_dir() and not marks().exists()
    gemini_turn(home, project, "git commit --allow-empty -m first")
    root = marks().read_text().split()[1]
    assert marks().read_text().splitlines() == [f"commit {root}"]
    log = subprocess.run(["git", "log", "--oneline"], cwd=project, capture_output=True, text=True)
    assert log.stdout.count("first") == 1  # Gemini really ran the commit
    assert paths_taken(trace) == ["full", "full", "plan", "plan"]  # as Codex's: see there


def test_copilot_runs_a_conditional_plugin_hook_only_for_its_command(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = tmp_path / "trace"
    monkeypatch.setenv("PLUGMAN_LAUNCH_TRACE", str(trace))
    project = guarded_project(home, tmp_path, "copilot-cli")
    written = (project / ".github" / "hooks" / "plugman.json").read_text()
    assert launchers(written, "copilot", "PostToolUse") == ["Bash", "Bash"]
    (home / ".copilot").mkdir(exist_ok=True)
    (home / ".copilot" / "config.json").write_text(json.dumps({"trusted_folders": [str(project)]}))

    copilot_turn(home, project, "echo hello")
    assert not marks().exists()
    copilot_turn(home, project, "git commit --allow-empty -m first")
    root = marks().read_text().split()[1]
    assert marks().read_text().splitlines() == [f"commit {root}"]
    log = subprocess.run(["git", "log", "--oneline"], cwd=project, capture_output=True, text=True)
    assert log.stdout.count("first") == 1  # Copilot really ran the commit
    assert paths_taken(trace) == ["full", "full", "plan", "plan"]  # as Codex's: see there


def plain_market(root: Path) -> Path:
    """A marketplace with `guard` whose one PostToolUse handler has no matcher and no `if`:
    nothing for the launcher to translate (the direct form)."""
    guard_market(root)
    plain = {"hooks": [{"type": "command", "command": 'sh "${CLAUDE_PLUGIN_ROOT}/mark.sh" any'}]}
    (root / "guard" / "hooks" / "hooks.json").write_text(
        json.dumps({"hooks": {"PostToolUse": [plain]}})
    )
    return root


def test_codex_runs_a_plain_plugin_hook_through_the_direct_form(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex's project file names `plugman-hook` for a plugin hook with nothing to translate;
    in real Codex turns the first call misses (Codex's own HOME and XDG folders), the second
    takes the JSON plan and writes the sh plan, the third runs the handler from it (`direct`),
    each time with the plugin's environment."""
    trace = tmp_path / "trace"
    monkeypatch.setenv("PLUGMAN_LAUNCH_TRACE", str(trace))
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    cli(project, "marketplace", "add", str(plain_market(tmp_path / "market")))
    cli(project, "agents", "add", "codex", "--scope", "project")
    cli(project, "install", "guard", "--scope", "project")
    written = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]
    commands = [h["command"] for g in written["PostToolUse"] for h in g["hooks"]]
    assert commands == ["plugman-hook codex PostToolUse 'guard@guards#0'"]
    config = home / ".codex" / "config.toml"
    config.write_text(config.read_text() + f'\n[projects."{project}"]\ntrust_level = "trusted"\n')
    time.sleep(2.1)  # an sh plan is written once the files it watches are 2 s old
    for _ in range(3):
        said = codex_turn(home, project, "echo hello")
        assert "hook: PostToolUse Completed" in said, said
    root = marks().read_text().split()[1]
    assert marks().read_text().splitlines() == [f"any {root}"] * 3
    assert paths_taken(trace) == ["full", "sh-plan", "plan", "direct"]

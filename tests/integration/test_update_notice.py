"""The update notice in real agents' session start (`plugman agents add --notify-updates`,
plugman.runtime.launch.notices): Claude Code 2.1.332's own stream-json events show the SessionStart
hook printing the notice, nothing once the plugin is updated, and a broken cache not failing the
session; Codex 0.171, Gemini CLI 0.61 (which also shows it to the user) and Copilot CLI 1.0.102 hand
the notice to the model (a fake model endpoint on 127.0.0.1 records what it was sent). The fast
tests drive `plugman hooks notify` and the opt-in switches."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.agents import (
    agent_env,
    claude_session_events,
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

NOTICE = "plugman: 1 plugin has an update (tool@tools): run `plugman update`"


def market(root: Path, version: str) -> Path:
    plugin = root / "tool" / ".claude-plugin"
    plugin.mkdir(parents=True, exist_ok=True)
    (plugin / "plugin.json").write_text(json.dumps({"name": "tool", "version": version}))
    entry = {"name": "tool", "source": "./tool"}
    catalog = {"name": "tools", "owner": {"name": "t"}, "plugins": [entry]}
    (root / ".claude-plugin").mkdir(exist_ok=True)
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    return root


def outdated_project(tmp_path: Path, *agents: str) -> tuple[Path, Path]:
    """A project, `tool` 1.0.0 installed at user scope, `agents` linked with the notice, the
    catalog then offering 1.1.0 and `plugman outdated` run: (project, marketplace)."""
    project = tmp_path / "project"
    project.mkdir()
    source = market(tmp_path / "market", "1.0.0")
    cli(project, "marketplace", "add", str(source))
    cli(project, "install", "tool")
    cli(project, "agents", "add", *agents, "--notify-updates")
    market(source, "1.1.0")
    said = cli(project, "outdated").output
    assert "tool@tools (user): 1.0.0 -> 1.1.0" in said, said
    return project, source


def cache() -> Path:
    return Path(os.environ["PLUGMAN_HOME"]) / "state" / "update-notice.json"


def notify(project: Path, agent: str = "claude-code") -> subprocess.CompletedProcess[str]:
    """What the agents' SessionStart hook runs, as they run it."""
    argv = [sys.executable, "-m", "plugman", "hooks", "notify", agent]
    return subprocess.run(argv, cwd=project, capture_output=True, text=True, timeout=60)


def session_start(project: Path, home: Path) -> tuple[list[dict[str, Any]], bool]:
    """Claude Code's SessionStart hook responses in a real session, and whether it got to its
    `init` event (the session went on)."""
    events = claude_session_events(project, agent_env(home, Path(sys.executable).parent))
    started = [
        e
        for e in events
        if e.get("subtype") == "hook_response" and e.get("hook_event") == "SessionStart"
    ]
    return started, any(e.get("subtype") == "init" for e in events)


@pytest.mark.slow
def test_claude_code_session_start_shows_the_notice_and_nothing_once_updated(
    home: Path, tmp_path: Path
) -> None:
    project, _ = outdated_project(tmp_path, "claude-code")
    trusted = {"projects": {str(project): {"hasTrustDialogAccepted": True}}}
    (home / ".claude.json").write_text(json.dumps(trusted))

    started, went_on = session_start(project, home)
    assert went_on and len(started) == 1, started
    assert started[0]["exit_code"] == 0 and started[0]["outcome"] == "success", started
    said = json.loads(started[0]["stdout"])
    assert said["systemMessage"] == NOTICE, said
    assert said["hookSpecificOutput"] == {
        "hookEventName": "SessionStart",
        "additionalContext": NOTICE,
    }

    cli(project, "update")  # nothing outdated any more: the hook says nothing
    started, went_on = session_start(project, home)
    assert went_on and [(e["exit_code"], e["stdout"]) for e in started] == [(0, "")], started

    cache().write_text('{"checked": "yesterday", "updates": [{"id": 3')  # broken
    started, went_on = session_start(project, home)
    assert went_on and [(e["exit_code"], e["stdout"]) for e in started] == [(0, "")], started

    cli(project, "agents", "remove", "claude-code")
    started, went_on = session_start(project, home)
    assert went_on and started == [], started  # unlinking took exactly the hook out


@pytest.mark.slow
def test_codex_hands_the_notice_to_the_model(home: Path, tmp_path: Path) -> None:
    project, _ = outdated_project(tmp_path, "codex")
    env = {**agent_env(home, Path(sys.executable).parent), "FAKE_OPENAI_KEY": "sk-fake"}
    heard: list[dict[str, Any]] = []
    with responses_server("true", heard) as url:
        argv = [str(codex_bin()), *codex_exec_args(url), "hi"]
        done = subprocess.run(
            argv, cwd=project, env=env, capture_output=True, text=True, timeout=180
        )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert heard and NOTICE in json.dumps(heard[0]), json.dumps(heard[:1])[-3000:]


@pytest.mark.slow
def test_gemini_shows_the_notice_and_hands_it_to_the_model(home: Path, tmp_path: Path) -> None:
    (home / ".gemini").mkdir()
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    project, _ = outdated_project(tmp_path, "gemini")
    trust_gemini_folder(home, project)
    env = {**agent_env(home, Path(sys.executable).parent), "GEMINI_API_KEY": "fake"}
    heard: list[dict[str, Any]] = []
    with gemini_server("true", heard) as url:
        argv = [str(gemini_bin()), "-m", "gemini-2.5-flash", "-p", "hi", "--yolo"]
        done = subprocess.run(
            argv,
            cwd=project,
            env={**env, "GOOGLE_GEMINI_BASE_URL": url},
            capture_output=True,
            text=True,
            timeout=180,
        )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert f"Hook system message: {NOTICE}" in done.stdout + done.stderr
    assert heard and NOTICE in json.dumps(heard[0]), json.dumps(heard[:1])[-3000:]


@pytest.mark.slow
def test_copilot_hands_the_notice_to_the_model(home: Path, tmp_path: Path) -> None:
    project, _ = outdated_project(tmp_path, "copilot-cli")
    env = agent_env(home, Path(sys.executable).parent)
    for name in ("GITHUB_TOKEN", "GH_TOKEN"):  # Copilot refuses the planted classic token
        env.pop(name, None)
    heard: list[dict[str, Any]] = []
    with chat_server("true", heard) as url:
        byok = {"COPILOT_PROVIDER_BASE_URL": url, "COPILOT_PROVIDER_API_KEY": "x"}
        env = {**env, **byok, "COPILOT_MODEL": "gpt-4o", "COPILOT_OFFLINE": "true"}
        argv = [str(copilot_bin()), "-p", "hi", "--allow-all-tools"]
        done = subprocess.run(
            argv, cwd=project, env=env, capture_output=True, text=True, timeout=180
        )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert heard and NOTICE in json.dumps(heard[0]), json.dumps(heard[:1])[-3000:]


def test_notice_forms_and_a_cache_that_cannot_be_read(tmp_path: Path) -> None:
    project, _ = outdated_project(tmp_path, "gemini")
    shown = notify(project, "gemini")
    assert shown.returncode == 0 and json.loads(shown.stdout)["systemMessage"] == NOTICE
    assert notify(project, "goose").stdout == NOTICE + "\n"  # plain stdout
    assert json.loads(notify(project, "cursor").stdout) == {"additional_context": NOTICE}
    assert json.loads(notify(project, "copilot-cli").stdout) == {"additionalContext": NOTICE}

    for broken in (b"\xff\xfe", b"[1, 2]", b'{"checked": 1, "updates": "all"}'):
        cache().write_bytes(broken)
        done = notify(project)
        assert (done.returncode, done.stdout) == (0, ""), (broken, done)
    cache().unlink()
    cache().mkdir()  # not even a file
    done = notify(project)
    assert (done.returncode, done.stdout) == (0, ""), done


def test_stale_check_says_to_check_again(tmp_path: Path) -> None:
    project, _ = outdated_project(tmp_path, "gemini")
    body = json.loads(cache().read_text())
    cache().write_text(json.dumps({**body, "checked": body["checked"] - 8 * 86400}))
    said = json.loads(notify(project, "gemini").stdout)["systemMessage"]
    assert said == (
        "plugman: plugins may have updates (last checked 8 days ago): run `plugman outdated`"
    )


def test_uninstall_and_update_end_the_notice(tmp_path: Path) -> None:
    project, _ = outdated_project(tmp_path, "gemini")
    cli(project, "uninstall", "tool")
    assert notify(project).stdout == ""
    cli(project, "install", "tool")  # 1.1.0 now: nothing to say
    cli(project, "outdated")
    assert notify(project).stdout == ""


def test_user_setting_turns_the_notice_on_and_off_for_every_link(
    home: Path, tmp_path: Path
) -> None:
    project, _ = outdated_project(tmp_path, "gemini")
    cli(project, "agents", "add", "codex")  # without the flag
    gemini, codex = home / ".gemini" / "settings.json", home / ".codex" / "hooks.json"
    assert "hooks notify gemini" in gemini.read_text() and not codex.exists()

    user = Path(os.environ["PLUGMAN_HOME"]) / "config" / "plugman.toml"
    user.write_text(user.read_text() + "\n[notices]\nupdates = true\n")
    cli(project, "agents", "add", "codex")  # any deployment applies it
    assert "hooks notify codex" in codex.read_text()

    user.write_text(user.read_text().replace("updates = true", "updates = false"))
    cli(project, "agents", "add", "codex")
    assert not codex.exists() and not gemini.exists()  # the files only held the notice

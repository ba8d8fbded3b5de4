"""Read-back: `plugman list --check`, `info --check` and `doctor` ask each linked agent's own CLI
what it loaded and report what it failed to load in the agent's words; an agent CLI that is
missing, failing or slow is "not checked", with why, and never fails the command.

The real agents from `.tools` (slow tests), each with a throwaway HOME, offline; the failing
and slow agents are real processes (scripts on PATH) standing in for a broken install.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from plugman.agents import readback
from plugman.core.paths import Paths
from tests.conftest import SAMPLES
from tests.integration.agents import (
    agent_env,
    claude_bin,
    codex_bin,
    copilot_bin,
    gemini_bin,
    trust_gemini_folder,
)

BIN = Path(sys.executable).parent


class World:
    def __init__(self, root: Path, plugman_home: Path, tools: list[Path]) -> None:
        self.home, self.project = root / "home", root / "project"
        self.home.mkdir()
        self.project.mkdir()
        self.env = agent_env(self.home, BIN) | {"PLUGMAN_HOME": str(plugman_home)}
        self.env["PATH"] = os.pathsep.join([*map(str, tools), str(BIN), "/usr/bin", "/bin"])
        self.env["COPILOT_OFFLINE"] = "true"

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "plugman", "--project", str(self.project), *args],
            cwd=self.project, env=self.env, capture_output=True, text=True, timeout=300,
            check=False,
        )  # fmt: skip

    def json(self, *args: str, code: int = 0) -> Any:
        done = self.run(*args, "--json")
        assert done.returncode == code, (args, done.stdout, done.stderr)
        return json.loads(done.stdout)


def bad_plugin(root: Path) -> Path:
    """A plugin Claude Code installs and loads only in part: its skill loads, its hooks file
    (no `hooks` key, the events at the top) fails to (tests/claude_rules: hooks-file-no-hooks-key,
    load verdict "partial"). plugman installs it too, as Claude does, and says the hooks file is
    left out for the agents it exports hooks to."""
    (root / ".claude-plugin").mkdir(parents=True)
    (root / "hooks").mkdir()
    (root / "skills" / "s1").mkdir(parents=True)
    manifest = {"name": "badhooks", "version": "1.0.0"}
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    stop = [{"hooks": [{"type": "command", "command": "true"}]}]
    (root / "hooks" / "hooks.json").write_text(json.dumps({"Stop": stop}))
    (root / "skills" / "s1" / "SKILL.md").write_text("---\nname: s1\ndescription: x\n---\nhi\n")
    return root


@pytest.mark.slow
def test_claude_says_in_its_own_words_what_it_failed_to_load(
    tmp_path: Path, isolated_home: Path
) -> None:
    world = World(tmp_path, isolated_home, [claude_bin().parent])
    world.json("marketplace", "add", str(SAMPLES))
    world.json("agents", "add", "claude-code")
    world.json("install", str(bad_plugin(tmp_path / "bad")), "writing-skills")

    plain = world.json("list")
    assert "agents" not in plain and all("checked" not in p for p in plain["plugins"])
    listed = world.json("list", "--check")
    said = {p["id"]: p["checked"]["claude-code"] for p in listed["plugins"]}
    (bad,) = said["badhooks@direct"]
    assert (bad["name"], bad["state"]) == ("badhooks@skills-dir", "failed")
    assert bad["detail"].startswith("Hook load failed:")  # Claude's words
    assert "hooks.json must have" in bad["detail"]
    assert [(i["name"], i["state"]) for i in said["writing-skills@plugman-samples"]] == [
        ("writing-skills@skills-dir", "ok")
    ]
    (report,) = listed["agents"]
    assert (report["agent"], report["checked"]) == ("claude-code", True)

    text = world.run("list", "--check").stdout
    assert "claude-code says badhooks@skills-dir: failed: Hook load failed:" in text
    info = world.run("info", "badhooks@direct", "--check").stdout
    assert "user: claude-code says badhooks@skills-dir: failed: Hook load failed:" in info

    doctor = world.json("doctor", code=1)
    failed = [p for p in doctor["problems"] if p["where"] == "claude-code"]
    assert len(failed) == 1 and failed[0]["severity"] == "error"
    assert failed[0]["message"].startswith(
        "claude-code failed to load badhooks@direct's badhooks@skills-dir: Hook load failed:"
    )


@pytest.mark.slow
def test_codex_gemini_and_copilot_say_which_servers_they_use(
    tmp_path: Path, isolated_home: Path
) -> None:
    tools = [codex_bin().parent, gemini_bin().parent, copilot_bin().parent]
    world = World(tmp_path, isolated_home, tools)
    project = world.project
    # the user trusts the folder in Codex and Copilot CLI, not (yet) in Gemini CLI
    (world.home / ".codex").mkdir()
    (world.home / ".codex" / "config.toml").write_text(
        f'[projects."{project}"]\ntrust_level = "trusted"\n'
    )
    (world.home / ".copilot").mkdir()
    (world.home / ".copilot" / "config.json").write_text(
        json.dumps({"trusted_folders": [str(project)]})
    )
    world.json("marketplace", "add", str(SAMPLES))
    world.json("agents", "add", "codex", "gemini", "copilot-cli", "--scope", "project")
    world.json("install", "notes-server", "--scope", "project")

    listed = world.json("list", "--check")
    (row,) = listed["plugins"]
    said = {agent: items[0] for agent, items in row["checked"].items()}
    server = "plugin_notes-server_notes"
    assert {a: (i["name"], i["state"]) for a, i in said.items()} == {
        "codex": (server, "ok"),
        "copilot-cli": (server, "ok"),
        "gemini": (server, "waits"),  # for its folder trust
    }
    assert "untrusted" in said["gemini"]["detail"]  # Gemini's own warning
    assert "/permissions trust" in said["gemini"]["step"]
    commands = sorted((r["agent"], r["command"]) for r in listed["agents"])
    assert commands == [
        ("codex", "codex app-server"),  # hooks/list: no hook delivered here, nothing to compare
        ("codex", "codex mcp list --json"),
        ("copilot-cli", "copilot mcp list --json"),
        ("copilot-cli", "copilot skill list --json"),
        ("gemini", "gemini mcp list"),
        ("gemini", "gemini skills list"),
    ]
    assert "NOTES_OWNER" not in json.dumps(listed)  # codex prints env values; never passed on

    doctor = world.json("doctor")  # waiting for folder trust is a warning, not an error
    (warning,) = [p for p in doctor["problems"] if p["where"] == "gemini"]
    assert warning["severity"] == "warning" and "notes-server" in warning["message"]
    assert "waits for Gemini CLI's folder trust" in warning["message"]
    assert warning["hint"] == f"run gemini in {project} and trust it: /permissions trust"


def fake_agent(folder: Path, name: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)


def test_an_agent_cli_that_fails_is_slow_or_is_missing_is_not_checked(
    tmp_path: Path, isolated_home: Path
) -> None:
    world = World(tmp_path, isolated_home, [tmp_path / "bin"])
    world.json("marketplace", "add", str(SAMPLES))
    world.json("agents", "add", "codex", "gemini", "claude-code", "--scope", "project")
    world.json("install", "notes-server", "--scope", "project")
    fake_agent(tmp_path / "bin", "codex", "echo 'config.toml: bad key' >&2; exit 3")
    fake_agent(tmp_path / "bin", "gemini", "sleep 30")
    fake_agent(tmp_path / "bin", "claude", "echo 'not json at all'")
    paths = Paths.from_env(world.env, project=world.project)
    asked = readback.ask(paths, world.env, timeout=2)
    assert not any(r.checked for r in asked)
    reports: dict[str, readback.Report] = {}
    for report in asked:  # each agent's first: its server or plugin list
        reports.setdefault(report.agent, report)
    hooks = [r for r in asked if r.command == "codex app-server"]
    assert [r.reason for r in hooks] == ["codex ended without answering (exit code 3)"]
    assert reports["codex"].reason == "exit code 3: config.toml: bad key"
    assert reports["gemini"].reason == "gemini gave no answer in 2 s"
    assert reports["claude-code"].reason.startswith("its output could not be read")

    (tmp_path / "bin" / "codex").unlink()
    (tmp_path / "bin" / "gemini").unlink()
    done = world.run("doctor")
    assert "codex: not checked (codex is not on PATH)" in done.stdout
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_gemini_says_a_server_whose_store_folder_is_gone_does_not_connect(
    tmp_path: Path, isolated_home: Path
) -> None:
    world = World(tmp_path, isolated_home, [gemini_bin().parent])
    trust_gemini_folder(world.home, world.project)
    world.json("marketplace", "add", str(SAMPLES))
    world.json("agents", "add", "gemini")
    world.json("install", "notes-server")
    (row,) = world.json("list", "--check")["plugins"]
    assert [i["detail"] for i in row["checked"]["gemini"]] == ["Connected"]

    store = isolated_home / "data" / "store"
    for tree in store.iterdir():  # the store tree goes, the entry stays
        for path in [tree, *tree.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
        shutil.rmtree(tree)
    # Gemini's entry names the launcher, which now says why it starts nothing (exit 1)
    entry = json.loads((world.home / ".gemini" / "settings.json").read_text())["mcpServers"]
    launcher = entry["plugin_notes-server_notes"]
    started = subprocess.run(
        [launcher["command"], *launcher["args"]], cwd=world.project,
        env=world.env | launcher.get("env", {}), stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=60, check=False,
    )  # fmt: skip
    missing = "the stored copy of notes-server@plugman-samples (user) is missing"
    assert started.returncode == 1 and started.stdout == "", started
    assert f"error: plugin:notes-server:notes is not started: {missing}" in started.stderr
    assert "hint: reinstall it: plugman uninstall notes-server --scope user" in started.stderr

    doctor = world.json("doctor", code=1)
    errors = [p["message"] for p in doctor["problems"] if p["severity"] == "error"]
    assert errors == [  # said once each: the resolution's note and the store check agree
        missing,
        "gemini failed to load notes-server@plugman-samples's plugin_notes-server_notes: "
        "Disconnected",
    ]

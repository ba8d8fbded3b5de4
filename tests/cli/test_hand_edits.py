"""Hand edits, as the README promises: after a user edits an entry plugman wrote into an agent's
file, `uninstall`, `agents remove` and `export --remove` refuse (exit 1, every file as it was)
and name the file, the entry and the choice; with `--force` they go on, leave the entry and say
so, and `doctor` then reports it naming a plugin that is no longer installed (plugman's entries
name the launchers, `plugman hooks exec ... 'OWNER#N'` and `plugman mcp run NAME`) or, for an
entry of the user's own, a store folder that is gone.

The real CLI as a process (`python -m plugman`), a throwaway HOME and PLUGMAN_HOME, the sample
marketplace; no agent on PATH, so `doctor` says each linked agent was not checked and why.
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

from tests.conftest import SAMPLES
from tests.integration.helpers import snapshot


class World:
    def __init__(self, root: Path, plugman_home: Path) -> None:
        self.home, self.project, self.plugman_home = root / "home", root / "project", plugman_home
        self.home.mkdir()
        self.project.mkdir()
        (self.home / "bin").mkdir()
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("CODEX", "CLAUDE"))},
            "HOME": str(self.home),
            "PATH": str(self.home / "bin"),  # no agent CLI to ask
        }

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "plugman", "--project", str(self.project), *args],
            env=self.env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    def ok(self, *args: str) -> Any:
        done = self.run(*args, "--json")
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return json.loads(done.stdout)

    def files(self) -> dict[str, tuple[str, bytes]]:
        return snapshot(self.home, self.project, self.plugman_home)


@pytest.fixture
def world(tmp_path: Path, isolated_home: Path) -> World:
    made = World(tmp_path, isolated_home)
    made.ok("marketplace", "add", str(SAMPLES))
    return made


def edit_hook(file: Path) -> None:
    """What a user does: widen the matcher of the PreToolUse hook plugman wrote."""
    text = file.read_text()
    assert text.count('"matcher": "Bash"') == 1
    file.write_text(text.replace('"matcher": "Bash"', '"matcher": "Bash|Shell"'))


def test_uninstall_refuses_to_leave_a_hand_edited_codex_hook_behind(world: World) -> None:
    world.ok("agents", "add", "codex", "--scope", "project")
    world.ok("install", "guardrails", "--scope", "project")
    hooks = world.project / ".codex" / "hooks.json"
    edit_hook(hooks)
    before = world.files()

    done = world.run("uninstall", "guardrails", "--scope", "project")
    assert done.returncode == 1, done
    assert f"error: {hooks}: hooks.PreToolUse[0] (guardrails@plugman-samples's" in done.stderr
    assert "was edited by hand" in done.stderr and "pass --force" in done.stderr
    assert "nothing was changed" in done.stderr
    assert world.files() == before
    failed = world.run("uninstall", "guardrails", "--scope", "project", "--json")
    error = json.loads(failed.stdout)["error"]
    assert (failed.returncode, error["exit_code"], error["where"]) == (1, 1, str(hooks))
    assert world.files() == before
    said = world.run("doctor").stdout  # an edited hook, not a removed one
    assert "(hooks.PreToolUse[0])' was edited by hand" in said and "removed by hand" not in said

    forced = world.run("uninstall", "guardrails", "--scope", "project", "--force")
    assert forced.returncode == 0, forced
    assert f"warning: {hooks}: hooks.PreToolUse[0]" in forced.stderr
    assert "stays as it is" in forced.stderr
    left = json.loads(hooks.read_text())["hooks"]
    assert list(left) == ["PreToolUse"] and left["PreToolUse"][0]["matcher"] == "Bash|Shell"

    doctor = world.run("doctor")
    assert doctor.returncode == 1
    assert (
        f"error: {hooks}: hooks.PreToolUse[0].hooks[0].command names the hook "
        "guardrails@plugman-samples#0, of guardrails@plugman-samples, which is not installed "
        "here (yours: edited by hand, or not plugman's here)"
    ) in doctor.stdout
    assert "install the plugin (plugman sync installs the ones the project" in doctor.stdout
    assert "codex: not checked (codex is not on PATH)" in doctor.stdout


def test_a_hand_edited_server_stops_uninstall_and_agents_remove(world: World) -> None:
    world.ok("agents", "add", "gemini", "codex", "--scope", "project")
    world.ok("install", "notes-server", "--scope", "project")
    settings = world.project / ".gemini" / "settings.json"
    doc = json.loads(settings.read_text())
    launcher = doc["mcpServers"]["plugin_notes-server_notes"]
    assert launcher == {"command": "plugman", "args": ["mcp", "run", "plugin:notes-server:notes"]}
    launcher["command"] = "/opt/tools/bin/plugman"  # plugman is not on this user's agent PATH
    settings.write_text(json.dumps(doc, indent=2))
    before = world.files()

    for args in (
        ("uninstall", "notes-server", "--scope", "project"),
        ("agents", "remove", "gemini", "--scope", "project"),
    ):
        done = world.run(*args)
        assert done.returncode == 1, (args, done)
        assert f"{settings}: mcpServers.plugin_notes-server_notes" in done.stderr, args
        assert world.files() == before, args

    forced = world.run("agents", "remove", "gemini", "--scope", "project", "--force")
    assert forced.returncode == 0, forced
    assert "mcpServers.plugin_notes-server_notes" in forced.stderr
    kept = json.loads(settings.read_text())["mcpServers"]["plugin_notes-server_notes"]
    assert kept["command"] == "/opt/tools/bin/plugman"
    # codex's entry is as plugman wrote it: unlinking codex goes through without a word
    done = world.run("agents", "remove", "codex", "--scope", "project")
    assert (done.returncode, done.stderr) == (0, ""), done
    assert not (world.project / ".codex").exists()

    # linked again, gemini's file keeps the user's entry (now theirs): uninstalling the plugin
    # it launches still asks first, and with --force leaves it, which doctor then reports
    world.ok("agents", "add", "gemini", "--scope", "project")
    assert json.loads(settings.read_text())["mcpServers"]["plugin_notes-server_notes"] == kept
    before = world.files()
    done = world.run("uninstall", "notes-server", "--scope", "project")
    assert done.returncode == 1 and "mcpServers.plugin_notes-server_notes" in done.stderr, done
    assert world.files() == before
    assert world.run("uninstall", "notes-server", "--scope", "project", "--force").returncode == 0
    doctor = world.run("doctor", "--json")
    assert doctor.returncode == 1
    assert {
        "severity": "error",
        "where": str(settings),
        "message": "mcpServers.plugin_notes-server_notes.args[2] names the server "
        "plugin:notes-server:notes, of notes-server, which is not installed here (yours: "
        "edited by hand, or not plugman's here)",
        "hint": "install the plugin (plugman sync installs the ones the project declares), or "
        "delete the entry; plugman leaves an entry it did not write here alone",
    } in json.loads(doctor.stdout)["problems"]


def test_export_remove_refuses_to_leave_a_hand_edited_entry(world: World) -> None:
    world.ok("install", "notes-server")
    world.ok("export", "--target", "gemini", "--write")
    settings = world.home / ".gemini" / "settings.json"
    doc = json.loads(settings.read_text())
    doc["mcpServers"]["plugin_notes-server_notes"]["command"] = "python3.12"
    settings.write_text(json.dumps(doc, indent=2))
    before = world.files()
    done = world.run("export", "--target", "gemini", "--remove")
    assert done.returncode == 1 and "mcpServers.plugin_notes-server_notes" in done.stderr
    assert world.files() == before
    forced = world.ok("export", "--target", "gemini", "--remove", "--force")
    assert any("was edited by hand, so it stays" in note for note in forced["notes"])
    assert json.loads(settings.read_text())["mcpServers"]["plugin_notes-server_notes"]


def test_an_unedited_uninstall_goes_through_without_a_word(world: World) -> None:
    world.ok("agents", "add", "codex", "--scope", "project")
    world.ok("install", "guardrails", "notes-server", "--scope", "project")
    done = world.run("uninstall", "guardrails", "notes-server", "--scope", "project")
    assert (done.returncode, done.stderr) == (0, ""), done
    assert not (world.project / ".codex").exists()


def test_doctor_finds_a_deployed_link_and_entries_whose_store_folder_is_gone(
    world: World,
) -> None:
    world.ok("agents", "add", "claude-code", "gemini")
    world.ok("install", "writing-skills", "notes-server")
    store = world.plugman_home / "data" / "store"
    # plugman's own Gemini entry names the launcher, no store path; a user who copied the
    # server's path out of the store (or a file an older plugman wrote) names one
    (script,) = store.glob("*/server/notes_server.py")
    settings = world.home / ".gemini" / "settings.json"
    doc = json.loads(settings.read_text())
    doc["mcpServers"]["my-notes"] = {"command": "python3", "args": [str(script)]}
    settings.write_text(json.dumps(doc, indent=2))
    assert world.run("doctor", "--no-check").returncode == 0
    for tree in store.iterdir():  # as a user clearing space by hand would
        for path in [tree, *tree.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
        shutil.rmtree(tree)
    done = world.run("doctor", "--json")
    assert done.returncode == 1
    found = json.loads(done.stdout)
    link = str(world.home / ".claude" / "skills" / "writing-skills")
    assert any(
        p["where"] == link and "which no longer exists" in p["message"] for p in found["problems"]
    )
    (mine,) = [p for p in found["problems"] if p["message"].startswith("mcpServers.my-notes")]
    assert mine["where"] == str(settings)
    assert mine["message"] == (
        f"mcpServers.my-notes.args[0] names {script.parents[1]}, a store folder that no longer "
        "exists (yours: edited by hand, or not plugman's here)"
    )
    assert mine["hint"].startswith("delete the entry, or point it at a path that exists")
    # plugman's launcher entry stays right; what it would start is gone, and doctor says so
    missing = [p for p in found["problems"] if p["where"] == str(script.parents[1])]
    assert any(
        p["message"] == "the stored copy of notes-server@plugman-samples (user) is missing"
        and "plugman install notes-server@plugman-samples" in p["hint"]
        for p in missing
    )
    agents = {a["agent"]: a for a in found["agents"]}
    assert agents["gemini"]["checked"] is False and "not on PATH" in agents["gemini"]["reason"]
    quiet = json.loads(world.run("doctor", "--no-check", "--json").stdout)
    assert quiet["agents"] == []


def test_an_edit_handed_to_the_user_by_a_later_deployment_still_stops_uninstall(
    world: World,
) -> None:
    world.ok("agents", "add", "codex", "--scope", "project")
    world.ok("install", "guardrails", "--scope", "project")
    hooks = world.project / ".codex" / "hooks.json"
    edit_hook(hooks)
    world.ok("install", "notes-server", "--scope", "project")  # redeploys: the edit is the user's
    before = world.files()
    done = world.run("uninstall", "guardrails", "--scope", "project")
    assert done.returncode == 1, done
    assert (
        f"{hooks}: hooks.PreToolUse" in done.stderr
        and "guardrails@plugman-samples's" in done.stderr
    )
    assert world.files() == before
    assert world.run("uninstall", "notes-server", "--scope", "project").returncode == 0

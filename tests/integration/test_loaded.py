""" "Delivered" means the agent loads it (issue 34): a project linked to Codex and Gemini CLI,
before and after the user trusts the folder in each. Before, `list` and `list --check` say the
project's deliveries wait for the agent's folder trust, with the step, where the agents' own
listings (`codex mcp list`, `gemini mcp list`, `gemini skills list`, run in the project) show
them not loaded; after, "loaded", where the agents list them. Codex linked at both scopes with
hooks in each: `list --check` and `doctor` report no hook-trust key as a missing server, and the
user's `~/.codex/config.toml`, which Codex itself then edits (its trust entry), is not "out of
date". One module-scoped run of the real agents (slow)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SAMPLES
from tests.integration.agents import Machine, codex_bin, gemini_bin

pytestmark = pytest.mark.slow
SERVER = "plugin_notes-server_notes"


class World(Machine):
    def __init__(self, root: Path) -> None:
        super().__init__(root, [codex_bin().parent, gemini_bin().parent])

    def agent(self, *argv: str) -> subprocess.CompletedProcess[str]:
        """An agent's own listing, run in the project."""
        return subprocess.run(
            argv, cwd=self.project, env=self.env, capture_output=True, text=True, timeout=180,
            check=False,
        )  # fmt: skip

    def seen(self) -> dict[str, Any]:
        """What `list`, `list --check`, `doctor` and the agents' own listings say now."""
        codex = self.agent("codex", "mcp", "list", "--json").stdout
        gemini = self.agent("gemini", "mcp", "list")
        return {
            "list": self.json("list"),
            "text": self.run("list").stdout,
            "check": self.json("list", "--check"),
            "doctor": self.json("doctor"),
            "codex": [server["name"] for server in json.loads(codex)],
            "gemini mcp": gemini.stdout + gemini.stderr,
            "gemini skills": self.agent("gemini", "skills", "list").stdout,
        }


@pytest.fixture(scope="module")
def states(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    world = World(tmp_path_factory.mktemp("loaded"))
    world.json("marketplace", "add", str(SAMPLES))
    world.json("agents", "add", "codex")
    installed = world.run("install", "guardrails")  # hooks, user scope
    linked = world.run("agents", "add", "codex", "gemini", "--scope", "project")
    plugins = ("guardrails", "notes-server", "writing-skills")
    project = world.run("install", *plugins, "--scope", "project")
    local = world.run("install", "code-review", "--scope", "local")
    before = world.seen()
    config = world.home / ".codex" / "config.toml"  # as Codex writes the user's answer
    config.write_text(
        config.read_text() + f'\n[projects."{world.project}"]\ntrust_level = "trusted"\n'
    )
    rules = world.home / ".gemini" / "trustedFolders.json"  # as Gemini's /permissions trust
    rules.write_text(json.dumps({str(world.project): "TRUST_FOLDER"}, indent=2))
    after = world.seen()
    said = {"installed": installed, "linked": linked, "project": project, "local": local}
    return {"world": world, "before": before, "after": after, "said": said}


def rows(seen: dict[str, Any], key: str = "list") -> dict[tuple[str, str], dict[str, Any]]:
    return {(p["id"].split("@")[0], p["scope"]): p for p in seen[key]["plugins"]}


def loading(seen: dict[str, Any]) -> dict[tuple[str, str, str], str]:
    return {
        (plugin, scope, agent): said["state"]
        for (plugin, scope), row in rows(seen).items()
        for agent, said in row["loading"].items()
    }


def checked(seen: dict[str, Any]) -> dict[tuple[str, str, str], list[str]]:
    """(plugin, scope, agent) → the states of what the agent said of each of its items."""
    return {
        (plugin, scope, agent): sorted(item["state"] for item in items)
        for (plugin, scope), row in rows(seen, "check").items()
        for agent, items in row["checked"].items()
    }


def skill_folders(seen: dict[str, Any]) -> list[str]:
    row = rows(seen, "check")[("writing-skills", "project")]
    return [i["name"] for i in row["checked"]["gemini"]]


def test_before_trust_the_project_waits_as_the_agents_own_listings_show(
    states: dict[str, Any],
) -> None:
    before, project = states["before"], states["world"].project
    assert loading(before) == {
        ("guardrails", "user", "codex"): "loaded",
        ("guardrails", "project", "codex"): "waits",
        ("guardrails", "project", "gemini"): "waits",
        ("notes-server", "project", "codex"): "waits",
        ("notes-server", "project", "gemini"): "waits",
        ("writing-skills", "project", "codex"): "loaded",  # Codex loads skills untrusted
        ("writing-skills", "project", "gemini"): "waits",
    }
    codex = rows(before)[("notes-server", "project")]["loading"]["codex"]
    assert codex["step"] == f"run codex in {project} and trust the folder when it asks"
    gemini = rows(before)[("notes-server", "project")]["loading"]["gemini"]
    assert gemini["step"] == f"run gemini in {project} and trust it: /permissions trust"
    assert "codex (mcp) waits for Codex's folder trust (run codex in" in before["text"]
    assert "gemini (mcp) waits for Gemini CLI's folder trust" in before["text"]

    said = checked(before)
    assert said[("notes-server", "project", "codex")] == ["waits"]
    assert said[("notes-server", "project", "gemini")] == ["waits"]
    assert said[("writing-skills", "project", "gemini")] == ["waits"] * len(skill_folders(before))
    # the agents' own listings agree: nothing of the project's loaded
    assert SERVER not in before["codex"]
    assert f"{SERVER}:" in before["gemini mcp"] and "Disabled" in before["gemini mcp"]
    assert skill_folders(before)
    assert not any(folder in before["gemini skills"] for folder in skill_folders(before))


def test_after_trust_everything_is_loaded_as_the_agents_own_listings_show(
    states: dict[str, Any],
) -> None:
    after = states["after"]
    assert set(loading(after).values()) == {"loaded"}
    assert "waits" not in after["text"]
    said = checked(after)
    assert said[("notes-server", "project", "codex")] == ["ok"]
    assert said[("notes-server", "project", "gemini")] == ["ok"]
    assert said[("writing-skills", "project", "gemini")] == ["ok"] * len(skill_folders(after))
    assert SERVER in after["codex"]
    assert "Connected" in after["gemini mcp"]
    assert all(folder in after["gemini skills"] for folder in skill_folders(after))


def test_nothing_false_is_reported_of_codex_hooks_or_its_config(states: dict[str, Any]) -> None:
    """Codex's hook-trust keys are not servers; the user's config.toml, which Codex edited (its
    trust entry) and plugman's export would only reorder, is not out of date."""
    for moment in ("before", "after"):
        seen = states[moment]
        hooks = [r for r in seen["check"]["agents"] if r["command"] == "codex app-server"]
        items = [i for r in seen["check"]["agents"] if r not in hooks for i in r["items"]]
        assert not [i for i in items if "hooks.json" in i["name"]], moment
        assert all(i["state"] in ("ok", "waits") for i in items), (moment, items)
        # the hooks, read back as hooks (Codex's `hooks/list`): the project's wait for trust
        said = {(i["scope"], i["state"]) for r in hooks for i in r["items"]}
        assert said == {("user", "ok"), ("project", "waits" if moment == "before" else "ok")}
        problems = [p["message"] for p in seen["doctor"]["problems"]]
        assert not [m for m in problems if "out of date" in m or "does not list" in m], problems
    waiting = [p for p in states["before"]["doctor"]["problems"] if "waits for" in p["message"]]
    assert sorted(p["where"] for p in waiting) == ["codex", "gemini"]
    assert not [p for p in states["after"]["doctor"]["problems"] if "waits for" in p["message"]]


def test_install_and_agents_add_say_what_waits_and_what_reaches_no_agent(
    states: dict[str, Any],
) -> None:
    said = states["said"]
    assert said["installed"].returncode == 0 and "folder" not in said["installed"].stderr
    warned = said["project"].stderr
    assert "Codex loads none of this project's hooks and MCP servers until you trust" in warned
    assert "Gemini CLI loads none of this project's" in warned
    assert "/permissions trust" in warned
    local = said["local"].stderr
    assert "no agent is linked in the local scope" in local
    assert "plugman agents add claude-code --scope local" in local

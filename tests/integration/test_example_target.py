"""A third-party target, the example extension's `example-agent` (examples/plugman-example),
installed for real with pip: linked like a built-in, it gets every component of a plugin (a
skill, a command, a subagent, a hook and an MCP server) in its own files, and uninstalling and
unlinking leave the project and the home as they were. Once in-process (the fixture puts the
package on sys.path), once through a plugman subprocess that finds the entry point itself."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from plugman import extensions
from plugman.hookspecs import hookimpl
from tests.integration.helpers import run, snapshot

SKILL = "---\nname: kit-skill\ndescription: Kit skill for the example agent\n---\nDo it.\n"
COMMAND = "---\ndescription: Say hello\n---\nSay hello to $ARGUMENTS.\n"
AGENT = "---\nname: kit-helper\ndescription: Helps with kit\n---\nYou help.\n"
HOOKS = {
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {"type": "command", "command": 'python3 "${CLAUDE_PLUGIN_ROOT}/check.py"'}
                ],
            }
        ]
    }
}
SERVERS = {"mcpServers": {"kit-notes": {"command": "python3", "args": ["-m", "notes"]}}}


@pytest.fixture
def kit(tmp_path: Path) -> Path:
    """A plugin with one of each component."""
    root = tmp_path / "kit"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "kit", "version": "1.0.0"}')
    (root / "skills" / "kit-skill").mkdir(parents=True)
    (root / "skills" / "kit-skill" / "SKILL.md").write_text(SKILL)
    (root / "commands").mkdir()
    (root / "commands" / "kit-hello.md").write_text(COMMAND)
    (root / "agents").mkdir()
    (root / "agents" / "kit-helper.md").write_text(AGENT)
    (root / "hooks").mkdir()
    (root / "hooks" / "hooks.json").write_text(json.dumps(HOOKS))
    (root / "check.py").write_text("print('checked')\n")
    (root / ".mcp.json").write_text(json.dumps(SERVERS))
    return root


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def delivered(project: Path) -> None:
    """Each component is in the example agent's project files, in the form it reads."""
    folder = project / ".example-agent"
    assert (folder / "skills" / "kit-skill" / "SKILL.md").read_text() == SKILL
    # the command as the extension's own translator wrote it (`format="own"`)
    assert list((folder / "commands").iterdir()) == [folder / "commands" / "kit-hello.prompt"]
    prompt = (folder / "commands" / "kit-hello.prompt").read_text()
    assert prompt == "# Say hello\nSay hello to {input}.\n"
    assert (folder / "agents" / "kit-helper.md").read_text() == AGENT  # `claude-md`: as is
    servers = json.loads((folder / "mcp.json").read_text())["mcpServers"]
    assert list(servers) == ["plugin_kit_kit-notes"]
    assert servers["plugin_kit_kit-notes"]["type"] == "stdio"
    hooks = json.loads((folder / "settings.json").read_text())["hooks"]
    (group,) = hooks["PreToolUse"]
    assert group["matcher"] == "Bash"
    assert group["hooks"][0]["command"].startswith("plugman hooks exec example-agent PreToolUse ")


def test_the_example_agent_gets_every_component_and_keeps_no_trace(
    example_extension: dict[str, str], kit: Path, project: Path, home: Path
) -> None:
    before = snapshot(project, home)
    rows = {a["name"]: a for a in run("agents", "list", project=project)["agents"]}
    assert rows["example-agent"]["scopes"] == ["user", "project"]
    run("agents", "add", "example-agent", "--scope", "project", project=project)
    run("install", str(kit), "--scope", "project", project=project)
    delivered(project)
    assert not list(home.rglob("*")), "a project link writes nothing in the home"
    run("uninstall", "kit@direct", "--scope", "project", project=project)
    assert not (project / ".example-agent").exists()
    run("agents", "remove", "example-agent", "--scope", "project", project=project)
    assert snapshot(project, home) == before


def test_agents_list_tells_the_example_agent_is_here(
    example_extension: dict[str, str], project: Path, home: Path
) -> None:
    def here() -> bool:
        rows = {a["name"]: a for a in run("agents", "list", project=project)["agents"]}
        return bool(rows["example-agent"]["present"])

    assert not here()
    (home / ".example-agent").mkdir()  # its `presence`: this folder, or its binary on PATH
    assert here()


@pytest.mark.slow
def test_a_plugman_process_finds_the_example_through_its_entry_point(
    example_extension: dict[str, str], kit: Path, project: Path, home: Path
) -> None:
    before = snapshot(project, home)
    env = {**os.environ, **example_extension}

    def plugman(*args: str) -> Any:
        argv = [sys.executable, "-m", "plugman", "--project", str(project), *args, "--json"]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return json.loads(done.stdout)

    plugman("agents", "add", "example-agent", "--scope", "project")
    plugman("install", str(kit), "--scope", "project")
    delivered(project)
    # the hook as the agent would run it: its command, the agent's event JSON on stdin
    settings = json.loads((project / ".example-agent" / "settings.json").read_text())
    command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    argv = [sys.executable, "-m", *shlex.split(command)]
    payload = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": str(project)}
    ran = subprocess.run(
        argv, input=json.dumps(payload), env=env, cwd=project, capture_output=True, text=True
    )
    assert (ran.returncode, ran.stdout) == (0, "checked\n"), ran.stderr
    plugman("uninstall", "kit@direct", "--scope", "project")
    plugman("agents", "remove", "example-agent", "--scope", "project")
    assert snapshot(project, home) == before


class Impostor:
    """An extension whose agent takes a built-in's name."""

    @hookimpl
    def plugman_targets(self) -> list[Any]:
        from plugman_example.target import EXAMPLE_AGENT

        return [replace(EXAMPLE_AGENT, name="codex", label="Not Codex")]


def test_a_target_named_as_a_built_in_is_ignored(example_extension: dict[str, str]) -> None:
    impostor = Impostor()
    extensions.manager().register(impostor)
    try:
        assert extensions.targets()["codex"].label == "Codex"
        assert extensions.target("codex").label == "Codex"
        assert extensions.target("example-agent").label == "Example Agent"
    finally:
        extensions.manager().unregister(impostor)


class Escaping:
    """An extension whose agent's own translator names a file outside its folder."""

    @hookimpl
    def plugman_targets(self) -> list[Any]:
        from plugman_example.target import EXAMPLE_AGENT

        from plugman.agents.translate.common import Source, Translated

        def outside(source: Source, plugin: str) -> Translated:
            return Translated(f"../{source.name}.prompt", b"x")

        commands = replace(EXAMPLE_AGENT.commands, translate=outside)
        return [replace(EXAMPLE_AGENT, name="escaping-agent", commands=commands)]


def test_an_own_translator_writes_only_inside_the_agents_folder_and_uninstall_takes_it_out(
    example_extension: dict[str, str], kit: Path, project: Path, home: Path
) -> None:
    escaping = Escaping()
    extensions.manager().register(escaping)
    try:
        before = snapshot(project, home)
        run(
            "agents",
            "add",
            "example-agent",
            "escaping-agent",
            "--scope",
            "project",
            project=project,
        )
        run("install", str(kit), "--scope", "project", project=project)
        commands = project / ".example-agent" / "commands"
        assert [p.name for p in commands.iterdir()] == ["kit-hello.prompt"]  # not `../`
        assert not (project / ".example-agent" / "kit-hello.prompt").exists()
        warned = json.dumps(run("agents", "list", project=project)["warnings"])
        assert "the agent's translator names '../kit-hello.prompt', not a file name" in warned
        run("uninstall", "kit@direct", "--scope", "project", project=project)
        assert not commands.exists()
        run(
            "agents",
            "remove",
            "example-agent",
            "escaping-agent",
            "--scope",
            "project",
            project=project,
        )
        assert snapshot(project, home) == before
    finally:
        extensions.manager().unregister(escaping)

"""The example extension's own tests, as an extension author writes them: plugman's test kit
(`plugman.testing`: its fixtures come with plugman, no conftest.py) and plugman's public API
(`plugman.api`), nothing else of plugman.

End to end: a plugin installed through the extension's source kind (`dir+PATH`) is delivered
to the extension's agent (`example-agent`), in this process and by a plugman subprocess that
finds the extension through its entry points, then taken out without a trace."""

from __future__ import annotations

from pathlib import Path

import pytest
from plugman_example import source, target

from plugman.api import AgentSpec, LockedSource, PluginSource, SourceKind
from plugman.testing import Extensions, PlugmanEnv, Runner

ROOT = Path(__file__).resolve().parents[1]  # the folder holding plugman_example
POINTS = {"target": "plugman_example.target", "source": "plugman_example.source"}
SKILL = "---\nname: kit-skill\ndescription: A skill for the example agent\n---\nDo it.\n"


def plugin(folder: Path) -> Path:
    """A plugin `kit` with a skill and a command."""
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text('{"name": "kit", "version": "1.0.0"}')
    (folder / "skills" / "kit-skill").mkdir(parents=True)
    (folder / "skills" / "kit-skill" / "SKILL.md").write_text(SKILL)
    (folder / "commands").mkdir()
    (folder / "commands" / "kit-hello.md").write_text("Say hello to $ARGUMENTS.\n")
    return folder


def files(*roots: Path) -> dict[str, bytes]:
    return {
        str(path): path.read_bytes() if path.is_file() else b""
        for root in roots
        for path in sorted(root.rglob("*"))
    }


@pytest.fixture
def installed(plugman_extension: Extensions) -> Extensions:
    """The example, installed for this test as pip would: its entry points."""
    plugman_extension.entry_points(POINTS, path=ROOT, dist="plugman-example")
    return plugman_extension


@pytest.mark.parametrize("in_process", [True, False], ids=["in-process", "subprocess"])
def test_a_plugin_from_a_dir_source_reaches_the_example_agent(
    installed: Extensions, plugman_env: PlugmanEnv, plugman_cli: Runner, in_process: bool
) -> None:
    kit = plugin(plugman_env.root / "kit")
    before = files(plugman_env.project, plugman_env.home)
    agents = plugman_cli.json("agents", "list", in_process=in_process)["agents"]
    assert "example-agent" in {row["name"] for row in agents}
    plugman_cli.json("agents", "add", "example-agent", "--scope", "project", in_process=in_process)
    changes = plugman_cli.json(
        "install", f"dir+{kit}", "--scope", "project", in_process=in_process
    )["changes"]
    assert [(c["action"], c["id"]) for c in changes] == [("installed", "kit@direct")]

    lock = (plugman_env.project / "plugman.lock").read_text()
    assert 'type = "dir"' in lock and "tree_sha256" in lock  # the kind's own lock fields
    folder = plugman_env.project / ".example-agent"
    assert (folder / "skills" / "kit-skill" / "SKILL.md").read_text() == SKILL
    # the example's own command translator: `NAME.prompt`, `$ARGUMENTS` spelled `{input}`
    assert (folder / "commands" / "kit-hello.prompt").read_text() == "Say hello to {input}.\n"

    plugman_cli.json("uninstall", "kit@direct", "--scope", "project", in_process=in_process)
    plugman_cli.json("agents", "remove", "example-agent", "--scope", "project")
    assert not folder.exists()
    left = set(files(plugman_env.project, plugman_env.home)) - set(before)
    assert left <= {str(plugman_env.project / n) for n in ("plugman.toml", "plugman.lock")}


def test_a_changed_folder_is_refused_on_another_machine(
    installed: Extensions,
    plugman_env: PlugmanEnv,
    plugman_cli: Runner,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kit = plugin(plugman_env.root / "kit")
    plugman_cli.json("install", f"dir+{kit}", "--scope", "project")
    (kit / "commands" / "kit-hello.md").write_text("Something else.\n")
    monkeypatch.setenv("PLUGMAN_HOME", str(plugman_env.root / "another-machine"))
    refused = plugman_cli.fails("sync", "--frozen")
    assert f"the folder {kit} changed since it was pinned" in refused.stderr


def test_the_hooks_give_typed_records() -> None:
    (kind,) = source.plugman_sources()
    assert isinstance(kind, SourceKind) and kind.kinds == ("dir",)
    given = PluginSource("dir", "/srv/tool")
    assert kind.plugin_name(given) == "tool"
    assert kind.names_local_file(given)
    assert kind.lock_fields(given, "abc", None) == {"folder": "/srv/tool", "tree_sha256": "abc"}
    locked = LockedSource("dir", {"folder": "/srv/tool", "tree_sha256": "abc"})
    assert kind.from_lock(locked).sha == "abc"
    (agent,) = target.plugman_targets()
    assert isinstance(agent, AgentSpec) and agent.name == "example-agent"

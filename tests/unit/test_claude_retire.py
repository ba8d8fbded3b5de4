"""Issue 34 point 3 without the real agent: which of Claude Code's own installs `import claude`
retires or keeps (`claude_import.plan`), the edits that retire them (`claude_retire.apply`, as
`claude plugin uninstall --keep-data` / `disable --scope local` leave Claude's files; shapes as
Claude Code 2.1.328 writes them), the byte-exact undo and the entry-by-entry one when Claude
wrote the file since, the one place that reads Claude's installs (`claude_own`) and doctor's
hint naming the right copy."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from plugman.agents import claude_own
from plugman.agents.readback import Item, Report
from plugman.agents.targets.asks import FAILED
from plugman.core.paths import Paths
from plugman.core.session import session
from plugman.doctor import agents as doctor_agents
from plugman.plugins.importing import claude as claude_import
from plugman.plugins.importing import retire as claude_retire
from plugman.plugins.importing.claude import PluginStep

# Claude Code's own files as 2.1.328 writes them (JSON.stringify(..., null, 2), no newline)
RECORDS = {
    "version": 2,
    "plugins": {
        "alpha@tools": [{"scope": "user", "installPath": "/c/alpha", "version": "1.0.0"}],
        "gamma@team": [
            {"scope": "project", "projectPath": "PROJECT", "installPath": "/c/g", "version": "1"},
            {"scope": "local", "projectPath": "/elsewhere", "installPath": "/c/g", "version": "1"},
        ],
        "delta@team": [
            {"scope": "local", "projectPath": "PROJECT", "installPath": "/c/d", "version": "1"}
        ],
    },
}
USER = {
    "env": {"SOME_TOKEN": "never-copied"},
    "enabledPlugins": {"alpha@tools": True, "other@tools": False},
    "pluginConfigs": {"alpha@tools": {"options": {"level": "high"}}},
}


def dump(data: Any) -> bytes:
    return json.dumps(data, indent=2).encode()


class World:
    def __init__(self, root: Path) -> None:
        self.project = root / "project"
        self.config = root / "home" / ".claude"
        (self.config / "plugins").mkdir(parents=True)
        (self.project / ".claude").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        self.project = self.project.resolve()
        text = dump(RECORDS).decode().replace("PROJECT", str(self.project))
        self.record.write_text(text)
        self.user.write_bytes(dump(USER))
        self.shared.write_bytes(dump({"enabledPlugins": {"gamma@team": True}}))
        self.local.write_bytes(dump({"enabledPlugins": {"delta@team": True}}))
        self.paths = Paths.from_env({"PLUGMAN_HOME": str(root / "plugman")}, project=self.project)
        self.env = {"HOME": str(root / "home"), "PLUGMAN_HOME": str(root / "plugman")}

    @property
    def record(self) -> Path:
        return self.config / "plugins" / "installed_plugins.json"

    @property
    def user(self) -> Path:
        return self.config / "settings.json"

    @property
    def shared(self) -> Path:
        return self.project / ".claude" / "settings.json"

    @property
    def local(self) -> Path:
        return self.project / ".claude" / "settings.local.json"

    def files(self) -> dict[Path, bytes]:
        return {f: f.read_bytes() for f in (self.record, self.user, self.shared, self.local)}

    def link(self, *scopes: str) -> None:
        (self.paths.project_dir / "plugman.toml").write_text(
            '[agents]\n"claude-code" = true\n' if "project" in scopes else ""
        )
        self.paths.user_config.parent.mkdir(parents=True, exist_ok=True)
        self.paths.user_config.write_text('[agents]\n"claude-code" = true\n')

    def own(self) -> dict[tuple[str, str], claude_own.OwnInstall]:
        return {(i.id, i.scope): i for i in claude_own.installs(self.config, self.project)}

    def retire(self) -> list[claude_retire.Retire]:
        own = self.own()
        wanted = [
            ("alpha@tools", "user", "uninstall", self.user),
            ("gamma@team", "project", "disable", self.local),
            ("delta@team", "local", "uninstall", self.local),
        ]
        return [
            claude_retire.Retire(i, scope, how, file, own[(i, scope)].record)
            for i, scope, how, file in wanted
        ]


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def test_claude_own_installs_are_the_user_ones_and_this_projects_with_their_state(
    world: World,
) -> None:
    found = world.own()
    assert sorted(found) == [
        ("alpha@tools", "user"),
        ("delta@team", "local"),
        ("gamma@team", "project"),
    ]  # the other project's local install of gamma is not here
    assert all(i.enabled for i in found.values())
    assert found[("delta@team", "local")].uninstall() == (
        "claude plugin uninstall delta@team --scope local"
    )
    listed = list(found.values())
    # a user delivery gives way only to a user install; a project one to one turned on here
    assert claude_own.taking(listed, "gamma", "user") is None
    assert claude_own.taking(listed, "gamma", "project") == found[("gamma@team", "project")]
    world.local.write_bytes(dump({"enabledPlugins": {"gamma@team": False, "delta@team": True}}))
    assert (
        claude_own.taking(claude_own.installs(world.config, world.project), "gamma", "local")
        is None
    )


def test_retiring_edits_only_claudes_entries_and_the_undo_is_byte_exact(world: World) -> None:
    before = world.files()
    with session(world.paths) as work:
        retired = claude_retire.apply(work.tx, world.config, world.retire())
    records = json.loads(world.record.read_bytes())["plugins"]
    assert "alpha@tools" not in records and "delta@team" not in records
    assert [r["scope"] for r in records["gamma@team"]] == ["project", "local"]  # kept: disabled
    user = json.loads(world.user.read_bytes())
    assert user["enabledPlugins"] == {"other@tools": False}
    assert user["pluginConfigs"] == USER["pluginConfigs"]  # --keep-data keeps its options
    assert json.loads(world.local.read_bytes()) == {"enabledPlugins": {"gamma@team": False}}
    assert world.shared.read_bytes() == before[world.shared]  # the team's file is not touched
    assert "never-copied" not in json.dumps(retired)  # only Claude's entries are kept

    with session(world.paths) as work:
        said = claude_retire.restore(work.tx, world.config, retired)
    assert len(said) == 3
    assert world.files() == before


def test_undo_puts_each_entry_back_when_claude_wrote_the_file_since(world: World) -> None:
    with session(world.paths) as work:
        retired = claude_retire.apply(work.tx, world.config, world.retire())
    records = json.loads(world.record.read_bytes())
    records["plugins"]["new@tools"] = [{"scope": "user", "installPath": "/c/n"}]
    world.record.write_bytes(dump(records))  # Claude installed another one meanwhile
    user = world.user.read_text().replace('"other@tools": false', '"other@tools": true')
    world.user.write_text(user)
    with session(world.paths) as work:
        claude_retire.restore(work.tx, world.config, retired)
    found = world.own()
    assert ("alpha@tools", "user") in found and ("delta@team", "local") in found
    assert "new@tools" in json.loads(world.record.read_bytes())["plugins"]
    enabled = json.loads(world.user.read_bytes())["enabledPlugins"]
    assert enabled == {"other@tools": True, "alpha@tools": True}


def steps() -> list[PluginStep]:
    return [
        PluginStep("alpha@tools", "user", True, "install"),
        PluginStep("gamma@team", "project", True, "installed"),
        PluginStep("delta@team", "local", True, "skip", "its marketplace cannot be added"),
    ]


def test_only_installs_in_a_scope_claude_code_is_linked_at_are_retired(world: World) -> None:
    world.link("user")
    found = claude_import._retire(world.paths, world.config, steps(), False, False)
    assert [(r.id, r.how) for r in found] == [("alpha@tools", "uninstall")]
    world.link("user", "project")
    found = claude_import._retire(world.paths, world.config, steps(), False, False)
    assert [(r.id, r.how) for r in found] == [
        ("alpha@tools", "uninstall"),
        ("gamma@team", "disable"),
    ]  # a skipped plugin keeps Claude's install
    kept = claude_import._retire(world.paths, world.config, steps(), True, False)
    assert {r.how for r in kept} == {"keep"}
    theirs = claude_import._retire(world.paths, world.config, steps(), False, True)
    assert [(r.id, r.how, bool(r.reason)) for r in theirs] == [
        ("alpha@tools", "uninstall", False),
        ("gamma@team", "keep", True),
    ]  # a settings.local.json that is not the user's is not edited


def test_doctor_names_claudes_own_install_and_both_ways_to_one_copy(world: World) -> None:
    detail = (
        'Not loaded — the name "alpha" is already taken by an installed plugin (alpha@tools), '
        "which takes precedence."
    )
    item = Item("alpha@tools", "alpha@skills-dir", FAILED, detail, "user")
    report = Report("claude-code", "claude plugin list --json", True, "", [item])
    own = list(world.own().values())
    [problem] = doctor_agents.said([report], own)
    assert "claude plugin uninstall alpha@tools --scope user" in problem.hint
    assert "plugman uninstall alpha@tools --scope user" in problem.hint
    assert "to keep Claude's" in problem.hint


def test_the_import_record_is_read_typed_and_written_back_as_it_was(world: World) -> None:
    with session(world.paths) as work:
        retired = claude_retire.apply(work.tx, world.config, world.retire())
    body = claude_import.ImportRecord(
        (retired,), ("tools",), (claude_import.ImportedPlugin("alpha@tools", "user"),)
    )
    text = json.dumps(body.to_json(), indent=2) + "\n"
    assert claude_import.ImportRecord.from_json(json.loads(text)) == body
    assert list(json.loads(text)["retired"][0]["entries"][0]) == [
        "id", "scope", "how", "settings", "enabled", "had", "record"
    ]  # fmt: skip


@pytest.mark.parametrize(
    "body",
    [
        {"retired": [{"claude_dir": "/c", "entries": "no", "files": []}]},
        {"retired": [{"claude_dir": "/c", "entries": [], "files": [{"path": "/f", "at": "1"}]}]},
        {"plugins": [{"id": "a@b", "scope": "everywhere"}]},
        {"marketplaces": [3]},
        [],
    ],
)
def test_a_malformed_import_record_is_an_error_naming_the_file(world: World, body: Any) -> None:
    """Invariant (claude_import._recorded): a state file is hostile input; a value of the wrong
    shape is a PlugmanError naming the file, never a traceback."""
    from plugman.core.errors import PlugmanError

    claude_import.record_path(world.paths).parent.mkdir(parents=True, exist_ok=True)
    claude_import.record_path(world.paths).write_bytes(dump(body))
    with pytest.raises(PlugmanError) as caught:
        claude_import.undo_commands(world.paths)
    assert caught.value.where == str(claude_import.record_path(world.paths))

"""The states that gate an agent's loading (`plugman.agents.gating`), read from each agent's own
files in their real formats, with the agent's own path rules: Claude Code's walk up to the git
root, Codex's real path then git root, Gemini CLI's longest rule with TRUST_PARENT and
DO_NOT_TRUST, its switch and environment overrides; Claude's own install of a name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plugman.agents.delivered import entry_kind
from plugman.agents.gating import LOADED, SHADOWED, WAITS, Gating, gemini_rule
from plugman.agents.targets.asks import COPILOT_SKILLS, GEMINI_SKILLS
from plugman.doctor import same_content


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "work" / "repo" / "app"
    home.mkdir()
    project.mkdir(parents=True)
    (tmp_path / "work" / "repo" / ".git").mkdir()
    return home, project


def gating(home: Path, project: Path, **env: str) -> Gating:
    return Gating(project, home, {"HOME": str(home), **env})


def test_claude_trust_is_the_folder_or_one_above_it_up_to_the_git_root(
    place: tuple[Path, Path],
) -> None:
    home, project = place
    state = home / ".claude.json"
    assert not gating(home, project).claude  # no file: no trust given
    above = project.parent.parent  # above the git root
    for folder, trusted in ((project, True), (project.parent, True), (above, False)):
        entry = {"allowedTools": [], "hasTrustDialogAccepted": True}
        state.write_text(json.dumps({"numStartups": 3, "projects": {str(folder): entry}}))
        assert gating(home, project).claude is trusted, folder
    state.write_text(json.dumps({"projects": {str(project): {"hasTrustDialogAccepted": False}}}))
    assert not gating(home, project).claude
    config = home / "cfg"
    config.mkdir()
    (config / ".claude.json").write_text(
        json.dumps({"projects": {str(project): {"hasTrustDialogAccepted": True}}})
    )
    assert gating(home, project, CLAUDE_CONFIG_DIR=str(config)).claude


def test_codex_trust_is_the_real_folder_else_its_git_root(
    place: tuple[Path, Path], tmp_path: Path
) -> None:
    home, project = place
    (home / ".codex").mkdir()
    config = home / ".codex" / "config.toml"

    def trusts(text: str, folder: Path = project, **env: str) -> bool:
        config.write_text('model = "o4"\n\n[mcp_servers.x]\ncommand = "x"\n\n' + text)
        return gating(home, folder, **env).codex

    assert not trusts("")
    assert trusts(f'[projects."{project}"]\ntrust_level = "trusted"\n')
    assert not trusts(f'[projects."{project}"]\ntrust_level = "untrusted"\n')
    root = project.parent
    assert trusts(f'[projects."{root}"]\ntrust_level = "trusted"\n')  # the git root
    assert not trusts(f'[projects."{root.parent}"]\ntrust_level = "trusted"\n')  # above it
    both = f'[projects."{root}"]\ntrust_level = "trusted"\n[projects."{project}"]\n'
    assert not trusts(both + 'trust_level = "untrusted"\n')  # the folder's own entry decides
    link = tmp_path / "link"
    link.symlink_to(project)
    assert trusts(f'[projects."{project}"]\ntrust_level = "trusted"\n', link)  # the real path
    assert not trusts(f'[projects."{link}"]\ntrust_level = "trusted"\n', link)
    elsewhere = tmp_path / "codex-home"
    elsewhere.mkdir()
    (elsewhere / "config.toml").write_text(f'[projects."{project}"]\ntrust_level = "trusted"\n')
    assert trusts("", CODEX_HOME=str(elsewhere))
    config.write_text("not = [toml")
    assert not gating(home, project).codex  # unreadable: no trust given


def test_gemini_trust_follows_its_rules_switch_and_environment(place: tuple[Path, Path]) -> None:
    home, project = place
    (home / ".gemini").mkdir()
    rules = home / ".gemini" / "trustedFolders.json"

    def trusts(given: dict[str, str], **env: str) -> bool:
        rules.write_text("// Gemini CLI's file, comments allowed\n" + json.dumps(given))
        return gating(home, project, **env).gemini

    assert not trusts({})  # folder trust is on by default: no rule is untrusted
    assert trusts({str(project): "TRUST_FOLDER"})
    assert trusts({str(project.parent.parent): "TRUST_FOLDER"})  # a folder above
    assert trusts({str(project / "x"): "TRUST_PARENT"})  # the rule's parent
    assert trusts({str(project): "TRUST_PARENT"})  # its parent holds the project
    assert not trusts({str(project.parent / "other" / "x"): "TRUST_PARENT"})  # a sibling
    longest = {str(project.parent): "TRUST_FOLDER", str(project): "DO_NOT_TRUST"}
    assert not trusts(longest)
    assert trusts({str(project.parent): "DO_NOT_TRUST", str(project): "TRUST_FOLDER"})
    assert trusts({}, GEMINI_CLI_TRUST_WORKSPACE="true")
    assert not trusts({str(project): "TRUST_FOLDER"}, GEMINI_CLI_TRUST_WORKSPACE="false")
    assert not trusts({str(project): "TRUST_FOLDER"}, GEMINI_RESTRICTED_MODE="true")
    other = home / "rules.json"
    other.write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    assert trusts({}, GEMINI_CLI_TRUSTED_FOLDERS_PATH=str(other))
    settings = home / ".gemini" / "settings.json"
    settings.write_text(json.dumps({"security": {"folderTrust": {"enabled": False}}}))
    assert trusts({})  # folder trust switched off: every folder is trusted
    system = home / "system.json"
    system.write_text(json.dumps({"security": {"folderTrust": {"enabled": True}}}))
    assert not trusts({}, GEMINI_CLI_SYSTEM_SETTINGS_PATH=str(system))  # system settings win
    assert gemini_rule({"/a": "NOT_A_LEVEL"}, Path("/a")) is None


def test_copilot_trust_is_a_trusted_folder_holding_the_real_path(
    place: tuple[Path, Path], tmp_path: Path
) -> None:
    home, project = place
    (home / ".copilot").mkdir()
    config = home / ".copilot" / "config.json"
    link = tmp_path / "link"
    link.symlink_to(project.parent)
    for given, trusted in (
        ([], False),
        ([str(project)], True),
        ([str(project.parent)], True),
        ([str(link)], True),  # Copilot resolves the folder it is given
        ([str(project / "sub"), str(tmp_path / "other")], False),
    ):
        config.write_text(json.dumps({"model": "x", "trusted_folders": given}))
        assert gating(home, project).copilot is trusted, given
    assert gating(home, project).loading("copilot-cli", "project", ["skills"]).state == LOADED


def test_loading_holds_back_only_what_each_agent_gates(place: tuple[Path, Path]) -> None:
    home, project = place
    found = gating(home, project)
    assert found.loading("codex", "project", ["skills", "commands"]).state == LOADED
    waits = found.loading("codex", "project", ["skills", "hooks"])
    assert (waits.state, waits.detail) == (WAITS, "waits for Codex's folder trust")
    assert waits.step == f"run codex in {project} and trust the folder when it asks"
    assert found.loading("codex", "user", ["mcp", "hooks"]).state == LOADED
    assert found.loading("gemini", "user", ["skills"]).state == LOADED
    assert found.loading("gemini", "user", ["mcp"]).step.endswith("/permissions trust")
    assert found.loading("claude-code", "local", ["plugin"]).state == WAITS
    assert found.loading("cursor", "project", ["mcp"]).state == LOADED  # no trust plugman reads
    note = found.note("codex", "project", ["hooks", "mcp", "skills"])
    assert note is not None and "Codex loads none of this project's hooks and MCP servers" in note
    assert found.note("codex", "project", ["skills"]) is None


def test_a_name_claude_installed_itself_shadows_plugmans(place: tuple[Path, Path]) -> None:
    home, project = place
    record = home / ".claude" / "plugins" / "installed_plugins.json"
    record.parent.mkdir(parents=True)
    entry = {"installPath": "/x", "version": "1.0.0", "installedAt": "2026-01-01T00:00:00Z"}
    record.write_text(
        json.dumps(
            {
                "version": 2,
                "plugins": {
                    "kit@their-market": [{**entry, "scope": "user"}],
                    "tool@m": [{**entry, "scope": "project", "projectPath": str(project)}],
                    "other@m": [{**entry, "scope": "project", "projectPath": "/elsewhere"}],
                    "mine@plugman-user": [{**entry, "scope": "user"}],
                },
            }
        )
    )
    found = gating(home, project)
    shadow = found.shadowed("kit", "user")
    assert shadow is not None and shadow.state == SHADOWED
    assert shadow.detail == "shadowed by kit@their-market (installed by Claude Code, user scope)"
    assert "claude plugin uninstall kit@their-market --scope user" in shadow.step
    assert found.shadowed("kit", "project") is None  # beside a disabled one, plugman's loads
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"enabledPlugins": {"tool@m": True}})
    )
    assert gating(home, project).shadowed("tool", "project") is not None
    assert found.shadowed("other", "user") is None  # another project's
    assert found.shadowed("mine", "user") is None  # plugman's own marketplace


def test_a_plugin_turned_off_in_claudes_settings_is_said(place: tuple[Path, Path]) -> None:
    home, project = place
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"enabledPlugins": {"kit@skills-dir": False, "on@skills-dir": True}})
    )
    off = gating(home, project).turned_off("kit@skills-dir")
    assert off is not None and off.state == "disabled"
    assert off.step == "turn it on: claude plugin enable kit@skills-dir"
    assert gating(home, project).turned_off("on@skills-dir") is None
    (project / ".claude").mkdir()
    local = project / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"enabledPlugins": {"kit@skills-dir": True}}))
    assert gating(home, project).turned_off("kit@skills-dir") is None  # local wins


def test_gemini_skills_list_is_read_by_folder() -> None:
    out = (
        "Discovered Agent Skills:\n\nask [Enabled]\n  Description: x\n"
        "  Location:    /tmp/p/.agents/skills/ask/SKILL.md\n\n"
        "off [Disabled]\n  Description: y\n  Location:    /tmp/u/.gemini/skills/off/SKILL.md\n"
    )
    assert GEMINI_SKILLS.read(out) == {
        "/tmp/p/.agents/skills/ask": ("ok", "ask [Enabled]"),
        "/tmp/u/.gemini/skills/off": ("disabled", "off [Disabled]"),
    }
    assert GEMINI_SKILLS.read("No skills discovered.\n") == {}
    with pytest.raises(ValueError, match="no skill list"):
        GEMINI_SKILLS.read("Error: something else")


def test_copilot_skill_list_is_read_by_folder() -> None:
    out = json.dumps(
        [
            {
                "name": "ps",
                "source": "project",
                "path": "/tmp/p/.agents/skills/ps",
                "enabled": True,
            },
            {"name": "off", "source": "personal", "path": "/tmp/u/off", "enabled": False},
        ]
    )
    assert COPILOT_SKILLS.read(out) == {
        "/tmp/p/.agents/skills/ps": ("ok", "ps: enabled"),
        "/tmp/u/off": ("disabled", "off: disabled"),
    }
    with pytest.raises(ValueError, match="no JSON list of skills"):
        COPILOT_SKILLS.read("error")


def test_codex_hook_trust_keys_are_hooks_not_servers() -> None:
    assert entry_kind("/h/.codex/hooks.json:pre_tool_use:0:1") == "hooks"
    assert entry_kind("PreToolUse:0123456789ab") == "hooks"
    assert entry_kind("plugin_notes-server_notes") == "mcp"


def test_an_export_that_only_reorders_a_file_is_not_a_change(tmp_path: Path) -> None:
    before = '[mcp_servers.a]\ncommand = "x"\n\n[hooks.state."f:stop:0:0"]\ntrusted_hash = "h"\n'
    after = '[hooks.state."f:stop:0:0"]\ntrusted_hash = "h"\n[mcp_servers.a]\ncommand = "x"\n'
    toml = tmp_path / "config.toml"
    assert same_content(toml, before, after)
    assert not same_content(toml, before, after.replace('"h"', '"g"'))
    assert not same_content(toml, before, None)
    assert same_content(tmp_path / "s.json", '{"a": 1, "b": [1]}', '{\n  "b": [1],\n  "a": 1\n}')

"""`plugman export` and `plugman doctor` against real files in a temporary home and project."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plugman import extensions
from plugman.agents.targets import Place
from plugman.cli import invoke
from plugman.core.paths import Paths
from plugman.manifest import edit
from tests.conftest import SAMPLES, SCHEMAS
from tests.integration.helpers import run, snapshot

# A user's own file for each target, with comments where the format has them.
OWN: dict[str, str] = {
    "json": (
        '{\n  // mine\n  "theme": "dark",\n  "CONTAINER": {\n'
        '    "mine": {"command": "x"} // keep\n  }\n}\n'
    ),
    "strict-json": (
        '{\n  "numStartups": 3,\n  "CONTAINER": {\n    "mine": {\n      "command": "x"\n'
        "    }\n  }\n}"
    ),
    "toml": (
        '# my config\nmodel = "o3"\n\n[CONTAINER.mine]\ncommand = "x"  # keep\n\n'
        '[profiles.fast]\nmodel = "o4-mini"\n'
    ),
    "yaml": "# mine\nGOOSE_PROVIDER: openai\nCONTAINER:\n  mine:  # keep\n    cmd: x\nother: 1\n",
    "yaml-list": "# mine\nCONTAINER:\n- name: mine\n  command: x\nmodels: []\n",
}
# Each built-in target's own file, shaped from its record in the registry: the key its servers
# sit under, and its format. Claude Code's files are strict JSON (no comments).
SPECS_BY_NAME = extensions.targets(entry_points=False)  # the built-in agents
STRICT_JSON = {"claude-code"}


def container(name: str) -> str:
    key = SPECS_BY_NAME[name].mcp.key
    assert len(key) == 1, f"{name}: OWN has no shape for servers nested under {key}"
    return key[0]


def kind(name: str) -> str:
    spec = SPECS_BY_NAME[name]
    if name in STRICT_JSON:
        return "strict-json"
    return f"{spec.fmt}-list" if spec.mcp.listed else spec.fmt


@pytest.fixture
def home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TOOL_MODE", "fast")
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def cli(project: Path, *args: str, code: int = 0) -> Any:
    result = invoke(["--project", str(project), *args])
    assert result.exit_code == code, (args, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result


# The same two servers as project-scope entries (approved: project entries wait for it).
PROJECT_SERVERS = """[mcp_servers.tool]
command = "run-tool"
args = ["--fast"]
env = {MODE = "${TOOL_MODE}", API_TOKEN = "${API_TOKEN}"}

[mcp_servers.docs]
type = "http"
url = "https://docs.example.com/mcp"
"""


def add_servers(project: Path, scope: str = "user") -> None:
    """Two servers of `scope`: `tool` (stdio, with references) and `docs` (http)."""
    if scope == "project":
        (project / "plugman.toml").write_text(PROJECT_SERVERS)
        cli(project, "trust", "approve", "--all")
        return
    cli(
        project,
        "mcp",
        "add",
        "tool",
        "-s",
        scope,
        "-e",
        "MODE=${TOOL_MODE}",
        "-e",
        "API_TOKEN=${API_TOKEN}",
        "--",
        "run-tool",
        "--fast",
    )
    cli(project, "mcp", "add", "docs", "https://docs.example.com/mcp", "-s", scope)


def file_of(name: str, scope: str, home: Path, project: Path) -> Path:
    place = Place(scope, home, project, {"HOME": str(home)})
    return extensions.target(name).locate(place)["mcp"].path


def scopes_of(name: str) -> list[str]:
    return [s for s in extensions.target(name).scopes_of() if s != "local"]


CASES = [
    (name, scope)
    for name in sorted(extensions.targets(entry_points=False))
    for scope in scopes_of(name)
]


@pytest.mark.parametrize(("name", "scope"), CASES)
def test_write_then_remove_leaves_the_users_file_byte_identical(
    name: str, scope: str, home: Path, project: Path
) -> None:
    add_servers(project, scope)
    target = file_of(name, scope, home, project)
    target.parent.mkdir(parents=True, exist_ok=True)
    own = OWN[kind(name)].replace("CONTAINER", container(name))
    target.write_text(own)
    before = snapshot(home, project)
    cli(project, "export", "--target", name, "--scope", scope, "--write")
    written = target.read_text()
    data = edit.module(extensions.target(name).fmt).load(written, str(target))
    servers = data[container(name)]
    names = [s["name"] for s in servers] if isinstance(servers, list) else list(servers)
    assert names[0] == "mine" and "tool" in names, written
    assert own.splitlines()[0] in written  # the user's first line (a comment) is still there
    again = cli(project, "export", "--target", name, "--scope", scope, "--write")
    assert target.read_text() == written and "updated" not in again.stdout  # idempotent
    cli(project, "export", "--target", name, "--scope", scope, "--remove")
    assert snapshot(home, project) == before


@pytest.mark.parametrize(("name", "scope"), CASES)
def test_a_file_plugman_created_goes_away_with_its_folders(
    name: str, scope: str, home: Path, project: Path
) -> None:
    add_servers(project, scope)
    before = snapshot(home, project)
    cli(project, "export", "--target", name, "--scope", scope, "--write")
    assert file_of(name, scope, home, project).exists()
    cli(project, "export", "--target", name, "--scope", scope, "--remove")
    assert snapshot(home, project) == before


def test_references_stay_references_and_secrets_stay_out(home: Path, project: Path) -> None:
    add_servers(project)
    cli(project, "export", "--target", "claude-code", "--write")
    tool = json.loads((home / ".claude.json").read_text())["mcpServers"]["tool"]
    assert tool["env"] == {"MODE": "${TOOL_MODE}", "API_TOKEN": "${API_TOKEN}"}
    result = cli(project, "export", "--target", "zed", "--write")
    zed = json.loads((home / ".config/zed/settings.json").read_text())["context_servers"]["tool"]
    assert zed["env"] == {"MODE": "fast"}  # Zed expands nothing: the plain value, no secret
    assert "tool: env API_TOKEN needs ${API_TOKEN}, which Zed cannot expand" in result.stderr


def test_dry_run_shows_a_diff_and_changes_nothing(home: Path, project: Path) -> None:
    add_servers(project)
    before = snapshot(home, project)
    result = cli(project, "export", "--target", "cursor", "--dry-run")
    assert "+++ " + str(home / ".cursor/mcp.json") in result.stdout
    assert '+    "tool": {' in result.stdout
    assert snapshot(home, project) == before
    assert not (Paths.from_env().state_dir / "exports.json").exists()


def test_flags_say_what_to_do(home: Path, project: Path) -> None:
    assert "say --write or --remove" in cli(project, "export", "--target", "cursor", code=2).stderr
    refused = cli(project, "export", "--target", "zed", "--scope", "project", "--write", code=2)
    assert "zed has no project-scope config file" in refused.stderr
    assert "hint: use --scope user" in refused.stderr


def test_a_broken_agent_file_is_refused_with_its_location_and_kept(
    home: Path, project: Path
) -> None:
    add_servers(project)
    broken = home / ".gemini" / "settings.json"
    broken.parent.mkdir()
    broken.write_text('{\n  "theme": "dark",\n  "mcpServers": {\n}\n')
    before = snapshot(home, project)
    result = cli(project, "export", "--target", "gemini", "--write", code=1)
    assert f"{broken}:5:1: expected ',', found 'end of file'" in result.stderr
    assert "hint: fix the file; plugman left it as it is" in result.stderr
    assert snapshot(home, project) == before


def test_an_entry_of_the_users_with_the_same_name_is_left_alone(home: Path, project: Path) -> None:
    add_servers(project)
    mine = home / ".cursor" / "mcp.json"
    mine.parent.mkdir()
    mine.write_text('{"mcpServers": {"tool": {"command": "my-own-tool"}}}\n')
    result = cli(project, "export", "--target", "cursor", "--write")
    assert "'tool' is already there and not plugman's; left as it is" in result.stderr
    servers = json.loads(mine.read_text())["mcpServers"]
    assert servers["tool"] == {"command": "my-own-tool"} and "docs" in servers
    cli(project, "export", "--target", "cursor", "--remove")
    assert mine.read_text() == '{"mcpServers": {"tool": {"command": "my-own-tool"}}}\n'


def test_a_symlinked_config_is_edited_through_its_link(home: Path, project: Path) -> None:
    add_servers(project)
    dotfiles = home / "dotfiles" / "cursor.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"mcpServers": {}}\n')
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").symlink_to(dotfiles)
    cli(project, "export", "--target", "cursor", "--write")
    assert (home / ".cursor" / "mcp.json").is_symlink()
    assert "tool" in json.loads(dotfiles.read_text())["mcpServers"]
    cli(project, "export", "--target", "cursor", "--remove")
    assert dotfiles.read_text() == '{"mcpServers": {}}\n'


def install_samples(project: Path, *names: str) -> None:
    run("marketplace", "add", str(SAMPLES), project=project)
    run("install", *names, project=project)


def test_claude_hooks_go_to_settings_and_validate_against_claudes_schema(
    home: Path, project: Path
) -> None:
    import jsonschema

    install_samples(project, "guardrails")
    cli(project, "export", "--target", "claude-code", "--write")
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert {"PreToolUse", "PostToolUse"} <= set(settings["hooks"])
    schema = json.loads((SCHEMAS / "claude-code-settings.json").read_text())
    jsonschema.validate(settings, schema)


def test_uninstalling_a_plugin_takes_out_exactly_its_entries(home: Path, project: Path) -> None:
    add_servers(project)
    before = snapshot(home)
    install_samples(project, "notes-server", "guardrails")
    cli(project, "export", "--target", "claude-code", "--write")
    state = home / ".claude.json"
    assert set(json.loads(state.read_text())["mcpServers"]) == {
        "tool",
        "docs",
        "plugin_notes-server_notes",
    }
    run("uninstall", "notes-server", project=project)
    assert set(json.loads(state.read_text())["mcpServers"]) == {"tool", "docs"}
    assert (home / ".claude" / "settings.json").exists()  # guardrails' hooks stay
    run("uninstall", "guardrails", project=project)
    assert not (home / ".claude").exists()
    cli(project, "export", "--target", "claude-code", "--remove")
    assert snapshot(home) == before


def test_exported_project_servers_are_not_read_back_as_project_servers(
    home: Path, project: Path
) -> None:
    run("marketplace", "add", str(SAMPLES), project=project)
    run("install", "notes-server", "--scope", "project", project=project)
    cli(project, "export", "--target", "claude-code", "--scope", "project", "--write")
    name = "plugin_notes-server_notes"
    assert name in json.loads((project / ".mcp.json").read_text())["mcpServers"]
    servers = run("config", "resolve", project=project)["mcpServers"]
    assert {s["origin"]["scope"] for s in servers.values()} == {"plugin"}
    assert run("trust", "list", project=project)["entries"] == []
    doc = json.loads((project / ".mcp.json").read_text())
    doc["mcpServers"][name]["args"] = ["--edited-by-hand"]
    (project / ".mcp.json").write_text(json.dumps(doc))
    rows = run("trust", "list", project=project)["entries"]
    assert [(r["name"], r["state"]) for r in rows] == [(name, "pending")]  # now the user's


def test_doctor_finds_problems_and_says_what_to_do(home: Path, project: Path) -> None:
    add_servers(project)
    assert cli(project, "doctor").stdout.endswith("\nno problems found\n")
    cli(project, "export", "--target", "cursor", "--write")
    assert cli(project, "doctor").stdout.endswith("\nno problems found\n")
    cli(project, "mcp", "add", "more", "https://more.example.com/mcp", "-s", "user")
    stale = cli(project, "doctor").stdout
    assert "warning:" in stale and "out of date with the resolved config" in stale
    assert "hint: see what changed: plugman export --target cursor --scope user --dry-run" in stale
    file = home / ".cursor" / "mcp.json"
    doc = json.loads(file.read_text())
    del doc["mcpServers"]["docs"]
    file.write_text(json.dumps(doc))
    (project / ".mcp.json").write_text('{"mcpServers": {"p": {"command": "p"}}}')
    found = json.loads(cli(project, "doctor", "--json", code=1).stdout)["problems"]
    assert {(p["severity"], p["message"]) for p in found} >= {
        ("error", "'docs' was removed by hand"),
        ("warning", "project server 'p' is pending approval, so it is not used"),
    }
    assert any(
        p["hint"] == "restore it: plugman export --target cursor --scope user --write"
        for p in found
    )


def test_claude_local_scope_goes_under_the_projects_entry(home: Path, project: Path) -> None:
    add_servers(project, "local")
    state = home / ".claude.json"
    own = '{\n  "projects": {\n    "/elsewhere": {\n      "allowedTools": []\n    }\n  }\n}'
    state.write_text(own)
    cli(project, "export", "--target", "claude-code", "--scope", "local", "--write")
    projects = json.loads(state.read_text())["projects"]
    assert set(projects[str(project)]["mcpServers"]) == {"tool", "docs"}
    assert projects["/elsewhere"] == {"allowedTools": []}
    cli(project, "export", "--target", "claude-code", "--scope", "local", "--remove")
    assert state.read_text() == own


def test_doctor_checks_the_store_and_the_journal(home: Path, project: Path) -> None:
    install_samples(project, "writing-skills")
    paths = Paths.from_env(project=project)
    copy = next(p for p in paths.store_dir.iterdir() if not p.name.startswith("."))
    (copy / "README.md").write_text("tampered\n")
    (paths.journal_dir / "123-1").mkdir(parents=True)
    done = cli(project, "doctor", "--json", code=1)
    messages = {p["message"] for p in json.loads(done.stdout)["problems"]}
    assert "the stored copy of writing-skills@plugman-samples (user) is modified" in messages
    # a journal whose command is gone is rolled back before doctor reads (a hot journal)
    assert not any("journal" in m for m in messages)
    assert "rolled back a change a stopped plugman command left unfinished" in done.stderr
    assert not any(paths.journal_dir.iterdir())

"""Issue 11, items 2 and 3: an export writes only its own scope's entries into an agent file, no
literal secret reaches a project file, and secrets stay private at rest and out of git.

Real files in a temporary home and project, the real CLI; no mocks.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from plugman.core.paths import Paths
from tests.conftest import PLANTED, SAMPLES
from tests.integration.helpers import run, snapshot
from tests.integration.test_export import cli, file_of

TOKEN = PLANTED["API_KEY"]  # planted: the secret scan fails the test if any output shows it


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def every_scope(project: Path, tmp_path: Path) -> None:
    """A server in each scope (the user's with a literal token), a plugin installed in the user
    scope and one in the project scope, and a claude.ai connector."""
    cli(project, "mcp", "add", "u-srv", "-s", "user", "-e", f"API_KEY={TOKEN}", "--", "u-cmd")
    cli(project, "mcp", "add", "l-srv", "-s", "local", "--", "l-cmd")
    (project / "plugman.toml").write_text('[mcp_servers.p-srv]\ncommand = "p-cmd"\n')
    cli(project, "trust", "approve", "--all")
    run("marketplace", "add", str(SAMPLES), project=project)
    run("install", "notes-server", project=project)
    run("install", "remote-docs", "--scope", "project", project=project)
    source = tmp_path / "connectors.json"
    source.write_text(json.dumps([{"name": "Slack", "url": "https://slack.example.com/mcp"}]))
    cli(project, "connectors", "sync", str(source))


def names_in(target: str, file: Path) -> set[str]:
    text = file.read_text()
    data: dict[str, Any] = tomllib.loads(text) if target == "codex" else json.loads(text)
    return set(data.get("mcp_servers" if target == "codex" else "mcpServers", {}))


USER = {"u-srv", "plugin_notes-server_notes"}
PROJECT = {"p-srv", "plugin_remote-docs_docs", "plugin_remote-docs_legacy-events"}


@pytest.mark.parametrize("target", ["claude-code", "cursor", "codex"])
def test_each_scope_file_gets_only_its_own_entries(
    target: str, home: Path, project: Path, tmp_path: Path
) -> None:
    every_scope(project, tmp_path)
    user = cli(project, "export", "--target", target, "--scope", "user", "--write")
    assert "claude.ai connectors and managed servers are not written" in user.stderr
    project_run = cli(project, "export", "--target", target, "--scope", "project", "--write")
    user_file = file_of(target, "user", home, project)
    project_file = file_of(target, "project", home, project)
    assert names_in(target, user_file) == USER
    codex_transports = {"plugin_remote-docs_legacy-events"} if target == "codex" else set()
    assert names_in(target, project_file) == PROJECT - codex_transports, project_run.stderr
    assert TOKEN not in project_file.read_text()
    if target == "claude-code":  # the local scope: under projects[<project>] in ~/.claude.json
        cli(project, "export", "--target", target, "--scope", "local", "--write")
        local = json.loads(user_file.read_text())["projects"][str(project)]["mcpServers"]
        assert set(local) == {"l-srv"}


def test_a_user_file_does_not_depend_on_the_project_it_is_exported_from(
    home: Path, project: Path, tmp_path: Path
) -> None:
    cli(project, "mcp", "add", "shared", "-s", "user", "--", "user-cmd")
    (project / "plugman.toml").write_text('[mcp_servers.shared]\ncommand = "project-cmd"\n')
    cli(project, "trust", "approve", "--all")
    cli(project, "export", "--target", "cursor", "--scope", "user", "--write")
    cli(project, "export", "--target", "cursor", "--scope", "project", "--write")
    user = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]
    mine = json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert user["shared"]["command"] == "user-cmd"  # not dropped: other projects need it
    # the agent's precedence picks this one; the project's own server needs approval, so it
    # is started through the launcher, which checks that approval at each start
    assert mine["shared"] == {"command": "plugman", "args": ["mcp", "run", "shared"]}


def test_a_literal_secret_is_never_written_into_a_project_file(home: Path, project: Path) -> None:
    (project / "plugman.toml").write_text(
        "[mcp_servers.leaky]\n"
        f'command = "leaky"\nenv = {{API_KEY = "{TOKEN}"}}\n\n'
        "[mcp_servers.clean]\n"
        'command = "clean"\nenv = {API_KEY = "${API_KEY}"}\n\n'
        "[mcp_servers.remote]\n"
        'type = "http"\nurl = "https://x.example.com/mcp"\n'
        f'headers = {{Authorization = "Bearer {TOKEN}"}}\n'
    )
    cli(project, "trust", "approve", "--all")
    for target in ("claude-code", "cursor", "codex"):
        result = cli(project, "export", "--target", target, "--scope", "project", "--write")
        written = file_of(target, "project", home, project)
        assert TOKEN not in written.read_text()
        assert names_in(target, written) == {"clean"}
        assert (
            "leaky: not exported: env.API_KEY holds a literal secret "
            f"({project / 'plugman.toml'}), and project files are committed; keep the value "
            "in plugman's secret store (plugman mcp vars set API_KEY) and write ${API_KEY} in "
            "its place"
        ) in result.stderr
        assert "remote: not exported: headers.Authorization holds a literal secret" in (
            result.stderr
        )


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_new_files_that_can_hold_secrets_are_0600_and_existing_ones_keep_their_mode(
    home: Path, project: Path
) -> None:
    paths = Paths.from_env(project=project)
    paths.config_dir.mkdir(parents=True)
    paths.user_config.write_text("# mine\n")
    paths.user_config.chmod(0o640)
    cursor = home / ".cursor" / "mcp.json"
    cursor.parent.mkdir()
    cursor.write_text("{}\n")
    cursor.chmod(0o644)
    cli(project, "mcp", "add", "u", "-s", "user", "-e", f"API_KEY={TOKEN}", "--", "u-cmd")
    cli(project, "mcp", "add", "l", "-s", "local", "-e", f"API_KEY={TOKEN}", "--", "l-cmd")
    (project / "plugman.toml").write_text('[mcp_servers.p]\ncommand = "p"\n')
    cli(project, "trust", "approve", "--all")
    for target in ("claude-code", "cursor"):
        cli(project, "export", "--target", target, "--scope", "user", "--write")
        cli(project, "export", "--target", target, "--scope", "project", "--write")
    cli(project, "export", "--target", "claude-code", "--scope", "local", "--write")
    private = [
        paths.local_config,
        paths.state_dir / "exports.json",
        paths.state_dir / "trust.json",
        *(paths.state_dir / "installed").glob("*.json"),
        home / ".claude.json",
    ]
    assert {str(p): mode(p) for p in private} == {str(p): 0o600 for p in private}
    assert mode(paths.user_config) == 0o640 and mode(cursor) == 0o644  # they existed
    shared = 0o666 & ~_umask()  # committed project files: the umask's default
    for committed in (project / ".mcp.json", project / ".cursor" / "mcp.json"):
        assert mode(committed) == shared
    assert mode(project / ".plugman" / ".gitignore") == shared


def test_a_new_user_config_and_state_files_are_0600(home: Path, project: Path) -> None:
    cli(project, "mcp", "add", "u", "-s", "user", "-e", f"API_KEY={TOKEN}", "--", "u-cmd")
    run("marketplace", "add", str(SAMPLES), project=project)
    paths = Paths.from_env(project=project)
    for file in (paths.user_config, paths.state_dir / "marketplaces.json"):
        assert mode(file) == 0o600, file


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def test_a_new_plugman_folder_keeps_local_toml_out_of_git_and_leaves_no_trace(
    home: Path, project: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    before = snapshot(project)
    cli(project, "mcp", "add", "l", "-s", "local", "-e", f"API_KEY={TOKEN}", "--", "l-cmd")
    assert (project / ".plugman" / ".gitignore").read_text().endswith("\n*\n")
    status = subprocess.run(
        ["git", "-C", str(project), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert status.stdout == ""  # nothing of .plugman/ would be committed
    cli(project, "mcp", "remove", "l", "-s", "local")
    assert snapshot(project) == before
    run("marketplace", "add", str(SAMPLES), project=project)
    run("install", "writing-skills", "--scope", "local", project=project)
    assert (project / ".plugman" / ".gitignore").is_file()
    run("uninstall", "writing-skills", "--scope", "local", project=project)
    assert snapshot(project) == before


def test_an_existing_plugman_folder_gets_no_gitignore(home: Path, project: Path) -> None:
    (project / ".plugman").mkdir()
    cli(project, "mcp", "add", "l", "-s", "local", "--", "l-cmd")
    assert sorted(p.name for p in (project / ".plugman").iterdir()) == ["local.toml"]


def test_exports_json_keeps_no_secret_value_and_still_takes_out_exactly(
    home: Path, project: Path
) -> None:
    cli(
        project,
        "mcp",
        "add",
        "u",
        "https://api.example.com/mcp?token=" + TOKEN,
        "-s",
        "user",
        "-H",
        f"Authorization: Bearer {TOKEN}",
    )
    cli(project, "mcp", "add", "v", "-s", "user", "-e", f"API_KEY={TOKEN}", "--", "v-cmd")
    own = '{\n  "theme": "dark",\n  "mcpServers": {\n    "mine": {"command": "x"}\n  }\n}\n'
    for name in ("claude-code", "cursor", "codex"):
        file = file_of(name, "user", home, project)
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(own if name != "codex" else '# mine\nmodel = "o3"\n')
    before = snapshot(home)
    for name in ("claude-code", "cursor", "codex"):
        cli(project, "export", "--target", name, "--write")
    record = Paths.from_env(project=project).state_dir / "exports.json"
    text = record.read_text()
    assert TOKEN not in text and "sha256" in text
    assert json.loads(text)["format"] == 2
    doctor = cli(project, "doctor")
    assert doctor.stdout.endswith("\nno problems found\n")
    for name in ("claude-code", "cursor", "codex"):
        cli(project, "export", "--target", name, "--remove")
    assert snapshot(home) == before  # the exact text came back out, found by its digests


def test_an_entry_edited_after_the_export_is_the_users(home: Path, project: Path) -> None:
    cli(project, "mcp", "add", "v", "-s", "user", "-e", f"API_KEY={TOKEN}", "--", "v-cmd")
    cli(project, "export", "--target", "cursor", "--write")
    file = home / ".cursor" / "mcp.json"
    doc = json.loads(file.read_text())
    doc["mcpServers"]["v"]["env"]["API_KEY"] = "changed-by-hand"
    file.write_text(json.dumps(doc))
    found = json.loads(cli(project, "doctor", "--json").stdout)["problems"]
    assert next(p["message"] for p in found if p["severity"] == "warning") == (
        "'v' was edited by hand; plugman will leave it as it is"
    )
    before = file.read_bytes()
    refused = cli(project, "export", "--target", "cursor", "--remove", code=1)
    assert "mcpServers.v" in refused.stderr
    assert "--force" in refused.stderr and file.read_bytes() == before
    cli(project, "export", "--target", "cursor", "--remove", "--force")
    assert json.loads(file.read_text())["mcpServers"]["v"]["env"] == {"API_KEY": "changed-by-hand"}


def test_dry_run_masks_secrets_unless_show_secrets(home: Path, project: Path) -> None:
    cli(project, "mcp", "add", "v", "-s", "user", "-e", f"API_KEY={TOKEN}", "--", "v-cmd")
    masked = cli(project, "export", "--target", "cursor", "--dry-run")
    assert '"API_KEY": "***"' in masked.stdout and TOKEN not in masked.stdout
    as_json = json.loads(cli(project, "export", "--target", "cursor", "--dry-run", "--json").stdout)
    assert '"API_KEY": "***"' in as_json["changes"][0]["diff"]
    shown = cli(project, "export", "--target", "cursor", "--dry-run", "--show-secrets")
    assert f'"API_KEY": "{TOKEN}"' in shown.stdout
    cli(project, "export", "--target", "cursor", "--write")
    removal = cli(project, "export", "--target", "cursor", "--remove", "--dry-run")
    assert '-        "API_KEY": "***"' in removal.stdout and TOKEN not in removal.stdout


def test_a_hook_with_a_literal_secret_stays_out_of_the_project_settings(
    home: Path, project: Path
) -> None:
    (project / "plugman.toml").write_text(
        "[[hooks.PreToolUse]]\n"
        'matcher = "Bash"\n'
        "[[hooks.PreToolUse.hooks]]\n"
        'type = "http"\nurl = "https://hooks.example.com/check"\n'
        f'headers = {{Authorization = "Bearer {TOKEN}"}}\n\n'
        "[[hooks.PostToolUse]]\n"
        'matcher = "Bash"\n'
        "[[hooks.PostToolUse.hooks]]\n"
        'type = "command"\ncommand = "echo done"\n'
    )
    cli(project, "trust", "approve", "--all")
    result = cli(project, "export", "--target", "claude-code", "--scope", "project", "--write")
    settings = (project / ".claude" / "settings.json").read_text()
    assert TOKEN not in settings and set(json.loads(settings)["hooks"]) == {"PostToolUse"}
    assert "PreToolUse hook: not exported: headers.Authorization holds a literal secret" in (
        result.stderr
    )


def test_a_format_1_record_with_values_in_clear_is_still_read(home: Path, project: Path) -> None:
    import hashlib

    cli(project, "mcp", "add", "v", "-s", "user", "-e", f"API_KEY={TOKEN}", "--", "v-cmd")
    before = snapshot(home)
    cli(project, "export", "--target", "cursor", "--write")
    record = Paths.from_env(project=project).state_dir / "exports.json"
    body = json.loads(record.read_text())
    servers = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    for files in body["exports"].values():  # what plugman 0.1 stored: the values themselves
        for written in files.values():
            for part in written["parts"]:
                part["entries"] = {i: servers[i] for i in part["entries"]}
            for block in written["blocks"]:
                assert {"sha256": digest, "length": len(TOKEN)} in block["after"]
                block["after"] = "".join(s if isinstance(s, str) else TOKEN for s in block["after"])
    record.write_text(json.dumps({**body, "format": 1}))
    cli(project, "export", "--target", "cursor", "--remove")
    assert snapshot(home) == before and not record.exists()

"""The capability diff (issue 26 point 2): what a plugin's new content can do that the installed
content could not, shown by `update` and `sync` before they change bytes (and alone by
`plugman diff`), with a real git marketplace and the real CLI.

An upstream commit adds a hook and changes an MCP server's command. In the project scope (a
plugin `sync` installed) both wait as pending-approval until `plugman trust approve`; in the user
scope the user's own install is consent, so nothing waits: the diff is the notice.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from plugman.cli import invoke
from tests.conftest import SAMPLES
from tests.integration.helpers import run, snapshot

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
NOTES = "plugin:notes-server:notes"
AUDIT = {"type": "command", "command": "sh audit.sh"}
HOOK = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [AUDIT]}]}}


def commit(folder: Path, message: str) -> None:
    subprocess.run([*GIT, "-C", str(folder), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(folder), "commit", "-qm", message], check=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The sample marketplace as a git repository."""
    folder = tmp_path / "repo"
    shutil.copytree(SAMPLES, folder, ignore=shutil.ignore_patterns("invalid"))
    subprocess.run([*GIT, "init", "-q", "-b", "main", str(folder)], check=True)
    commit(folder, "first")
    return folder


def upstream_change(repo: Path) -> None:
    """notes-server gains a PreToolUse hook and runs its server through `uv run` now."""
    upstream_change_in_place(repo)
    commit(repo, "a hook, and the server through uv")


def cli(project: Path, *args: str) -> Any:
    return invoke(["--project", str(project), *args])


def pending(project: Path) -> set[str]:
    doc = run("config", "resolve", project=project)
    return {
        d["message"].split("'")[1] for d in doc["diagnostics"] if d["code"] == "pending-approval"
    }


def gained(doc: dict[str, Any]) -> set[tuple[str, str, Any, Any]]:
    return {(g["kind"], g["name"], g["before"], g["after"]) for g in doc["gained"]}


# the names of the sample server's env variables, and a digest of their values (never shown)
OWNER = json.dumps({"NOTES_OWNER": "${USER:-sample}"}).encode()
ENV = f"; env NOTES_OWNER (values #{hashlib.sha256(OWNER).hexdigest()[:6]})"
EXPECTED = {
    ("hook", "PreToolUse:Bash", None, "command sh audit.sh"),
    (
        "server",
        "notes",
        "python3 '${CLAUDE_PLUGIN_ROOT}/server/notes_server.py'" + ENV,
        "uv run '${CLAUDE_PLUGIN_ROOT}/server/notes_server.py'" + ENV,
    ),
}


def test_update_shows_the_new_hook_and_server_command_then_they_wait_for_approval(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    run("marketplace", "add", f"file://{repo}", "--scope", "project", project=project)
    run("install", "notes-server", "--scope", "project", project=project)
    monkeypatch.setenv("PLUGMAN_HOME", str(tmp_path / "teammate"))  # a clone, synced
    run("sync", "--frozen", project=project)
    run("trust", "approve", "--all", project=project)
    assert pending(project) == set()
    upstream_change(repo)
    home = tmp_path / "teammate"
    before = snapshot(project, home / "data", home / "state" / "installed")

    dry = cli(project, "update", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert dry.output.startswith("would update notes-server@"), dry.output
    assert "+ hook PreToolUse:Bash: command sh audit.sh (new)\n" in dry.output
    assert (
        f"+ MCP server notes: uv run '${{CLAUDE_PLUGIN_ROOT}}/server/notes_server.py'{ENV} "
        f"(was: python3 '${{CLAUDE_PLUGIN_ROOT}}/server/notes_server.py'{ENV})\n"
    ) in dry.output
    assert (
        "wait for approval (new or changed: MCP server notes, hook PreToolUse:Bash): "
        "plugman trust approve notes-server\n"
    ) in dry.output
    assert dry.output.endswith("dry run: nothing was changed\n")
    assert snapshot(project, home / "data", home / "state" / "installed") == before

    [change] = run("update", project=project)["changes"]
    assert change["id"] == "notes-server@plugman-samples" and change["scope"] == "project"
    assert gained(change["capabilities"]) == EXPECTED
    assert change["capabilities"]["lost"] == []
    assert change["waits_for_approval"] is True
    assert {NOTES, "PreToolUse:Bash"} <= pending(project)
    run("trust", "approve", "notes-server", project=project)
    assert pending(project) == set()


def test_diff_and_user_scope_update(repo: Path, isolated_home: Path) -> None:
    run("marketplace", "add", f"file://{repo}")
    run("install", "notes-server")
    upstream_change(repo)
    before = snapshot(isolated_home / "data", isolated_home / "state" / "installed")
    doc = run("diff", "notes-server")
    assert (doc["plugin"], doc["scope"]) == ("notes-server@plugman-samples", "user")
    assert gained(doc) == EXPECTED and doc["lost"] == []
    text = invoke(["diff", "notes-server"])
    assert text.exit_code == 0
    assert text.output.startswith("notes-server@plugman-samples (user): installed -> available\n")
    assert "+ hook PreToolUse:Bash: command sh audit.sh (new)\n" in text.output
    assert snapshot(isolated_home / "data", isolated_home / "state" / "installed") == before

    [change] = run("update")["changes"]
    assert gained(change["capabilities"]) == EXPECTED
    # the user's own install is consent in the user scope: nothing waits, the diff is the notice
    assert change["waits_for_approval"] is False
    assert run("diff", "notes-server")["gained"] == []


def test_diff_of_what_is_not_installed_is_a_clear_error(repo: Path) -> None:
    for argv, words, code in (
        (["diff", "nosuch"], "nosuch is not installed", 1),
        (["diff", "notes-server"], "notes-server is not installed", 1),
    ):
        result = invoke(argv)
        assert result.exit_code == code, result.output
        assert words in result.output and "Traceback" not in result.output
    run("marketplace", "add", f"file://{repo}")
    result = invoke(["diff", "nosuch", "--json"])
    assert result.exit_code == 1
    assert "nosuch is not installed" in json.loads(result.stdout)["error"]["message"]
    run("install", "notes-server")
    for argv, words, code in (
        (["diff", "notes-server", "1.0.0", "2.0.0"], "'1.0.0': it is neither installed", 2),
        (["diff", "notes-server", "installed", "locked"], "is not pinned in", 1),
    ):
        result = invoke(argv)
        assert result.exit_code == code, result.output
        assert words in result.output and "Traceback" not in result.output


def test_diff_between_any_two_contents(repo: Path, tmp_path: Path) -> None:
    """FROM and TO: installed, available, locked or a plugin folder; a hook's condition and
    timeout and a server's env names count, a changed env value shows as a changed digest."""
    project = tmp_path / "project"
    project.mkdir()
    run("marketplace", "add", f"file://{repo}", "--scope", "project", project=project)
    run("install", "notes-server", "--scope", "project", project=project)
    assert run("diff", "notes-server", "installed", "locked", project=project)["gained"] == []
    work = tmp_path / "work"
    shutil.copytree(repo / "plugins" / "notes-server", work)
    hook = {"type": "command", "command": "sh audit.sh", "if": "Bash(git *)", "timeout": 5}
    (work / "hooks").mkdir()
    (work / "hooks" / "hooks.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}})
    )
    mcp = json.loads((work / ".mcp.json").read_text())
    mcp["mcpServers"]["notes"]["env"] = {"NOTES_TOKEN": "${NOTES_TOKEN}"}
    (work / ".mcp.json").write_text(json.dumps(mcp))
    doc = run("diff", "notes-server", "locked", str(work), project=project)
    assert (doc["from"], doc["to"]) == ("locked", str(work))
    [new_hook, server] = doc["gained"]
    assert new_hook["after"] == "command sh audit.sh [if Bash(git *)] [timeout 5s]"
    assert re.fullmatch(
        r".*notes_server\.py'; env NOTES_TOKEN \(values #[0-9a-f]{6}\)", server["after"]
    )
    assert "${NOTES_TOKEN}" not in json.dumps(doc)
    mcp["mcpServers"]["notes"]["env"] = {"NOTES_TOKEN": "${OTHER}"}
    (work / ".mcp.json").write_text(json.dumps(mcp))
    changed = run("diff", "notes-server", "locked", str(work), project=project)["gained"][1]
    assert changed["after"] != server["after"] and "NOTES_TOKEN" in changed["after"]
    back = run("diff", "notes-server", str(work), "installed", project=project)
    assert {(c["kind"], c["name"]) for c in back["lost"]} == {("hook", "PreToolUse:Bash")}
    text = cli(project, "diff", "notes-server", "installed", str(work))
    assert text.output.startswith(f"notes-server@plugman-samples (project): installed -> {work}\n")


def test_sync_shows_the_diff_and_dry_run_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    shutil.copytree(SAMPLES, project / "marketplace", ignore=shutil.ignore_patterns("invalid"))
    run("marketplace", "add", "./marketplace", "--scope", "project", project=project)
    run("install", "notes-server", "--scope", "project", project=project)
    monkeypatch.setenv("PLUGMAN_HOME", str(tmp_path / "teammate"))
    run("sync", "--frozen", project=project)
    run("trust", "approve", "--all", project=project)
    upstream_change_in_place(project / "marketplace")
    home = tmp_path / "teammate"
    before = snapshot(project, home / "data", home / "state")
    dry = run("sync", "--dry-run", project=project)
    assert dry["dry_run"] is True
    [change] = dry["changes"]
    assert gained(change["capabilities"]) == EXPECTED and change["waits_for_approval"] is True
    assert snapshot(project, home / "data", home / "state") == before
    text = cli(project, "sync")
    assert text.exit_code == 0, text.output
    assert "+ hook PreToolUse:Bash: command sh audit.sh (new)\n" in text.output
    assert (
        "wait for approval (new or changed: MCP server notes, hook PreToolUse:Bash): "
        "plugman trust approve notes-server\n"
    ) in text.output
    assert {NOTES, "PreToolUse:Bash"} <= pending(project)


def upstream_change_in_place(market: Path) -> None:
    """The same change as `upstream_change`, to a marketplace folder (no commit)."""
    plugin = market / "plugins" / "notes-server"
    (plugin / "hooks").mkdir()
    (plugin / "hooks" / "hooks.json").write_text(json.dumps(HOOK))
    mcp = json.loads((plugin / ".mcp.json").read_text())
    mcp["mcpServers"]["notes"]["command"] = "uv"
    mcp["mcpServers"]["notes"]["args"] = ["run", "${CLAUDE_PLUGIN_ROOT}/server/notes_server.py"]
    (plugin / ".mcp.json").write_text(json.dumps(mcp))

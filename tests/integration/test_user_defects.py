"""Defects a new user hit (issue 11, item 5), each kept fixed with the real CLI on real files."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from plugman.cli import app, invoke
from plugman.cli.argv import Command, Group
from plugman.cli.runner import Result
from tests.conftest import SAMPLES
from tests.integration.helpers import run


def cli(*args: str, project: Path | None = None, stdin: str | None = None) -> Result:
    argv = ([] if project is None else ["--project", str(project)]) + list(args)
    return invoke(argv, input=stdin)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    shutil.copytree(SAMPLES, folder / "marketplace", ignore=shutil.ignore_patterns("invalid"))
    run("marketplace", "add", "./marketplace", project=folder)
    return folder


# 1. uninstall removes the plugin's data folder; --keep-data keeps it


def test_uninstall_removes_the_data_folder_unless_keep_data(
    project: Path, isolated_home: Path
) -> None:
    data = isolated_home / "data" / "plugins" / "toolbox-plugman-samples"
    run("install", "toolbox", project=project)
    data.mkdir(parents=True)
    (data / "cache.txt").write_text("kept by the plugin\n")
    run("uninstall", "toolbox", "--keep-data", project=project)
    assert (data / "cache.txt").is_file()
    run("install", "toolbox", project=project)
    run("install", "toolbox", "--scope", "project", project=project)
    run("uninstall", "toolbox", project=project)
    assert data.is_dir(), "still installed in the project scope"
    run("uninstall", "toolbox", "--scope", "project", project=project)
    assert not data.exists()


# 2. a cleanup after the commit warns; it never fails the command or later ones


@pytest.fixture
def undeletable() -> Iterator[list[Path]]:
    """Folders made undeletable for real (chattr +i as root, a read-only parent otherwise)."""
    folders: list[Path] = []
    yield folders
    for folder in folders:
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True)
        folder.chmod(0o755)


def make_undeletable(folder: Path, undeletable: list[Path]) -> None:
    (folder / "pinned").mkdir()
    (folder / "pinned" / "file").write_text("x")
    pinned = folder / "pinned"
    undeletable.append(pinned)
    if os.geteuid() == 0:
        pinned_now = subprocess.run(["chattr", "+i", str(pinned)], capture_output=True, text=True)
        assert pinned_now.returncode == 0, f"chattr +i {pinned}: {pinned_now.stderr}"
    else:
        pinned.chmod(0o555)
    with pytest.raises(OSError):  # the folder really cannot be emptied now
        (pinned / "file").unlink()


def test_a_cleanup_failure_after_the_commit_is_a_warning(
    project: Path, isolated_home: Path, undeletable: list[Path]
) -> None:
    [change] = run("install", "toolbox", project=project)["changes"]
    tree = isolated_home / "data" / "store" / change["content_hash"].removeprefix("sha256:")
    make_undeletable(tree, undeletable)
    done = cli("uninstall", "toolbox", "--json", project=project)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["changes"][0]["action"] == "uninstalled"
    assert "nothing was changed" not in done.output
    assert f"warning: could not remove {tree}: " in done.stderr
    assert "left in place" in done.stderr
    assert run("list", project=project)["plugins"] == []
    again = cli("install", "guardrails", project=project)  # later commands work, and warn again
    assert again.exit_code == 0, again.output
    assert "installed guardrails@plugman-samples" in again.stdout
    assert "warning: could not remove" in again.stderr


# 3. doctor and mcp list report broken config and state files


def broken_config(project: Path, home: Path) -> list[Path]:
    project.mkdir(parents=True, exist_ok=True)
    (project / "plugman.toml").write_text("[mcp_servers\n")
    (project / ".mcp.json").write_text('{"mcpServers": {"a": {"command": "x"}}')
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "plugman.toml").write_text("x = = 1\n")
    return [project / "plugman.toml", project / ".mcp.json", home / "config" / "plugman.toml"]


def test_doctor_reports_invalid_config_files(tmp_path: Path, isolated_home: Path) -> None:
    project = tmp_path / "p"
    files = broken_config(project, isolated_home)
    done = cli("doctor", "--json", project=project)
    assert done.exit_code == 1, done.output
    problems = json.loads(done.stdout)["problems"]
    errors = [p for p in problems if p["severity"] == "error"]
    assert sorted(p["where"].split(":")[0] for p in errors) == sorted(map(str, files))
    # and, for each broken file, what it leaves out
    left_out = [p for p in problems if p["severity"] == "warning"]
    assert sorted(p["where"] for p in left_out) == sorted(map(str, files))
    assert all(p["message"].startswith("left out: every") for p in left_out)
    assert (
        f"error: {project / '.mcp.json'}:1:39: invalid JSON"
        in cli("doctor", project=project).stdout
    )


def test_doctor_reports_a_corrupt_state_file_once(tmp_path: Path, isolated_home: Path) -> None:
    record = isolated_home / "state" / "installed" / "user.json"
    record.parent.mkdir(parents=True)
    record.write_text("{bad")
    done = cli("doctor", project=tmp_path)
    assert done.exit_code == 1
    assert done.stdout.count("unreadable") == 1, done.output
    assert f"error: {record}: unreadable: " in done.stdout
    assert "plugman doctor" not in done.output
    assert "move it away" in done.stdout


def test_mcp_list_shows_what_is_wrong_with_the_config(tmp_path: Path, isolated_home: Path) -> None:
    project = tmp_path / "p"
    broken_config(project, isolated_home)
    done = cli("mcp", "list", project=project)
    assert done.exit_code == 1
    assert "no MCP servers configured" not in done.output
    assert "not valid TOML" in done.stderr and "invalid JSON" in done.stderr
    assert done.stderr.count("error: ") == 3
    assert done.stderr.count("  left out: every") == 3
    as_json = cli("mcp", "list", "--json", project=project)
    found = json.loads(as_json.stdout)
    codes = sorted(d["code"] for d in found["diagnostics"])
    assert found["servers"] == [] and codes == [
        "json-syntax",
        *["left-out"] * 3,
        *["toml-syntax"] * 2,
    ]


# 7. every usage error exits 2; hooks run tells a usage error from a block by `error:`


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("config", "explain", "NOSUCH"), "no MCP server or installed plugin named 'NOSUCH'"),
        (("mcp", "get", "NOSUCH"), "no MCP server named 'NOSUCH'"),
        (("hooks", "run", "NoSuchEvent"), "unknown hook event 'NoSuchEvent'"),
        (("install", "toolbox@plugman-samples>=abc"), "'>=abc' is not a version range"),
        (("install", "toolbox@plugman-samples==1||2"), "uses '||'"),
        (("install", "--bogus"), "no such option: --bogus"),
        (("install",), "missing argument"),
        (("instal", "x"), "no such command 'instal'"),
    ],
)
def test_usage_errors_exit_2_in_the_error_hint_style(
    project: Path, args: tuple[str, ...], says: str
) -> None:
    done = cli(*args, project=project, stdin="{}")
    assert done.exit_code == 2, done.output
    assert done.stdout == ""
    assert done.stderr.startswith(f"error: {says}") or says in done.stderr.splitlines()[0]
    assert "\n  hint: " in done.stderr and "Traceback" not in done.output


def test_hooks_run_block_and_usage_error_are_told_apart(tmp_path: Path) -> None:
    (tmp_path / ".plugman").mkdir()
    (tmp_path / ".plugman" / "local.toml").write_text(
        '[[hooks.PreToolUse]]\nhooks = [{type = "command", command = "echo no >&2; exit 2"}]\n'
    )
    blocked = cli("hooks", "run", "PreToolUse", "--json", project=tmp_path, stdin="{}")
    assert blocked.exit_code == 2
    assert json.loads(blocked.stdout)["blocked"] is True
    assert not blocked.stderr.startswith("error:")
    wrong = cli("hooks", "run", "PreTooluse", "--json", project=tmp_path, stdin="{}")
    assert wrong.exit_code == 2
    assert wrong.stderr.startswith("error: unknown hook event")
    assert "did you mean PreToolUse?" in wrong.stderr
    assert json.loads(wrong.stdout)["error"]["exit_code"] == 2


# 8. under --json a failure prints an error envelope on stdout


def test_json_failures_print_an_error_envelope(project: Path) -> None:
    failed = cli("install", "nosuch", "--json", project=project)
    assert failed.exit_code == 1
    assert json.loads(failed.stdout) == {
        "format": 1,
        "command": "install",
        "error": {
            "message": "plugin 'nosuch' not found in any known marketplace",
            "where": None,
            "hint": "run: plugman search nosuch",
            "exit_code": 1,
        },
    }
    assert failed.stderr.startswith("error: plugin 'nosuch' not found")
    usage = json.loads(cli("mcp", "list", "--json", "--bogus", project=project).stdout)
    assert (usage["command"], usage["error"]["exit_code"]) == ("mcp list", 2)
    server = cli("mcp", "add", "x", "--json", "--", "cmd", "--json", project=project)
    assert json.loads(server.stdout)["command"] == "mcp add"
    again = json.loads(cli("mcp", "add", "x", "--json", "--", "cmd", project=project).stdout)
    assert again["error"]["message"].startswith("MCP server x already exists")
    validate = cli("validate", "--format", "json", str(project / "nothing"))
    assert json.loads(validate.stdout)["error"]["exit_code"] == 2


# 10 (part). -h works everywhere; shell completion is offered


@pytest.mark.parametrize(
    "args", [(), ("install",), ("mcp",), ("mcp", "add"), ("hooks", "run"), ("validate",)]
)
def test_dash_h_is_help_everywhere(args: tuple[str, ...]) -> None:
    done = cli(*args, "-h")
    assert done.exit_code == 0, done.output
    assert "sage: plugman" in done.stdout


# 5. --project must exist; without it the project is found from the working folder upward


def test_a_missing_project_folder_is_a_usage_error(tmp_path: Path) -> None:
    done = cli("list", project=tmp_path / "nope")
    assert done.exit_code == 2
    assert done.stderr.startswith(f"error: --project {tmp_path / 'nope'}: no such folder")
    assert not (tmp_path / "nope").exists()


@pytest.mark.parametrize("marker", ["plugman.toml", ".mcp.json", ".git"])
def test_the_project_is_found_from_a_subfolder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marker: str
) -> None:
    outer, inner = tmp_path / "outer", tmp_path / "outer" / "app"
    (inner / "src" / "deep").mkdir(parents=True)
    (outer / ".git").mkdir()
    (inner / marker).mkdir() if marker == ".git" else (inner / marker).write_text("")
    monkeypatch.chdir(inner / "src" / "deep")
    found = run("paths")["paths"]
    assert (found["project_dir"], found["project_marker"]) == (str(inner), marker)
    monkeypatch.chdir(outer)
    assert run("paths")["paths"]["project_dir"] == str(outer)


def test_without_any_marker_the_project_is_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    markers = [f / m for f in tmp_path.parents for m in ("plugman.toml", ".mcp.json", ".git")]
    assert not any(m.exists() for m in markers), "the temporary folder must be outside a project"
    monkeypatch.chdir(tmp_path)
    found = run("paths")["paths"]
    assert (found["project_dir"], found["project_marker"]) == (str(tmp_path), "")


def test_a_project_install_from_a_subfolder_lands_in_the_project(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "plugman.toml").write_text("# the team's plugins\n")
    (project / "docs").mkdir()
    monkeypatch.chdir(project / "docs")
    run("install", "toolbox", "--scope", "project")
    assert "toolbox" in (project / "plugman.toml").read_text()
    assert not (project / "docs" / "plugman.toml").exists()


# 6. info: version (also from plugin.json), source in words, components, scopes; X@direct


def test_info_shows_version_source_components_and_scopes(project: Path) -> None:
    shown = cli("info", "notes-server", project=project)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines()[0] == "notes-server@plugman-samples 1.0.0"
    assert (
        "source:     folder ./plugins/notes-server of marketplace plugman-samples" in shown.stdout
    )
    assert "components: MCP servers notes" in shown.stdout
    assert "installed:  no" in shown.stdout
    assert "None" not in shown.stdout and "{" not in shown.stdout
    run("install", "toolbox", project=project)
    run("install", "toolbox", "--scope", "project", project=project)
    run("disable", "toolbox", "--scope", "project", project=project)
    toolbox = cli("info", "toolbox", project=project).stdout
    assert "components: commands ls-large; skills shell-helper" in toolbox
    assert "installed:  user 0.1.0, project 0.1.0 (disabled)" in toolbox


def test_info_of_a_direct_install(project: Path) -> None:
    run("install", str(project / "marketplace" / "plugins" / "guardrails"), project=project)
    shown = cli("info", "guardrails@direct", project=project)
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert lines[0] == "guardrails@direct 1.1.0"
    assert f"folder {project / 'marketplace' / 'plugins' / 'guardrails'}" in shown.stdout
    assert "components: hooks PostToolUse, PreToolUse" in shown.stdout
    assert json.loads(cli("info", "guardrails@direct", "--json", project=project).stdout)["plugin"][
        "installed"
    ] == {"user": "1.1.0"}
    missing = cli("info", "nosuch@direct", project=project)
    assert missing.exit_code == 1 and "'nosuch@direct' is not installed" in missing.stderr


# 4. update (no names) refreshes the marketplaces and covers every scope, as outdated does


def test_update_refreshes_marketplaces_and_covers_every_scope(tmp_path: Path) -> None:
    from tests.integration.test_marketplaces import commit, git_repo

    repo = git_repo(tmp_path / "upstream")
    project = tmp_path / "project"
    project.mkdir()
    run("marketplace", "add", f"file://{repo}", project=project)
    run("install", "toolbox", project=project)
    run("install", "toolbox", "--scope", "project", project=project)
    catalog = repo / ".claude-plugin" / "marketplace.json"
    data = json.loads(catalog.read_text())
    for entry in data["plugins"]:
        if entry["name"] == "toolbox":
            entry["version"] = "0.2.0"
    catalog.write_text(json.dumps(data))
    (repo / "plugins" / "toolbox" / "NEWS.md").write_text("0.2.0\n")
    commit(repo, "toolbox 0.2.0")
    rows = run("outdated", project=project)["plugins"]
    assert sorted((r["scope"], r["available"]) for r in rows) == [
        ("project", "0.2.0"),
        ("user", "0.2.0"),
    ]
    done = run("update", project=project)["changes"]
    assert sorted((c["scope"], c["version"]) for c in done) == [
        ("project", "0.2.0"),
        ("user", "0.2.0"),
    ]
    assert 'version = "0.2.0"' in (project / "plugman.lock").read_text()
    assert run("outdated", project=project)["plugins"] == []
    assert run("update", project=project)["changes"] == []


def test_outdated_reports_a_plugin_that_left_its_marketplace_and_goes_on(project: Path) -> None:
    run("install", "toolbox", "writing-skills", project=project)
    catalog = project / "marketplace" / ".claude-plugin" / "marketplace.json"
    data = json.loads(catalog.read_text())
    data["plugins"] = [e for e in data["plugins"] if e["name"] != "toolbox"]
    catalog.write_text(json.dumps(data))
    (project / "marketplace" / "plugins" / "writing-skills" / "NEWS.md").write_text("new\n")
    shown = cli("outdated", project=project)
    assert shown.exit_code == 1, shown.output  # one plugin could not be checked
    assert "toolbox@plugman-samples (user): 0.1.0: not in marketplace plugman-samples any more" in (
        shown.stdout
    )
    assert "writing-skills@plugman-samples (user)" in shown.stdout
    done = cli("update", project=project)
    assert done.exit_code == 1, done.output  # the rest is updated; one plugin was not
    assert "updated writing-skills@plugman-samples" in done.stdout
    assert "not updated: toolbox@plugman-samples (user): not in marketplace" in done.stdout


# 10. mcp add refuses unknown URL schemes; message grammar


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("x", "ftp://x"), "http server URLs start with http:// or https://, not ftp://"),
        (("x", "wss://x"), "http server URLs start with http:// or https://, not wss://"),
        (("x", "https://x", "--transport", "ws"), "ws server URLs start with ws:// or wss://"),
        (("x", "file:///etc/passwd", "-t", "sse"), "sse server URLs start with http:// or"),
    ],
)
def test_mcp_add_refuses_unknown_url_schemes(
    tmp_path: Path, args: tuple[str, ...], says: str
) -> None:
    done = cli("mcp", "add", *args, project=tmp_path)
    assert done.exit_code == 2
    assert done.stderr.startswith(f"error: {says}")
    assert not (tmp_path / ".plugman").exists()
    assert cli("mcp", "add", "ok", "wss://x", "-t", "ws", project=tmp_path).exit_code == 0


def test_a_version_conflict_names_each_requirement_once(project: Path) -> None:
    done = cli("install", "toolbox==2.0", project=project)
    assert done.exit_code == 1
    assert "0.1.0: you require ==2.0\n" in done.stderr


def test_one_dropped_entry_is_one_entry(tmp_path: Path) -> None:
    (tmp_path / "plugman.toml").write_text('[mcp_servers.x]\ncommand = "${NOPE_UNSET}"\n')
    shown = cli("config", "resolve", project=tmp_path).stdout
    assert "1 entry dropped, shadowed or invalid" in shown


# 9. waiting for another plugman's lock says who holds it, after a second


def test_waiting_for_the_lock_says_who_holds_it(tmp_path: Path, isolated_home: Path) -> None:
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from tests.integration.helpers import spawn
    from tests.integration.test_sources_archive import plugin_zip

    body = plugin_zip()
    release = threading.Event()

    class Slow(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            release.wait(30)  # the first plugman holds the lock while it downloads
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    lock = isolated_home / "state" / "lock"
    try:
        url = f"http://127.0.0.1:{httpd.server_port}/p.zip"
        holder = spawn("--project", str(tmp_path), "install", url)
        deadline = time.monotonic() + 30
        while not (lock.is_file() and lock.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lock.read_text() == f"{holder.pid} plugman install\n"
        waiter = spawn("--project", str(tmp_path), "mcp", "add", "x", "--", "cmd")
        time.sleep(2.5)
        release.set()
        _out, err = waiter.communicate(timeout=60)
        assert holder.wait(timeout=60) == 0
        assert waiter.returncode == 0, err
        assert f"warning: waiting for plugman install (pid {holder.pid}) to finish" in err
        assert lock.read_text() == ""  # released: nothing left behind
    finally:
        release.set()
        httpd.shutdown()


def test_fetch_progress_shows_on_a_terminal_and_never_in_json(tmp_path: Path) -> None:
    import os
    import pty
    import sys

    from tests.integration.test_marketplaces import git_repo

    repo = git_repo(tmp_path / "repo")
    plugin = f"file://{repo}"
    master, slave = pty.openpty()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "plugman",
            "--project",
            str(tmp_path),
            "marketplace",
            "add",
            plugin,
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=slave,
        timeout=120,
        check=False,
    )
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert done.returncode == 0
    assert f"cloning {plugin}" in shown.decode(errors="replace")
    assert json.loads(done.stdout)["marketplaces"][0]["kind"] == "git"
    quiet = subprocess.run(
        [sys.executable, "-m", "plugman", "--project", str(tmp_path), "marketplace", "update"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert quiet.returncode == 0 and "cloning" not in quiet.stderr


# 11. the README documents the CLI as it is


def readme_command_lines() -> list[str]:
    from tests.conftest import REPO

    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
    return [
        line.partition("#")[0].strip()
        for block in blocks
        for line in block.splitlines()
        if line.strip().startswith("plugman ")
    ]


def test_every_flag_the_readme_documents_exists() -> None:
    lines = readme_command_lines()
    assert len(lines) > 25
    for line in lines:
        path: list[str] = []
        node: Command | Group | None = None
        named: list[Command | Group] = []
        for word in line.split()[1:]:  # down to the command(s) the line is about
            if path and not isinstance(node, Group):
                break
            found = (
                dict(app.children(path, node)).get(word)
                if isinstance(node, Group)
                else app.top(word)
            )
            if found is None:
                break
            path, node = [*path, word], found
        if len(path) > 1:  # `marketplace list | update | remove NAME`: each command named
            group = app.top(path[0]) if len(path) == 2 else None
            siblings = dict(app.children(path[:1], group)) if isinstance(group, Group) else {}
            named = [siblings[w] for w in line.split() if w in siblings]
        options = {"-h", "--help", "--project", "--version"}
        for each in [*named, *([node] if node else [])]:
            options |= {name for o in each.options for name in o.names}
        flags = re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", line)
        missing = [f for f in flags if f not in options]
        assert not missing, (line, missing)


def test_the_readme_sends_users_nowhere_they_cannot_go() -> None:
    from tests.conftest import REPO

    text = (REPO / "README.md").read_text()
    assert "Still to come" not in text and "../shared/DESIGN.md" not in text
    for topic in (
        "managed-settings.toml",
        "[[hooks.PreToolUse]]",
        '"connectors"',
        "--call-timeout",
    ):
        assert topic in text, topic
    assert "`local` scope unless `--scope" in text

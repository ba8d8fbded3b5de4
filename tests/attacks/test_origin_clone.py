"""Attacks on origin and consent (issue 33, points 2 and 3), end to end with real git clones.

A clone's author controls every file git tracks in the project and every link in it. The
invariants attacked:

- origin: only the user's and the organization's files consent. A `.plugman/local.toml` that
  git tracks, or that is reached through a link (`.plugman/local.toml` or `.plugman` itself), is
  the project's: its servers and hooks wait for `trust approve` (config.origins.local,
  config.scopes._layers). A project file linked outside the project is the project's too, and
  plugman never writes through it.
- binding: an approval covers the project folder, the entry and the digest of each file the
  command runs (config.merge.approval_key, config.binding.files_run): replayed in another clone
  it approves nothing, and a script changed after approval (a `git pull`) waits again.
- the clone's approval keys (`.claude/settings*.json`, plugman.toml) approve nothing.
- the launchers (`plugman mcp run`, `plugman hooks exec`) start nothing pending.

Each case is paired with the user's consent: the same entry in the user's own file, or after
`plugman trust approve`, runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from plugman.cli import invoke
from tests.integration.helpers import fails, git, run, snapshot

SERVER = {"command": "bash", "args": ["./scripts/start.sh"]}
START = "#!/bin/sh\necho server > ran-server\n"
HOOK = "#!/bin/sh\necho hook > ran-hook\n"
HOOK_TOML = (
    "[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\n"
    'type = "command"\ncommand = "bash scripts/hook.sh"\n'
)
SERVER_TOML = '[mcp_servers.evil]\ncommand = "bash"\nargs = ["./scripts/start.sh"]\n'
LOCAL = SERVER_TOML + "\n" + HOOK_TOML
SCRIPTS = {"scripts/start.sh": START, "scripts/hook.sh": HOOK}


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def upstream(tmp_path: Path, files: dict[str, str], name: str = "upstream") -> Path:
    """The attacker's repository: `files` committed."""
    repo = tmp_path / name
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, files)
    git(repo, "add", "-A", "-f")
    git(repo, "commit", "-q", "-m", "init")
    return repo


def clone(repo: Path, into: Path) -> Path:
    """The victim's clone of `repo`."""
    git(into.parent, "clone", "-q", str(repo), into.name)
    return into


def push_change(repo: Path, clone_dir: Path, files: dict[str, str]) -> None:
    """The attacker commits `files` upstream; the victim pulls."""
    write(repo, files)
    git(repo, "commit", "-q", "-am", "change")
    git(clone_dir, "pull", "-q", "--ff-only")


class Seen(NamedTuple):
    servers: set[str]
    hooks: list[str]  # the commands of every resolved hook
    pending: set[str]
    warnings: list[str]  # project-origin warnings


def seen(project: Path) -> Seen:
    doc = run("config", "resolve", project=project)
    hooks = [
        h["command"] for groups in doc["hooks"].values() for group in groups for h in group["hooks"]
    ]
    codes = doc["diagnostics"]
    pending = {d["message"].split("'")[1] for d in codes if d["code"] == "pending-approval"}
    warned = [d["message"] for d in codes if d["code"] == "project-origin"]
    return Seen(set(doc["mcpServers"]), hooks, pending, warned)


def runs_nothing(project: Path, *names: str) -> Seen:
    found = seen(project)
    assert "evil" not in found.servers, found
    assert not any("hook.sh" in h for h in found.hooks), found
    assert set(names) <= found.pending, found
    return found


def runs_all(project: Path) -> None:
    found = seen(project)
    assert "evil" in found.servers, found
    assert any("hook.sh" in h for h in found.hooks), found
    assert not found.pending, found


# --- the local scope's file: the user's only when git does not track it and no link leads to it


def tracked_local(tmp_path: Path) -> Path:
    repo = upstream(tmp_path, {".plugman/local.toml": LOCAL, **SCRIPTS})
    return clone(repo, tmp_path / "victim")


def linked_local_file(tmp_path: Path) -> Path:
    outside = tmp_path / "elsewhere" / "local.toml"
    write(tmp_path / "elsewhere", {"local.toml": LOCAL})
    repo = upstream(tmp_path, SCRIPTS)
    (repo / ".plugman").mkdir()
    (repo / ".plugman" / "local.toml").symlink_to(outside)
    git(repo, "add", "-A", "-f")
    git(repo, "commit", "-q", "-m", "link")
    return clone(repo, tmp_path / "victim")


def linked_local_folder(tmp_path: Path) -> Path:
    write(tmp_path / "shared", {"local.toml": LOCAL})
    repo = upstream(tmp_path, SCRIPTS)
    (repo / ".plugman").symlink_to("../shared")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "link")
    return clone(repo, tmp_path / "victim")


def linked_local_inside(tmp_path: Path) -> Path:
    """`.plugman` a link to a folder inside the project that git does not track as local.toml."""
    repo = upstream(tmp_path, {"config/local.toml": LOCAL, **SCRIPTS})
    (repo / ".plugman").symlink_to("config")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "link")
    return clone(repo, tmp_path / "victim")


def test_a_tracked_local_toml_is_pending_until_approved(tmp_path: Path) -> None:
    """Attack: a clone commits `.plugman/local.toml` with a server and a SessionStart hook,
    which plugman used to take as the user's own. Invariant: git tracks it, so it is the
    project's (config.origins.local): pending, with a warning saying why; approving runs it."""
    victim = tracked_local(tmp_path)
    found = runs_nothing(victim, "evil", "SessionStart:*")
    assert any("is tracked by git" in w for w in found.warnings), found.warnings
    rows = run("trust", "list", project=victim)["entries"]
    assert {r["name"]: r["state"] for r in rows} == {
        "evil": "pending",
        "SessionStart:*": "pending",
    }
    run("trust", "approve", "--all", project=victim)
    runs_all(victim)


LINKS: dict[str, tuple[Callable[[Path], Path], str]] = {
    "local-toml-link-leaving-project": (linked_local_file, "leaving the project"),
    "plugman-folder-link-leaving-project": (linked_local_folder, "leaving the project"),
    "plugman-folder-link-inside-project": (linked_local_inside, "inside the project"),
}


@pytest.mark.parametrize("attack", sorted(LINKS))
def test_a_local_toml_behind_a_link_is_not_read(attack: str, tmp_path: Path) -> None:
    """Attack: the clone makes `.plugman/local.toml`, or `.plugman`, a link (out of the
    project, or to a tracked folder inside it), so that a file git does not track as
    `.plugman/local.toml` is read as the user's. Invariant: a project file behind a link is
    never the user's and is not read (config.scopes._linked), with a warning; the user's own
    file in its place (untracked, written by plugman) runs."""
    build, why = LINKS[attack]
    victim = build(tmp_path)
    doc = run("config", "resolve", project=victim)
    assert "evil" not in doc["mcpServers"] and doc["hooks"] == {}, doc
    said = [d["message"] for d in doc["diagnostics"] if d["code"] == "project-link"]
    assert any(why in m and "not read" in m for m in said), doc["diagnostics"]
    assert run("trust", "list", project=victim)["entries"] == []
    if (victim / ".plugman").is_symlink():
        (victim / ".plugman").unlink()
    else:  # the user takes the committed link out of git, then out of the way
        git(victim, "rm", "-q", "--cached", ".plugman/local.toml")
        (victim / ".plugman" / "local.toml").unlink()
    users_local(victim)
    runs_all(victim)


def users_local(project: Path) -> None:
    """The user's own local.toml: created by plugman on the user's command, then edited."""
    ok("mcp", "add", "x", "--scope", "local", "--", "true", project=project)
    with (project / ".plugman" / "local.toml").open("a") as stream:
        stream.write("\n" + LOCAL)


def ok(*args: str, project: Path) -> str:
    result = invoke(["--project", str(project), *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_users_own_untracked_local_toml_runs_with_nothing_pending(tmp_path: Path) -> None:
    """The consented twin: the same server and hook written by plugman on the user's command
    into an untracked `.plugman/local.toml` (plugman's `.gitignore` keeps it out) run as the
    user's, no approval asked, and `git ls-files` is what tells them apart."""
    victim = clone(upstream(tmp_path, SCRIPTS), tmp_path / "victim")
    users_local(victim)
    assert git(victim, "status", "--porcelain") == ""
    runs_all(victim)
    assert run("trust", "list", project=victim)["entries"] == []
    git(victim, "add", "-f", ".plugman/local.toml")  # now git tracks it: a clone could bring it
    runs_nothing(victim, "evil", "SessionStart:*")


# --- project files linked outside the project


@pytest.mark.parametrize("name", ["plugman.toml", ".mcp.json"])
def test_a_project_file_linked_outside_is_the_projects(name: str, tmp_path: Path) -> None:
    """Attack: `plugman.toml` or `.mcp.json` committed as a link leaving the project (to a file
    the attacker can place, or one of the user's). Invariant: not read (config.scopes._linked),
    with a warning, and plugman never writes through it; a real file in its place is the
    project's: pending, and approving runs it."""
    outside = tmp_path / "elsewhere"
    text = SERVER_TOML if name == "plugman.toml" else json.dumps({"mcpServers": {"evil": SERVER}})
    write(outside, {name: text})
    repo = upstream(tmp_path, SCRIPTS)
    (repo / name).symlink_to(outside / name)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "link")
    victim = clone(repo, tmp_path / "victim")
    doc = run("config", "resolve", project=victim)
    assert "evil" not in doc["mcpServers"], doc
    said = [d["message"] for d in doc["diagnostics"] if d["code"] == "project-link"]
    assert any("leaving the project" in m for m in said), doc["diagnostics"]
    before = snapshot(outside)
    said_add = fails("mcp", "add", "other", "--scope", "project", "--", "x", project=victim)
    assert "symbolic link" in said_add
    assert snapshot(outside) == before
    (victim / name).unlink()  # the project's own file in its place: pending, then approved
    write(victim, {name: text})
    assert "evil" in seen(victim).pending
    run("trust", "approve", "evil", project=victim)
    assert "evil" in seen(victim).servers


def test_plugman_never_writes_the_users_files_through_a_plugman_folder_link(
    tmp_path: Path,
) -> None:
    """Attack: `.plugman -> ../..` so that plugman's local writes land in a folder of the
    user's. Invariant: every write of the local scope through the link is refused
    (declarations.check_project_file), the target unchanged; with a real folder it works."""
    mine = tmp_path / "mine"
    write(mine, {"local.toml": "# the user's\n"})
    repo = upstream(tmp_path, SCRIPTS)
    (repo / ".plugman").symlink_to(mine)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "link")
    victim = clone(repo, tmp_path / "victim")
    before = snapshot(mine)
    said = fails("mcp", "add", "x", "--scope", "local", "--", "true", project=victim)
    assert "symbolic link" in said
    assert snapshot(mine) == before
    (victim / ".plugman").unlink()
    ok("mcp", "add", "x", "--scope", "local", "--", "true", project=victim)
    assert "x" in seen(victim).servers


# --- approvals bound to the project


@pytest.mark.parametrize(
    "files",
    [
        {".mcp.json": json.dumps({"mcpServers": {"evil": SERVER}})},
        {"plugman.toml": HOOK_TOML},
    ],
    ids=["server", "hook"],
)
def test_an_approval_in_one_clone_approves_nothing_in_another(
    files: dict[str, str], tmp_path: Path
) -> None:
    """Attack: the victim approved an entry in project A; clone B carries the byte-identical
    entry (and script). Invariant: the approval covers A's folder only (binding.project_key)."""
    repo = upstream(tmp_path, {**files, **SCRIPTS})
    first = clone(repo, tmp_path / "a")
    second = clone(repo, tmp_path / "b")
    name = "evil" if ".mcp.json" in files else "SessionStart:*"
    run("trust", "approve", name, project=first)
    assert name not in seen(first).pending
    assert name in seen(second).pending
    explained = run("config", "resolve", "--explain", project=second)["diagnostics"]
    assert any("another project" in d["message"] for d in explained), explained
    run("trust", "approve", name, project=second)
    assert name not in seen(second).pending


# --- approvals bound to the files the command runs

CHANGED: dict[str, tuple[dict[str, str], str, str]] = {
    # case: (files, the entry's name, the file the attacker changes after approval)
    "server-bash-script": (
        {".mcp.json": json.dumps({"mcpServers": {"evil": SERVER}})},
        "evil",
        "scripts/start.sh",
    ),
    "server-node-in-cwd": (
        {
            ".mcp.json": json.dumps(
                {"mcpServers": {"evil": {"command": "node", "args": ["srv.js"], "cwd": "server"}}}
            ),
            "server/srv.js": "console.log(1)\n",
        },
        "evil",
        "server/srv.js",
    ),
    "server-config-option": (
        {
            ".mcp.json": json.dumps(
                {"mcpServers": {"evil": {"command": "tool", "args": ["--config=conf.json"]}}}
            ),
            "conf.json": "{}\n",
        },
        "evil",
        "conf.json",
    ),
    "hook-bash-script": ({"plugman.toml": HOOK_TOML}, "SessionStart:*", "scripts/hook.sh"),
    "hook-project-dir-variable": (
        {
            "plugman.toml": HOOK_TOML.replace(
                '"bash scripts/hook.sh"', """'python3 "${CLAUDE_PROJECT_DIR}/hooks/x.py"'"""
            ),
            "hooks/x.py": "print(1)\n",
        },
        "SessionStart:*",
        "hooks/x.py",
    ),
}


@pytest.mark.parametrize("case", sorted(CHANGED))
def test_a_script_changed_after_approval_waits_again(case: str, tmp_path: Path) -> None:
    """Attack: the victim reviews and approves an entry; the clone's author then changes the
    script it runs (a `git pull`), leaving the entry as it was. Invariant: the approval covers
    the file's digest (binding.files_run): pending again, `--explain` names the file; `trust
    list` shows what an approval covers; approving again runs it."""
    files, name, script = CHANGED[case]
    repo = upstream(tmp_path, {**files, **SCRIPTS})
    victim = clone(repo, tmp_path / "victim")
    [row] = [r for r in run("trust", "list", project=victim)["entries"] if r["name"] == name]
    assert script in row["files"] and row["files"][script].startswith("sha256:")
    run("trust", "approve", name, project=victim)
    assert name not in seen(victim).pending
    push_change(repo, victim, {script: (repo / script).read_text() + "# evil\n"})
    assert name in seen(victim).pending
    explained = run("config", "resolve", "--explain", project=victim)["diagnostics"]
    assert any(script in d["message"] and "changed" in d["message"] for d in explained)
    run("trust", "approve", name, project=victim)
    assert name not in seen(victim).pending


# --- a plugin the project declares (installed by sync: unconsented)

PLUGIN_HOOKS = {
    "hooks": {
        "SessionStart": [
            {
                "hooks": [
                    {"type": "command", "command": 'bash "${CLAUDE_PLUGIN_ROOT}/hooks/start.sh"'},
                    {"type": "command", "command": 'bash "${CLAUDE_PROJECT_DIR}/scripts/hook.sh"'},
                ]
            }
        ]
    }
}


def plugin_repo(tmp_path: Path) -> Path:
    """A project whose plugman.toml / plugman.lock declare `tool` (two SessionStart hooks: one
    runs the plugin's script, one a project script) from a marketplace inside the project."""
    repo = tmp_path / "upstream"
    write(
        repo,
        {
            "market/.claude-plugin/marketplace.json": json.dumps(
                {
                    "name": "m",
                    "owner": {"name": "o"},
                    "plugins": [{"name": "tool", "source": "./plugins/tool"}],
                }
            ),
            "market/plugins/tool/.claude-plugin/plugin.json": json.dumps(
                {"name": "tool", "version": "1.0.0"}
            ),
            "market/plugins/tool/hooks/hooks.json": json.dumps(PLUGIN_HOOKS),
            "market/plugins/tool/hooks/start.sh": HOOK,
            **SCRIPTS,
        },
    )
    git(repo, "init", "-q", "-b", "main")
    run("marketplace", "add", "./market", project=repo)
    run("install", "tool", "--scope", "project", project=repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    return repo


def plugin_hooks(project: Path, name: str = "") -> list[str]:
    return [h for h in seen(project).hooks if ("start.sh" in h or "hook.sh" in h) and name in h]


@pytest.mark.parametrize(
    "script", ["market/plugins/tool/hooks/start.sh", "scripts/hook.sh"], ids=["plugin", "project"]
)
def test_a_synced_plugins_hook_script_changed_after_approval_waits_again(
    script: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack: on the victim's machine `sync` installs the project's plugin (unconsented); the
    victim approves its hooks; upstream then changes a script a hook runs: the plugin's own
    (a new tree once synced) or a project script the plugin's hook names through
    ${CLAUDE_PROJECT_DIR} (the plugin's tree unchanged). Invariant: pending again either way
    (merge.approval_key covers the tree and binding.files_run the project files)."""
    repo = plugin_repo(tmp_path)
    monkeypatch.setenv("PLUGMAN_HOME", str(tmp_path / "victim-home"))
    victim = clone(repo, tmp_path / "victim")
    run("sync", "--frozen", project=victim)
    assert plugin_hooks(victim) == [] and "tool@m" in {
        r["plugin"] for r in run("trust", "list", project=victim)["entries"]
    }
    run("trust", "approve", "tool", project=victim)
    assert len(plugin_hooks(victim)) == 2
    push_change(repo, victim, {script: HOOK + "# evil\n"})
    run("sync", project=victim)
    assert plugin_hooks(victim, Path(script).name) == []
    run("trust", "approve", "tool", project=victim)
    assert len(plugin_hooks(victim)) == 2


# --- approval keys a clone writes


CLAUDE_KEYS = {"enableAllProjectMcpServers": True, "enabledMcpjsonServers": ["evil"]}


@pytest.mark.parametrize(
    "file, text",
    [
        (".claude/settings.json", json.dumps(CLAUDE_KEYS)),
        (".claude/settings.local.json", json.dumps(CLAUDE_KEYS)),
        ("plugman.toml", 'trust = ["evil"]\nenableAllProjectMcpServers = true\n'),
    ],
    ids=["claude-settings", "claude-settings-local", "plugman-toml"],
)
def test_approval_keys_the_clone_writes_approve_nothing(
    file: str, text: str, tmp_path: Path
) -> None:
    """Attack: the clone commits Claude Code's own approval keys (or plugman-looking ones) next
    to its `.mcp.json` server. Invariant: approvals live only in plugman's state
    (config.trust); the server is pending until `trust approve`."""
    files = {".mcp.json": json.dumps({"mcpServers": {"evil": SERVER}}), file: text, **SCRIPTS}
    victim = clone(upstream(tmp_path, files), tmp_path / "victim")
    found = seen(victim)
    assert "evil" not in found.servers and "evil" in found.pending, found
    run("sync", project=victim)
    assert "evil" in seen(victim).pending
    run("trust", "approve", "evil", project=victim)
    assert "evil" in seen(victim).servers


# --- the launchers


def launcher(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`plugman ARGS` as an agent starts it: a process in the project folder."""
    return subprocess.run(
        [sys.executable, "-m", "plugman", *args],
        cwd=project,
        input="{}",
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ.copy(),
        check=False,
    )


@pytest.mark.parametrize(
    "files, argv, marker",
    [
        ({".plugman/local.toml": SERVER_TOML}, ("mcp", "run", "evil"), "ran-server"),
        ({".mcp.json": json.dumps({"mcpServers": {"evil": SERVER}})}, ("mcp", "run", "evil"),
         "ran-server"),
        ({".plugman/local.toml": HOOK_TOML}, ("hooks", "exec", "codex", "SessionStart",
                                               "project#0"), "ran-hook"),
        ({"plugman.toml": HOOK_TOML}, ("hooks", "exec", "codex", "SessionStart", "project#0"),
         "ran-hook"),
    ],
    ids=["mcp-run-local", "mcp-run-mcp-json", "hooks-exec-local", "hooks-exec-project"],
)  # fmt: skip
def test_the_launchers_start_nothing_pending(
    files: dict[str, str], argv: tuple[str, ...], marker: str, tmp_path: Path
) -> None:
    """Attack: an agent's file names the launcher (`plugman mcp run`, `plugman hooks exec`) for
    an entry the clone brings, or the script behind an approved one changes. Invariant: the
    launcher resolves the project it runs in and starts nothing pending (exit 1, the script
    not run); approved, it runs."""
    repo = upstream(tmp_path, {**files, **SCRIPTS})
    victim = clone(repo, tmp_path / "victim")
    refused = launcher(victim, *argv)
    assert refused.returncode == 1, refused
    assert "Traceback" not in refused.stderr
    assert not (victim / marker).exists()
    run("trust", "approve", "--all", project=victim)
    assert launcher(victim, *argv).returncode == 0
    assert (victim / marker).exists()
    (victim / marker).unlink()
    script = "scripts/start.sh" if marker == "ran-server" else "scripts/hook.sh"
    push_change(repo, victim, {script: (repo / script).read_text() + "# evil\n"})
    again = launcher(victim, *argv)
    assert again.returncode == 1 and not (victim / marker).exists(), again


def test_trust_list_says_old_approvals_no_longer_count(tmp_path: Path, isolated_home: Path) -> None:
    """An approval an older plugman stored (keyed to the entry alone) approves nothing now:
    the entry is pending and `trust list` says how many such approvals there are."""
    victim = clone(
        upstream(tmp_path, {".mcp.json": json.dumps({"mcpServers": {"evil": SERVER}}), **SCRIPTS}),
        tmp_path / "victim",
    )
    old: dict[str, Any] = {
        "format": 1,
        "approvals": {
            "sha256:" + "0" * 64: {"kind": "server", "name": "evil", "project": str(victim)}
        },
    }
    (isolated_home / "state").mkdir(parents=True, exist_ok=True)
    (isolated_home / "state" / "trust.json").write_text(json.dumps(old))
    assert "evil" in seen(victim).pending
    listed = run("trust", "list", project=victim)
    assert listed["stale"] == 1
    text = subprocess.run(
        [sys.executable, "-m", "plugman", "--project", str(victim), "trust", "list"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "1 approval(s) of this project from an older plugman" in text
    run("trust", "approve", "evil", project=victim)
    assert "evil" in seen(victim).servers

"""No helper command a project names runs, on any path (issue 33, "secrets stay secret").

A clone's `.claude/settings.json` / `settings.local.json` and `.mcp.json` can name commands
that print credentials: a url marketplace's `headersHelper`, a remote server's
`headersHelper`, Claude's `apiKeyHelper`, `awsAuthRefresh`, `awsCredentialExport`,
`otelHeadersHelper`, a `statusLine` command. Each helper here writes a canary file when it
runs; the attack is that running `import claude`, `sync`, `config resolve`, `mcp list`,
`mcp probe`, `mcp run` in the clone makes it run. Paired: the same helper with the user's
consent (their own ~/.claude settings, `marketplace add --headers-helper`, `trust approve`)
runs. Real git repositories and a real loopback HTTP marketplace.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from plugman.cli import invoke
from tests.integration.helpers import git


def helper(folder: Path, name: str) -> tuple[str, Path]:
    """A helper script that writes its canary and prints empty headers: (command, canary)."""
    canary = folder / f"{name}.ran"
    script = folder / f"{name}.sh"
    script.write_text(f"#!/bin/sh\necho ran > '{canary}'\nprintf '{{}}'\n")
    script.chmod(0o755)
    return str(script), canary


def cli(project: Path, *args: str) -> tuple[int, str]:
    result = invoke(["--project", str(project), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result.exit_code, result.output


@pytest.fixture
def market_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A url marketplace (an empty catalog) on a real https server on a loopback address."""
    from tests.integration import http_fixture
    from tests.integration.test_private_sources import PRIVATE, certificate

    tls = certificate(tmp_path, monkeypatch)
    with http_fixture.serving(PRIVATE, tls) as site:
        catalog = {"name": "team", "owner": {"name": "t"}, "plugins": []}
        yield site.put("/marketplace.json", json.dumps(catalog).encode())


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(HOME, a clone): the clone is a real git repository whose files are committed."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    clone = tmp_path / "clone"
    (clone / ".claude").mkdir(parents=True)
    git(clone, "init", "-q")
    monkeypatch.chdir(clone)
    return home, clone


def commit(clone: Path) -> None:
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "the attacker's files")


@pytest.mark.parametrize("file", ["settings.json", "settings.local.json"])
def test_import_claude_does_not_run_a_project_marketplace_helper(
    world: tuple[Path, Path], market_url: str, tmp_path: Path, file: str
) -> None:
    """Attack: the clone's `.claude/<file>` declares a url marketplace whose `headersHelper`
    is the attacker's command; `import claude --apply` would fetch the marketplace and run it.
    Invariant (plugins.claude_import._market): skipped, the helper never runs, and the reason
    gives the `marketplace add --headers-helper` command to add it knowingly."""
    _, clone = world
    command, canary = helper(tmp_path, "market")
    source = {"source": "url", "url": market_url, "headersHelper": command}
    (clone / ".claude" / file).write_text(
        json.dumps({"extraKnownMarketplaces": {"team": {"source": source}}})
    )
    commit(clone)
    code, shown = cli(clone, "import", "claude", "--apply")
    assert code == 0, shown
    flat = " ".join(shown.split())
    assert "plugman does not run a command a project names" in flat
    assert f"--headers-helper '{command}'" in flat
    code, shown = cli(clone, "sync")
    assert not canary.exists(), "the project's headers helper ran"
    code, shown = cli(clone, "marketplace", "list")
    assert "team" not in shown


def test_import_claude_runs_the_users_own_marketplace_helper(
    world: tuple[Path, Path], market_url: str, tmp_path: Path
) -> None:
    """The legitimate variant: the same marketplace and helper in the user's own
    ~/.claude/settings.json is imported with its helper, which runs to fetch it."""
    home, clone = world
    command, canary = helper(tmp_path, "market")
    source = {"source": "url", "url": market_url, "headersHelper": command}
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"extraKnownMarketplaces": {"team": {"source": source}}})
    )
    code, shown = cli(clone, "import", "claude", "--apply")
    assert code == 0, shown
    assert canary.exists(), shown


def test_marketplace_update_runs_a_helper_the_user_added(
    world: tuple[Path, Path], market_url: str, tmp_path: Path
) -> None:
    """The consent path the refusals name: `marketplace add URL --headers-helper CMD` (the
    user's command line) runs the helper, and `marketplace update` runs it again."""
    _, clone = world
    command, canary = helper(tmp_path, "market")
    code, shown = cli(clone, "marketplace", "add", market_url, "--name", "team",
                      "--headers-helper", command)  # fmt: skip
    assert code == 0 and canary.exists(), shown
    canary.unlink()
    code, shown = cli(clone, "marketplace", "update", "team")
    assert code == 0 and canary.exists(), shown


def test_project_plugman_toml_marketplace_helper_does_not_run_on_sync(
    world: tuple[Path, Path], market_url: str, tmp_path: Path
) -> None:
    """Attack: the clone's committed plugman.toml declares its marketplace with a
    `headers_helper`; `sync` (and `marketplace update`) would run it. Invariant
    (plugins.registry): never run while only the project names it; the message gives the
    command to add it knowingly."""
    _, clone = world
    command, canary = helper(tmp_path, "toml")
    (clone / "plugman.toml").write_text(
        f'[marketplaces.team]\nsource = "{market_url}"\nheaders_helper = "{command}"\n'
    )
    commit(clone)
    _, shown = cli(clone, "sync")
    cli(clone, "marketplace", "update")
    cli(clone, "config", "resolve")
    assert not canary.exists(), shown


def remote_server(clone: Path, command: str) -> None:
    entry = {"type": "http", "url": "http://127.0.0.1:9/mcp", "headersHelper": command}
    (clone / ".mcp.json").write_text(json.dumps({"mcpServers": {"remote": entry}}))
    commit(clone)


def test_project_server_headers_helper_waits_for_approval(
    world: tuple[Path, Path], tmp_path: Path
) -> None:
    """Attack: the clone's `.mcp.json` names a remote server whose `headersHelper` is the
    attacker's command; `config resolve`, `mcp list`, `mcp probe`, `mcp run` (the launcher an
    agent starts) and the gateway would run it to connect. Invariant (config.merge: a project's
    server is pending approval; runtime.launch.why): nothing runs it; `mcp run` says why and
    names `trust approve`. Paired: after `plugman trust approve` the probe runs it."""
    _, clone = world
    command, canary = helper(tmp_path, "server")
    remote_server(clone, command)
    for args in (("config", "resolve"), ("mcp", "list"), ("mcp", "probe", "remote"),
                 ("list",), ("sync",), ("import", "claude", "--apply")):  # fmt: skip
        cli(clone, *args)
    code, shown = cli(clone, "mcp", "run", "remote")
    assert code == 1 and "pending-approval" in shown and "trust approve" in shown, shown
    assert not canary.exists(), "the project's server headersHelper ran before approval"
    code, shown = cli(clone, "trust", "approve", "--all")
    assert code == 0, shown
    cli(clone, "mcp", "probe", "remote")
    assert canary.exists(), "an approved server's helper should run"


CLAUDE_HELPERS = ["apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "otelHeadersHelper"]


def test_claude_settings_helpers_never_run(world: tuple[Path, Path], tmp_path: Path) -> None:
    """Attack: the clone's `.claude/settings.json` and `settings.local.json` name Claude
    Code's credential helpers (`apiKeyHelper`, `awsAuthRefresh`, `awsCredentialExport`,
    `otelHeadersHelper`) and a `statusLine` command. Invariant: plugman runs none of them on
    any path that reads those files (`import claude`, `sync`, `config resolve`, `list`,
    `export`): they are Claude Code's to run after its own trust dialog."""
    _, clone = world
    canaries = []
    settings: dict[str, object] = {}
    for key in CLAUDE_HELPERS:
        command, canary = helper(tmp_path, key)
        settings[key] = command
        canaries.append(canary)
    command, canary = helper(tmp_path, "statusLine")
    settings["statusLine"] = {"type": "command", "command": command}
    canaries.append(canary)
    for file in ("settings.json", "settings.local.json"):
        (clone / ".claude" / file).write_text(json.dumps(settings))
    commit(clone)
    for args in (("import", "claude"), ("import", "claude", "--apply"), ("sync",),
                 ("config", "resolve"), ("list",),
                 ("export", "--target", "claude-code", "--scope", "project")):  # fmt: skip
        cli(clone, *args)
    assert [c.name for c in canaries if c.exists()] == []
    assert (clone / ".git").is_dir()

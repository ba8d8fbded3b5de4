"""Install reads what Claude Code 2.1.328 reads; `validate` stays the strict lint.

A bad marketplace entry is skipped with a warning naming it; a broken component is left out
and never activated; reserved plugin names warn; reserved marketplace names come only from
GitHub's `anthropics` organization; and the defects a new user hit on the way.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from plugman.cli import invoke as plugman_invoke
from plugman.cli.runner import Result
from tests.integration.helpers import run


def invoke(*args: str) -> Result:
    result = plugman_invoke(list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def plugin(folder: Path, name: str | None = "demo", **manifest: Any) -> Path:
    """A plugin with one skill (and a plugin.json unless `name` is None)."""
    skill = folder / "skills" / "hello"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: hello\ndescription: Say hello.\n---\nHello.\n")
    if name is not None:
        (folder / ".claude-plugin").mkdir()
        body = {"name": name, "version": "1.0.0", **manifest}
        (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps(body))
    return folder


def marketplace(folder: Path, entries: list[dict[str, Any]], **top: Any) -> Path:
    (folder / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    doc = {"name": "mkt", "owner": {"name": "me"}, "plugins": entries, **top}
    (folder / ".claude-plugin" / "marketplace.json").write_text(json.dumps(doc))
    return folder


def test_a_bad_entry_is_skipped_with_a_warning_and_the_rest_installs(tmp_path: Path) -> None:
    plugin(tmp_path / "m" / "good", "good")
    entries = [
        {"name": "good", "source": "./good"},
        {"name": "nosource"},
        {"name": "weird", "source": {"source": "sftp", "url": "x"}},
    ]
    market = marketplace(tmp_path / "m", entries)
    assert invoke("validate", str(market)).exit_code == 1  # the lint still fails it
    added = invoke("marketplace", "add", str(market))
    assert added.exit_code == 0, added.output
    assert "plugin 'nosource' is skipped" in added.stderr
    assert "plugin 'weird' is skipped" in added.stderr
    assert invoke("install", "good@mkt").exit_code == 0
    refused = invoke("install", "weird@mkt")
    assert refused.exit_code == 1
    assert "its marketplace entry is invalid" in refused.stderr


def test_a_missing_owner_refuses_the_marketplace(tmp_path: Path) -> None:
    """Claude Code 2.1.328 refuses it too (tests/claude_rules/rules.json, market-owner-missing)."""
    plugin(tmp_path / "m" / "good", "good")
    market = marketplace(tmp_path / "m", [{"name": "good", "source": "./good"}])
    doc = json.loads((market / ".claude-plugin" / "marketplace.json").read_text())
    del doc["owner"]
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(doc))
    added = invoke("marketplace", "add", str(market))
    assert added.exit_code == 1, added.output
    assert "marketplace 'mkt' is invalid" in added.stderr
    assert "'owner'" in added.stderr


def test_a_reserved_plugin_name_warns_at_install_and_fails_validate(tmp_path: Path) -> None:
    folder = plugin(tmp_path / "claude-helper", "claude-helper")
    assert invoke("validate", str(folder)).exit_code == 1
    installed = invoke("install", str(folder))
    assert installed.exit_code == 0, installed.output
    assert "reserved for Anthropic's own plugins" in installed.stderr
    assert "installed claude-helper@direct" in installed.stdout


def test_the_official_marketplace_passes_its_flag_to_the_planner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    github = tmp_path / "github"
    repo = github / "anthropics" / "claude-plugins-official.git"
    plugin(repo / "plugins" / "claude-setup", "claude-setup")
    entries = [{"name": "claude-setup", "source": "./plugins/claude-setup"}]
    marketplace(repo, entries, name="claude-plugins-official")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "m"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True
        )
    monkeypatch.setenv("PLUGMAN_GITHUB_URL", github.as_uri())
    assert invoke("marketplace", "add", "anthropics/claude-plugins-official").exit_code == 0
    installed = invoke("install", "claude-setup@claude-plugins-official")
    assert installed.exit_code == 0, installed.output
    assert "reserved" not in installed.stderr  # Anthropic's own plugin, from Anthropic's GitHub


def test_a_broken_hooks_file_is_left_out_and_never_activated(tmp_path: Path) -> None:
    folder = plugin(tmp_path / "p", "hooked")
    (folder / "hooks").mkdir()
    (folder / "hooks" / "hooks.json").write_text("[]")  # financial-services-plugins ships this
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": {"s": {"command": "true"}}}))
    installed = invoke("install", str(folder))
    assert installed.exit_code == 0, installed.output
    assert "hooks/hooks.json is left out" in installed.stderr
    listed = run("list")["plugins"][0]
    assert listed["components"]["hooks"] == []
    assert listed["components"]["skills"] == ["hello"]
    assert run("hooks", "list")["hooks"] == []
    assert "plugin:hooked:s" in run("config", "resolve")["mcpServers"]


def test_a_broken_mcp_file_is_left_out(tmp_path: Path) -> None:
    folder = plugin(tmp_path / "p", "serverless")
    (folder / ".mcp.json").write_text('{"mcpServers": {"s": {"command": 7}}}')
    installed = invoke("install", str(folder))
    assert installed.exit_code == 0, installed.output
    assert ".mcp.json is left out" in installed.stderr
    assert run("config", "resolve")["mcpServers"] == {}


def test_a_manifest_error_still_refuses_the_plugin(tmp_path: Path) -> None:
    folder = plugin(tmp_path / "p", "bad", skills="../outside")
    refused = invoke("install", str(folder))
    assert refused.exit_code == 1
    assert "leaves the plugin root" in refused.stderr
    assert ".staging" not in refused.stderr  # paths are shown relative to the plugin


def test_gemini_extension_servers_become_valid_entries(tmp_path: Path) -> None:
    folder = tmp_path / "ext"
    folder.mkdir()
    servers = {
        "remote": {"httpUrl": "https://example.com/mcp", "headers": {"X-Key": "$API_KEY"}},
        "local": {"command": "node", "args": ["${extensionPath}${/}run.js"], "env": {"A": "$HOME"}},
    }
    doc = {"name": "ext", "version": "1.0.0", "mcpServers": servers}
    (folder / "gemini-extension.json").write_text(json.dumps(doc))
    assert invoke("install", str(folder)).exit_code == 0
    resolved = run("config", "resolve", "--show-secrets")["mcpServers"]
    remote = resolved["plugin:ext:remote"]
    assert (remote["type"], remote["url"]) == ("http", "https://example.com/mcp")
    assert "httpUrl" not in remote
    local = resolved["plugin:ext:local"]
    assert local["args"][0].endswith("/run.js") and "${" not in local["args"][0]
    exported = invoke("config", "resolve", "--target", "claude-code")
    assert exported.exit_code == 0
    entry = json.loads(exported.stdout)["mcpServers"]["plugin_ext_remote"]
    assert entry["headers"] == {"X-Key": "${API_KEY}"}  # the reference, in Claude's syntax


def test_a_local_archive_installs(tmp_path: Path) -> None:
    folder = plugin(tmp_path / "src", "zipped")
    archive = tmp_path / "zipped.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                out.write(file, file.relative_to(folder).as_posix())
    installed = invoke("install", str(archive))
    assert installed.exit_code == 0, installed.output
    assert "installed zipped@direct 1.0.0" in installed.stdout


def test_a_folder_without_a_manifest_installs_under_its_own_name(tmp_path: Path) -> None:
    folder = plugin(tmp_path / "my-skills", name=None)
    installed = invoke("install", str(folder))
    assert installed.exit_code == 0, installed.output
    assert "installed my-skills@direct" in installed.stdout
    assert "tree" not in installed.stdout


def test_marketplace_add_name_is_checked(tmp_path: Path) -> None:
    plugin(tmp_path / "m" / "good", "good")
    market = marketplace(tmp_path / "m", [{"name": "good", "source": "./good"}])
    reserved = invoke("marketplace", "add", str(market), "--name", "claude-plugins-official")
    assert reserved.exit_code == 1
    assert "reserved for official Anthropic marketplaces" in reserved.stderr
    unsafe = invoke("marketplace", "add", str(market), "--name", "../up")
    assert unsafe.exit_code == 1
    assert "path separator" in unsafe.stderr
    assert invoke("marketplace", "add", str(market), "--name", "team").exit_code == 0
    other = shutil.copytree(market, tmp_path / "other")
    replaced = invoke("marketplace", "add", str(other), "--name", "team")
    assert replaced.exit_code == 1
    assert "already registered" in replaced.stderr
    assert invoke("marketplace", "add", str(market), "--name", "team").exit_code == 0  # again
    listed = run("marketplace", "list")["marketplaces"]
    assert [(m["name"], m["source"]) for m in listed] == [("team", str(market.resolve()))]


def test_an_invalid_marketplace_names_itself_not_a_placeholder(tmp_path: Path) -> None:
    market = tmp_path / "m"
    (market / ".claude-plugin").mkdir(parents=True)
    (market / ".claude-plugin" / "marketplace.json").write_text('{"name": "mkt", "plugins": 3}')
    refused = invoke("marketplace", "add", str(market))
    assert refused.exit_code == 1
    assert "marketplace 'mkt' is invalid" in refused.stderr
    assert "'?'" not in refused.stderr and ":None" not in refused.stderr


def test_a_missing_local_plugin_is_a_usage_error(tmp_path: Path) -> None:
    for spec in (str(tmp_path / "gone.zip"), str(tmp_path / "gone")):
        missing = invoke("install", spec)
        assert missing.exit_code == 2
        assert "no such folder or archive" in missing.stderr


def test_catalog_warnings_name_the_marketplace_as_registered(tmp_path: Path) -> None:
    plugin(tmp_path / "m" / "good", "good")
    market = marketplace(tmp_path / "m", [{"name": "good", "source": "./good"}, {"name": "x"}])
    added = invoke("marketplace", "add", str(market), "--name", "team")
    assert added.exit_code == 0, added.output
    assert "warning: marketplace 'team': plugin 'x' is skipped" in added.stderr


def test_one_broken_marketplace_does_not_block_installs_from_the_others(tmp_path: Path) -> None:
    plugin(tmp_path / "m" / "good", "good")
    market = marketplace(tmp_path / "m", [{"name": "good", "source": "./good"}])
    plugin(tmp_path / "b" / "other", "other")
    broken = marketplace(tmp_path / "b", [{"name": "other", "source": "./other"}], name="broken")
    assert invoke("marketplace", "add", str(market)).exit_code == 0
    assert invoke("marketplace", "add", str(broken)).exit_code == 0
    (broken / ".claude-plugin" / "marketplace.json").write_text("{ not json")  # upstream broke
    installed = invoke("install", "good")
    assert installed.exit_code == 0, installed.output
    assert "marketplace 'broken' is invalid" in installed.stderr  # said, as a warning
    named = invoke("install", "other@broken")
    assert named.exit_code == 1
    assert "marketplace 'broken' is invalid" in named.stderr

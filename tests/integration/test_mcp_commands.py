"""`plugman mcp add|add-json|remove|list|get` and `plugman connectors sync` over real files."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from plugman.cli import invoke as plugman_invoke
from plugman.config import declarations, scopes
from plugman.core.paths import Paths
from plugman.core.state import record_path
from tests.integration.helpers import serving, snapshot

USER_TOML = '# my plugman settings\n[plugins]\n"a@b" = "*"  # pinned\n'
MCP_JSON = (
    '{\n    "$schema": "https://example.com/mcp.schema.json",\n    "mcpServers": {\n'
    '        "other": {\n            "command": "other-server"\n        }\n    }\n}'
)


def invoke(project: Path, *args: str) -> Any:
    return plugman_invoke(["--project", str(project), *args])


def ok(project: Path, *args: str) -> Any:
    """Run with --json (before any `--`); the parsed document."""
    result = invoke(project, *args[:2], "--json", *args[2:])
    assert result.exit_code == 0, (args, result.output, result.exception)
    return json.loads(result.stdout)


def refused(project: Path, *args: str, code: int) -> str:
    result = invoke(project, *args)
    assert result.exit_code == code, (args, result.output, result.exception)
    assert "error:" in result.output and "hint:" in result.output, result.output
    return str(result.output)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def paths(project: Path, isolated_home: Path) -> Paths:
    return Paths.from_env(project=project)


def test_user_scope_add_remove_restores_toml_bytes(project: Path, paths: Paths) -> None:
    paths.user_config.parent.mkdir(parents=True)
    paths.user_config.write_text(USER_TOML)
    ok(project, "mcp", "add", "fs", "-s", "user", "-e", "GH_TOKEN=t", "--", "npx", "-y", "fs")
    ok(project, "mcp", "add", "web", "https://mcp.example.com/mcp", "-H", "X-Key: v", "-s", "user")
    text = paths.user_config.read_text()
    assert text.startswith(USER_TOML) and "[mcp_servers.fs]" in text
    assert declarations.entries(paths.user_config, "mcp_servers") == {
        "fs": {"type": "stdio", "command": "npx", "args": ["-y", "fs"], "env": {"GH_TOKEN": "t"}},
        "web": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"X-Key": "v"}},
    }
    ok(project, "mcp", "remove", "fs")
    done = ok(project, "mcp", "remove", "web", "--scope", "user")
    assert done["action"] == "removed" and done["scope"] == "user"
    assert paths.user_config.read_text() == USER_TOML
    assert not record_path(paths, "user").exists()


def test_local_scope_is_the_default_and_leaves_nothing(project: Path, paths: Paths) -> None:
    before = snapshot(project)
    added = ok(project, "mcp", "add", "web", "https://mcp.example.com/mcp")
    assert added["scope"] == "local" and added["file"] == str(paths.local_config)
    assert "web" in declarations.entries(paths.local_config, "mcp_servers")
    ok(project, "mcp", "remove", "web")
    assert snapshot(project) == before
    assert not record_path(paths, "local").exists()


def test_project_scope_keeps_an_existing_file(project: Path, paths: Paths) -> None:
    paths.project_mcp.write_text(MCP_JSON)
    ok(project, "mcp", "add", "tool", "-s", "project", "--", "run-tool", "--safe")
    doc = json.loads(paths.project_mcp.read_text())
    assert list(doc) == ["$schema", "mcpServers"]
    assert list(doc["mcpServers"]) == ["other", "tool"]
    assert doc["mcpServers"]["tool"] == {"type": "stdio", "command": "run-tool", "args": ["--safe"]}
    assert '\n    "mcpServers"' in paths.project_mcp.read_text()  # its own indentation
    ok(project, "mcp", "remove", "tool")
    assert paths.project_mcp.read_text() == MCP_JSON  # the exact bytes from before
    assert not record_path(paths, "project").exists()


def test_project_scope_creates_and_deletes_the_file(project: Path, paths: Paths) -> None:
    ok(project, "mcp", "add", "tool", "-s", "project", "--", "run-tool")
    assert paths.project_mcp.read_text().startswith('{\n  "mcpServers": {\n    "tool"')
    ok(project, "mcp", "remove", "tool", "-s", "project")
    assert not paths.project_mcp.exists()
    assert snapshot(project) == {}


def test_project_file_edited_since_keeps_the_edit(project: Path, paths: Paths) -> None:
    ok(project, "mcp", "add", "tool", "-s", "project", "--", "run-tool")
    doc = json.loads(paths.project_mcp.read_text())
    doc["mcpServers"]["mine"] = {"command": "mine"}
    paths.project_mcp.write_text(json.dumps(doc))
    ok(project, "mcp", "remove", "tool")
    left = json.loads(paths.project_mcp.read_text())
    assert left == {"mcpServers": {"mine": {"command": "mine"}}}


def test_options_after_double_dash_belong_to_the_command(project: Path) -> None:
    argv = ["npx", "-y", "@x/server", "--flag", "-e", "X=1", "--scope", "user", "--", "z"]
    added = ok(project, "mcp", "add", "fs", "-e", "A=1", "--", *argv)
    assert added["scope"] == "local"
    expected = {"type": "stdio", "command": "npx", "args": argv[1:], "env": {"A": "1"}}
    assert added["entry"] == expected
    assert ok(project, "mcp", "add", "bare", "my-server")["entry"]["command"] == "my-server"
    sse = ok(project, "mcp", "add", "events", "https://e.example.com/sse", "-t", "sse")
    assert sse["entry"] == {"type": "sse", "url": "https://e.example.com/sse"}


REFUSALS = [
    (["mcp", "add", "bad.name", "--", "x"], 2, "invalid MCP server name"),
    (["mcp", "add", "workspace", "--", "x"], 2, "reserved"),
    (["mcp", "add", "Claude Preview", "https://a.example.com"], 2, "invalid MCP server name"),
    (["mcp", "add", "dup", "--", "x"], 1, "MCP server dup already exists in the local scope"),
    (["mcp", "add", "x", "-e", "NOEQUALS", "--", "y"], 2, "-e/--env 'NOEQUALS'"),
    (["mcp", "add", "x", "https://a.example.com", "-H", "nocolon"], 2, "-H/--header 'nocolon'"),
    (["mcp", "add", "x", "https://a.example.com", "-t", "stdio"], 2, "--transport stdio"),
    (["mcp", "add", "x", "https://a.example.com", "-e", "A=1"], 2, "-e/--env is for stdio"),
    (["mcp", "add", "x", "-H", "A: 1", "--", "cmd"], 2, "-H/--header is for remote"),
    (["mcp", "add", "x", "-t", "http", "--", "cmd"], 2, "not both"),
    (["mcp", "add", "x", "-s", "global", "--", "cmd"], 2, "'global' is not one of"),
    (["mcp", "add-json", "x", '{"type": "http",'], 2, "(line 1, column 17)"),
    (["mcp", "add-json", "x", '{"mcpServers": {}}'], 2, "wrapper"),
    (["mcp", "add-json", "x", '{"command": "c", "args": "no"}'], 1, "args: expected"),
    (["mcp", "add-json", "x", '{"url": "https://a.example.com"}'], 1, 'has a "url" but no'),
    (["mcp", "remove", "nothing"], 1, "no MCP server nothing"),
]


@pytest.mark.parametrize(("argv", "code", "message"), REFUSALS)
def test_refusals_change_nothing(
    project: Path, isolated_home: Path, argv: list[str], code: int, message: str
) -> None:
    ok(project, "mcp", "add", "dup", "--", "dup-server")
    before = snapshot(project, isolated_home)
    assert message in refused(project, *argv, code=code)
    assert snapshot(project, isolated_home) == before


def test_managed_mcp_json_is_exclusive(project: Path, paths: Paths, isolated_home: Path) -> None:
    ok(project, "mcp", "add", "mine", "--", "mine")
    paths.managed_dir.mkdir()
    paths.managed_mcp.write_text('{"mcpServers": {"corp": {"type": "http", "url": "https://c"}}}')
    before = snapshot(project, isolated_home)
    for argv in (
        ["mcp", "add", "x", "--", "y"],
        ["mcp", "add-json", "x", '{"command": "y"}'],
        ["mcp", "remove", "mine"],
    ):
        output = refused(project, *argv, code=1)
        assert "enterprise MCP configuration is active and has exclusive control" in output
    assert snapshot(project, isolated_home) == before
    rows = {r["name"]: r for r in ok(project, "mcp", "list")["servers"]}
    assert rows["corp"]["status"] == "active" and rows["corp"]["scope"] == "managed"
    assert rows["mine"]["status"] == "managed-exclusive"


def test_remove_needs_a_scope_when_several_have_the_name(project: Path, paths: Paths) -> None:
    ok(project, "mcp", "add", "both", "--", "a")
    ok(project, "mcp", "add", "both", "-s", "user", "--", "b")
    assert "exists in multiple scopes" in refused(project, "mcp", "remove", "both", code=1)
    ok(project, "mcp", "remove", "both", "-s", "user")
    assert ok(project, "mcp", "remove", "both")["scope"] == "local"


def test_add_json_writes_the_checked_entry(project: Path, paths: Paths) -> None:
    entry = {"type": "http", "url": "https://h.example.com/mcp", "timeout": 5000}
    ok(project, "mcp", "add-json", "h", json.dumps(entry), "--scope", "user")
    assert declarations.entries(paths.user_config, "mcp_servers") == {"h": entry}


def test_list_and_get_show_every_status(
    project: Path, paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCS_TOKEN", "planted-secret")
    monkeypatch.delenv("UNSET_FOR_TEST", raising=False)
    ok(project, "mcp", "add", "docs", "https://docs.example.com", "-s", "user")
    ok(project, "mcp", "add", "docs", "https://local.example.com", "-H", "Api-Key: ${DOCS_TOKEN}")
    ok(project, "mcp", "add", "blocked", "-s", "user", "--", "evil")
    ok(project, "mcp", "add", "needs", "-s", "user", "-e", "X=${UNSET_FOR_TEST}", "--", "n")
    ok(project, "mcp", "add", "tool", "-s", "project", "--", "run-tool")
    paths.managed_dir.mkdir()
    paths.managed_settings.write_text('deniedMcpServers = [{ serverName = "blocked" }]\n')
    rows = ok(project, "mcp", "list")["servers"]
    status = {(r["name"], r["scope"]): r["status"] for r in rows}
    assert status == {
        ("blocked", "user"): "policy",
        ("docs", "local"): "active",
        ("docs", "user"): "shadowed",
        ("needs", "user"): "missing-variable",
        ("tool", "project"): "pending-approval",
    }
    text = invoke(project, "mcp", "list").output
    assert "pending-approval" in text and "planted-secret" not in text
    got = ok(project, "mcp", "get", "docs")["entries"]
    assert [(e["scope"], e["status"]) for e in got] == [("local", "active"), ("user", "shadowed")]
    assert got[0]["entry"]["headers"] == {"Api-Key": "${DOCS_TOKEN}"}  # a reference: no secret
    shown = ok(project, "mcp", "get", "docs", "--show-secrets")["entries"][0]["entry"]
    assert shown["headers"] == {"Api-Key": "${DOCS_TOKEN}"}
    assert "hint: see them all: plugman mcp list" in refused(project, "mcp", "get", "nope", code=2)


CONNECTORS = [
    {"name": "claude.ai Slack", "url": "https://slack.example.com/mcp"},
    {"name": "Linear", "url": "https://linear.example.com/sse", "type": "sse"},
]


def connector_origins(project: Path) -> dict[str, dict[str, str]]:
    doc = ok(project, "config", "resolve")
    return {name: s["origin"] for name, s in doc["mcpServers"].items()}


def test_connectors_sync_from_a_file(project: Path, paths: Paths, tmp_path: Path) -> None:
    source = tmp_path / "connectors.json"
    source.write_text(json.dumps({"connectors": CONNECTORS}))
    done = ok(project, "connectors", "sync", str(source))
    assert done["source"] == str(source) and len(done["connectors"]) == 2
    cache = json.loads(scopes.connectors_path(paths).read_text())
    assert cache == {
        "format": 1,
        "source": str(source),
        "connectors": [
            {"name": "claude.ai Slack", "entry": {"type": "http", "url": CONNECTORS[0]["url"]}},
            {"name": "Linear", "entry": {"type": "sse", "url": CONNECTORS[1]["url"]}},
        ],
    }
    origins = connector_origins(project)
    assert origins["claude.ai Slack"]["scope"] == origins["Linear"]["scope"] == "claude.ai"
    rows = {r["name"]: r["status"] for r in ok(project, "mcp", "list")["servers"]}
    assert rows == {"claude.ai Slack": "active", "Linear": "active"}


@pytest.mark.parametrize(
    "bad",
    [
        "not json",
        json.dumps({"connectors": "nope"}),
        json.dumps([{"name": "", "url": "https://a.example.com"}]),
        json.dumps([{"name": "a/b", "url": "https://a.example.com"}]),
        json.dumps([{"name": "ftp", "url": "ftp://a.example.com"}]),
        json.dumps([{"name": "w", "url": "https://a.example.com", "type": "ws"}]),
        json.dumps([CONNECTORS[0], CONNECTORS[0]]),
    ],
)
def test_invalid_connectors_leave_the_cache(
    project: Path, paths: Paths, tmp_path: Path, bad: str
) -> None:
    source = tmp_path / "connectors.json"
    source.write_text(json.dumps(CONNECTORS))
    ok(project, "connectors", "sync", str(source))
    cache = scopes.connectors_path(paths).read_bytes()
    source.write_text(bad)
    refused(project, "connectors", "sync", str(source), code=1)
    assert scopes.connectors_path(paths).read_bytes() == cache
    refused(project, "connectors", "sync", str(tmp_path / "missing.json"), code=2)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """A folder served over http://127.0.0.1 (a free port) while the test runs."""
    folder = tmp_path / "www"
    folder.mkdir()
    (folder / "connectors.json").write_text(json.dumps(CONNECTORS))
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(folder))
    with serving(handler) as url:
        yield url


def test_connectors_sync_from_a_url(project: Path, paths: Paths, served: str) -> None:
    url = f"{served}/connectors.json"
    assert ok(project, "connectors", "sync", url)["source"] == url
    origins = connector_origins(project)
    assert {origins[c["name"]]["scope"] for c in CONNECTORS} == {"claude.ai"}
    cache = scopes.connectors_path(paths).read_bytes()
    refused(project, "connectors", "sync", f"{served}/missing.json", code=1)
    assert scopes.connectors_path(paths).read_bytes() == cache
    assert list((paths.store_dir / ".staging").iterdir()) == []

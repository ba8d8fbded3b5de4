"""`plugman config resolve`, `config explain` and `trust` over real files in every scope."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plugman.cli import invoke
from plugman.manifest import schema
from tests.conftest import SAMPLES
from tests.integration.helpers import run

PLANTED = "s3cr3t-planted-value"


@pytest.fixture
def project(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.setenv("PLANTED_TOKEN", PLANTED)
    (isolated_home / "config").mkdir(exist_ok=True)
    (isolated_home / "config" / "plugman.toml").write_text(
        '[mcp_servers.docs]\ntype = "http"\nurl = "https://docs.example.com/mcp"\n\n'
        '[mcp_servers.blocked]\ncommand = "evil"\n\n'
        '[mcp_servers.api]\ncommand = "api-server"\n'
        'env = { API_TOKEN = "${PLANTED_TOKEN}", MODE = "fast" }\n'
    )
    (folder / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"tool": {"command": "run-tool", "args": ["--safe"]}}})
    )
    (folder / ".plugman").mkdir()
    (folder / ".plugman" / "local.toml").write_text(
        '[mcp_servers.docs]\ntype = "http"\nurl = "https://local.example.com/mcp"\n'
    )
    managed = isolated_home / "managed"
    managed.mkdir()
    (managed / "managed-settings.toml").write_text(
        'deniedMcpServers = [{ serverName = "blocked" }]\n'
    )
    run("marketplace", "add", str(SAMPLES), project=folder)
    run("install", "notes-server", project=folder)
    return folder


def resolve_json(project: Path, *extra: str) -> dict:  # type: ignore[type-arg]
    result = invoke(["--project", str(project), "config", "resolve", "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)  # type: ignore[no-any-return]


def test_every_scope_resolves_with_provenance(project: Path, isolated_home: Path) -> None:
    doc = resolve_json(project)
    servers = doc["mcpServers"]
    assert set(servers) == {"docs", "api", "plugin:notes-server:notes"}
    assert servers["docs"]["url"] == "https://local.example.com/mcp"
    assert servers["docs"]["origin"]["scope"] == "local"
    notes = servers["plugin:notes-server:notes"]
    assert notes["args"][0].startswith(str(isolated_home / "data" / "store"))
    assert notes["origin"]["plugin"] == "notes-server@plugman-samples"
    codes = {(d["code"], d["message"].split("'")[1]) for d in doc["diagnostics"]}
    assert ("policy", "blocked") in codes
    assert ("pending-approval", "tool") in codes
    assert ("shadowed", "docs") in codes
    assert set(doc["hooks"]) == set()
    assert doc["plugins"] == [
        {"id": "notes-server@plugman-samples", "version": "1.0.0", "enabled": True, "scope": "user"}
    ]
    findings = schema.check(
        doc, schema.load("resolved-config.schema.json"), "resolved-config.schema.json", ()
    )
    assert [f for f in findings if f.severity == "error"] == []


def test_approval_is_keyed_to_content(project: Path) -> None:
    assert [r["state"] for r in run("trust", "list", project=project)["entries"]] == ["pending"]
    run("trust", "approve", "tool", project=project)
    assert "tool" in resolve_json(project)["mcpServers"]
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"tool": {"command": "run-tool", "args": ["--evil"]}}})
    )
    assert "tool" not in resolve_json(project)["mcpServers"]
    assert [r["state"] for r in run("trust", "list", project=project)["entries"]] == ["pending"]


def test_explain_names_winner_shadowed_and_dropped(project: Path) -> None:
    found = run("config", "explain", "docs", project=project)
    assert found["winner"]["origin"]["scope"] == "local"
    assert [s["origin"]["scope"] for s in found["shadowed"]] == ["user"]
    blocked = run("config", "explain", "blocked", project=project)
    assert blocked["winner"] is None
    assert blocked["dropped"][0]["reason"] == "policy"
    text = invoke(["--project", str(project), "config", "explain", "tool"]).output
    assert "pending-approval — never approved; run: plugman trust approve tool" in text


def test_managed_mcp_json_is_exclusive(project: Path, isolated_home: Path) -> None:
    (isolated_home / "managed" / "managed-mcp.json").write_text(
        json.dumps({"mcpServers": {"corp": {"command": "corp-mcp"}}})
    )
    doc = resolve_json(project)
    assert list(doc["mcpServers"]) == ["corp"]
    assert any(d["code"] == "managed-exclusive" for d in doc["diagnostics"])


def test_no_planted_secret_without_show_secrets(project: Path) -> None:
    outputs = []
    for args in (
        ["config", "resolve"],
        ["config", "resolve", "--json"],
        ["config", "resolve", "--explain"],
        ["config", "explain", "api"],
        ["config", "explain", "api", "--json"],
        ["list", "--json"],
        ["trust", "list"],
    ):
        result = invoke(["--project", str(project), *args])
        assert result.exit_code == 0, (args, result.output)
        outputs.append(result.output)
    assert all(PLANTED not in out for out in outputs)
    assert resolve_json(project)["mcpServers"]["api"]["env"] == {"API_TOKEN": "***", "MODE": "fast"}
    shown = resolve_json(project, "--show-secrets")["mcpServers"]["api"]["env"]
    assert shown["API_TOKEN"] == PLANTED


def test_nothing_in_the_project_can_approve_itself(project: Path) -> None:
    (project / "plugman.toml").write_text('[trust]\napprove = ["tool"]\n')
    (project / ".plugman" / "local.toml").write_text(
        (project / ".plugman" / "local.toml").read_text() + '\n[trust]\napprove = ["tool"]\n'
    )
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").write_text('{"enabledMcpjsonServers": ["tool"]}')
    doc = resolve_json(project)
    assert "tool" not in doc["mcpServers"]
    assert any(d["code"] == "pending-approval" for d in doc["diagnostics"])


def test_a_policy_rule_with_an_unknown_key_or_a_wrong_type_is_located(
    project: Path, isolated_home: Path
) -> None:
    settings = isolated_home / "managed" / "managed-settings.toml"
    settings.write_text(
        'deniedMcpServers = [{ serverName = "blocked" }, { serverNam = "api" }]\n'
        'blockedMarketplaces = [{ source = "github", repo = 7 }]\n'
        'allowAllClaudeAiMcps = "yes"\n'
    )
    result = invoke(["--project", str(project), "config", "resolve", "--json"])
    assert result.exit_code == 1  # a broken managed file, as any other config error
    doc = json.loads(result.output)
    found = {
        (d["severity"], d["path"], d["code"])
        for d in doc["diagnostics"]
        if d["file"] == str(settings)
    }
    assert found == {
        ("warning", "deniedMcpServers[1].serverNam", "unknown-key"),
        ("error", "deniedMcpServers[1]", "policy-key"),  # and so no server key at all
        ("error", "deniedMcpServers[1]", "policy-unreadable"),
        ("error", "blockedMarketplaces[0].repo", "policy-type"),
        ("error", "blockedMarketplaces[0]", "policy-unreadable"),
        ("error", "allowAllClaudeAiMcps", "policy-type"),
    }
    # fail closed: a deny rule plugman cannot read denies every server until it is fixed
    assert doc["mcpServers"] == {}
    refused = [d["message"] for d in doc["diagnostics"] if d["code"] == "policy"]
    assert any("'blocked'" in m for m in refused)
    assert any("cannot read" in m for m in refused)
    settings.write_text('deniedMcpServers = [{ serverName = "blocked" }]\n')  # fixed
    doc = resolve_json(project)
    assert set(doc["mcpServers"]) == {"docs", "api", "plugin:notes-server:notes"}

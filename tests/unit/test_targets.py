"""Every built-in target renders one fixed input to its golden file; extensions add targets."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from plugman import extensions
from plugman.cli.app import app
from plugman.hookspecs import hookimpl
from plugman.targets import Rendered, Servers, Target

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "targets"
SERVERS: Servers = {
    "local": {
        "type": "stdio",
        "command": "npx",
        "args": ["-y", "local-mcp"],
        "env": {"TOKEN": "${TOKEN}", "LEVEL": "debug"},
    },
    "api": {
        "type": "http",
        "url": "https://api.example.com/mcp",
        "headers": {"Authorization": "Bearer ${API_KEY}"},
    },
    "events": {"type": "sse", "url": "https://events.example.com/sse"},
    "socket": {"type": "ws", "url": "wss://ws.example.com/mcp"},
    "bad name.x": {"command": "tool"},
}
WS = "socket: transport 'ws' is not supported by {}; skipped"
SSE = "events: transport 'sse' is not supported by {}; skipped"
EXPECTED: dict[str, tuple[str, list[str]]] = {
    "claude-code": ("json", []),
    "cursor": ("json", [WS.format("Cursor")]),
    "vscode": ("json", [WS.format("VS Code")]),
    "gemini": ("json", [WS.format("Gemini CLI")]),
    "codex": (
        "toml",
        [
            "events: transport 'sse' is not supported by Codex; skipped",
            WS.format("Codex"),
            "bad name.x: Codex server names must match ^[a-zA-Z0-9_-]+$; skipped",
        ],
    ),
    "zed": ("json", [SSE.format("Zed"), WS.format("Zed")]),
    "windsurf": ("json", [WS.format("Windsurf")]),
    "opencode": ("json", [SSE.format("OpenCode"), WS.format("OpenCode")]),
    "goose": ("yaml", [SSE.format("Goose"), WS.format("Goose")]),
    "continue": (
        "yaml",
        [
            "api: field 'headers' has no Continue equivalent; left out",
            SSE.format("Continue"),
            WS.format("Continue"),
        ],
    ),
    "copilot-cli": ("json", [WS.format("Copilot CLI")]),
    "kiro": (
        "json",
        [
            "api: field 'headers' has no Kiro equivalent; left out",
            SSE.format("Kiro"),
            WS.format("Kiro"),
        ],
    ),
}
PARSE = {"json": json.loads, "toml": tomllib.loads, "yaml": yaml.safe_load}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_target_matches_golden(name: str) -> None:
    ext, unsupported = EXPECTED[name]
    rendered = extensions.target(name).render(SERVERS)
    golden = (GOLDEN / f"{name}.{ext}").read_text()
    assert rendered.text == golden
    assert rendered.unsupported == unsupported
    parsed = PARSE[ext](golden)
    assert parsed  # the golden is a well-formed document


def test_builtin_targets_are_listed() -> None:
    assert set(EXPECTED) <= set(extensions.targets())


def test_unsupported_fields_are_reported_not_dropped() -> None:
    servers: Servers = {"s": {"command": "x", "alwaysLoad": True}}
    assert extensions.target("cursor").render(servers).unsupported == [
        "s: field 'alwaysLoad' has no Cursor equivalent; left out"
    ]


def test_codex_reports_expansion_it_cannot_do() -> None:
    servers: Servers = {"s": {"command": "x", "env": {"A": "pre-${B}"}}}
    rendered = extensions.target("codex").render(servers)
    assert "A" not in rendered.text
    assert rendered.unsupported == ["s: env A uses ${…} expansion, which Codex lacks; left out"]


class ThirdParty:
    @staticmethod
    def render(servers: Servers) -> Rendered:
        return Rendered("\n".join(sorted(servers)) + "\n", ["demo: just a test"])

    @hookimpl
    def plugman_targets(self) -> list[Target]:
        return [Target("mine", "mine.txt", self.render)]


@pytest.fixture
def third_party() -> Any:
    plugin = ThirdParty()
    extensions.manager().register(plugin)
    yield plugin
    extensions.manager().unregister(plugin)


def test_third_party_target_via_cli(tmp_path: Path, third_party: Any) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"gh": {"command": "gh"}}}))
    approved = CliRunner().invoke(app, ["--project", str(tmp_path), "trust", "approve", "--all"])
    assert approved.exit_code == 0, approved.output
    run = CliRunner().invoke(
        app, ["--project", str(tmp_path), "config", "resolve", "--target", "mine"]
    )
    assert run.exit_code == 0, run.output
    assert run.stdout == "gh\n"
    assert run.stderr == "warning: demo: just a test\n"


def test_unknown_target_lists_the_available_ones(tmp_path: Path) -> None:
    run = CliRunner().invoke(
        app, ["--project", str(tmp_path), "config", "resolve", "--target", "nope"]
    )
    assert run.exit_code == 2
    assert "unknown target 'nope'" in run.stderr
    assert (
        "claude-code, codex, continue, copilot-cli, cursor, gemini, goose, kiro, opencode,"
        " vscode, windsurf, zed" in run.stderr
    )

"""Every built-in target renders one fixed input to its golden file; extensions add targets."""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from plugman import extensions
from plugman.agents.targets import AgentSpec, Given, Mcp, Refs, Servers, in_home, target
from plugman.cli import invoke
from plugman.hookspecs import hookimpl
from plugman.manifest import edit

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
SSE = "events: transport 'sse' is not supported by {}; skipped"
WS = "socket: transport 'ws' is not supported by {}; skipped"
TOKEN = "local: env TOKEN needs ${{TOKEN}}, which {} cannot expand; left out"
BEARER = "api: headers Authorization needs ${{API_KEY}}, which {} cannot expand; left out"
HEADERS = "api: field 'headers' has no {} equivalent; left out"
# The built-in targets, from the registry: each needs a golden file and a row in UNSUPPORTED.
BUILTIN = sorted(extensions.targets(entry_points=False))
# What each built-in target cannot express of SERVERS (its golden file shows what it can).
UNSUPPORTED: dict[str, list[str]] = {
    "claude-code": [],
    "codex": [
        SSE.format("Codex"),
        WS.format("Codex"),
        "bad name.x: Codex server names must match ^[a-zA-Z0-9_-]+$; skipped",
    ],
    "continue": [
        TOKEN.format("Continue"),
        HEADERS.format("Continue"),
        SSE.format("Continue"),
        WS.format("Continue"),
    ],
    "copilot-cli": [BEARER.format("Copilot CLI"), WS.format("Copilot CLI")],
    "cursor": [WS.format("Cursor")],
    "gemini": [WS.format("Gemini CLI")],
    "goose": [BEARER.format("Goose"), SSE.format("Goose"), WS.format("Goose")],
    "kiro": [TOKEN.format("Kiro"), HEADERS.format("Kiro"), SSE.format("Kiro"), WS.format("Kiro")],
    "opencode": [SSE.format("OpenCode"), WS.format("OpenCode")],
    "vscode": [WS.format("VS Code")],
    "windsurf": [WS.format("Windsurf")],
    "zed": [TOKEN.format("Zed"), BEARER.format("Zed"), SSE.format("Zed"), WS.format("Zed")],
}
PARSE = {"json": json.loads, "toml": tomllib.loads, "yaml": yaml.safe_load}


@pytest.mark.parametrize("name", BUILTIN)
def test_target_matches_golden(name: str) -> None:
    ext = extensions.target(name).fmt
    assert name in UNSUPPORTED, f"{name}: add what it cannot express of SERVERS to UNSUPPORTED"
    assert (GOLDEN / f"{name}.{ext}").is_file(), f"{name}: add its golden file {name}.{ext}"
    text, notes = render(name, SERVERS)
    golden = (GOLDEN / f"{name}.{ext}").read_text()
    assert text == golden
    assert notes == UNSUPPORTED[name]
    parsed = PARSE[ext](golden)
    assert parsed  # the golden is a well-formed document


def render(name: str, servers: Servers, env: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """The target's main file as a new document, and what it could not express."""
    spec = extensions.target(name)
    rendered = target(spec).render(Given(servers, {}, env or {}))
    return edit.render(spec.fmt, rendered.files["mcp"]), rendered.unsupported


def test_builtin_targets_are_listed() -> None:
    assert len(BUILTIN) > 1 and set(BUILTIN) <= set(extensions.targets())
    assert set(UNSUPPORTED) == set(BUILTIN), "UNSUPPORTED has a row for an unknown target"
    goldens = {path.stem for path in GOLDEN.iterdir()}
    assert goldens == set(BUILTIN), "a golden file for a target that is not registered"


def test_unsupported_fields_are_reported_not_dropped() -> None:
    servers: Servers = {"s": {"command": "x", "alwaysLoad": True}}
    assert render("cursor", servers)[1] == [
        "s: field 'alwaysLoad' has no Cursor equivalent; left out"
    ]


def test_codex_writes_plain_variables_as_values_and_secrets_by_name() -> None:
    servers: Servers = {
        "s": {
            "command": "x",
            "env": {"A": "pre-${B}", "C": "${SECRET_TOKEN}-x", "GH_TOKEN": "${GH_TOKEN}"},
        }
    }
    text, notes = render("codex", servers, {"B": "value"})
    assert tomllib.loads(text)["mcp_servers"]["s"] == {
        "command": "x",
        "env": {"A": "pre-value"},
        "env_vars": ["GH_TOKEN"],
    }
    assert notes == ["s: env C needs ${SECRET_TOKEN}, which Codex cannot expand; left out"]


def test_codex_passes_plugmans_own_variables_to_plugman_on_path() -> None:
    """Codex starts a server with only HOME, PATH and a few more: a committed entry naming
    `plugman` asks by name for the variables that relocate plugman's home, secret store and
    policy."""
    launcher = {"command": "plugman", "args": ["mcp", "run", "plugin:w:s"]}
    servers: Servers = {"s": launcher, "t": {**launcher, "env": {"GH_TOKEN": "${GH_TOKEN}"}}}
    written = tomllib.loads(render("codex", servers)[0])["mcp_servers"]
    assert written["s"] == {
        **launcher,
        "env_vars": ["PLUGMAN_HOME", "PLUGMAN_SECRETS", "PLUGMAN_MANAGED_DIR"],
    }
    assert written["t"]["env_vars"] == [
        "PLUGMAN_HOME",
        "PLUGMAN_SECRETS",
        "PLUGMAN_MANAGED_DIR",
        "GH_TOKEN",
    ]
    assert (
        "env_vars"
        not in tomllib.loads(render("codex", {"x": {"command": "x"}})[0])["mcp_servers"]["x"]
    )


def test_defaults_are_written_as_values_where_an_agent_has_no_default_syntax() -> None:
    servers: Servers = {"s": {"command": "x", "env": {"A": "${SET:-a}", "B": "${UNSET:-b}"}}}
    env = {"SET": "here"}
    assert json.loads(render("cursor", servers, env)[0])["mcpServers"]["s"]["env"] == {
        "A": "${env:SET}",
        "B": "b",
    }
    assert json.loads(render("claude-code", servers, env)[0])["mcpServers"]["s"]["env"] == {
        "A": "${SET:-a}",
        "B": "${UNSET:-b}",
    }


def test_a_server_whose_command_cannot_be_written_is_skipped() -> None:
    servers: Servers = {"s": {"command": "${TOOL_SECRET}/bin"}}
    text, notes = render("zed", servers)
    assert json.loads(text) == {}  # nothing to write
    assert notes[-1] == "s: skipped, as Zed cannot be given its command"


def test_vscode_secrets_become_password_inputs() -> None:
    servers: Servers = {
        "s": {"command": "x", "env": {"API_TOKEN": "${API_TOKEN}", "MODE": "${MODE}"}}
    }
    document = json.loads(render("vscode", servers)[0])
    assert document["servers"]["s"]["env"] == {
        "API_TOKEN": "${input:api-token}",
        "MODE": "${env:MODE}",
    }
    assert document["inputs"] == [
        {"type": "promptString", "id": "api-token", "description": "API_TOKEN", "password": True}
    ]


class ThirdParty:
    @hookimpl
    def plugman_targets(self) -> list[AgentSpec]:
        mcp = Mcp(
            key=("tools",),
            transports=("stdio",),
            stdio=("command",),
            renames={"command": "run"},
            refs=Refs(spelling="${VAR}"),
        )
        return [
            AgentSpec(name="mine", label="Mine", user=in_home(".mine.json"), project=None, mcp=mcp)
        ]


@pytest.fixture
def third_party() -> Any:
    plugin = ThirdParty()
    extensions.manager().register(plugin)
    yield plugin
    extensions.manager().unregister(plugin)


def test_third_party_target_via_cli(tmp_path: Path, third_party: Any) -> None:
    gh = {"command": "gh", "args": ["mcp"]}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"gh": gh}}))
    approved = invoke(["--project", str(tmp_path), "trust", "approve", "--all"])
    assert approved.exit_code == 0, approved.output
    run = invoke(["--project", str(tmp_path), "config", "resolve", "--target", "mine"])
    assert run.exit_code == 0, run.output
    # the project's server needs approval: written as the launcher (`plugman mcp run gh`),
    # which checks it at each start
    assert json.loads(run.stdout) == {"tools": {"gh": {"run": sys.executable}}}
    assert "warning: gh: field 'args' has no Mine equivalent; left out\n" in run.stderr


def test_unknown_target_lists_the_available_ones(tmp_path: Path) -> None:
    run = invoke(["--project", str(tmp_path), "config", "resolve", "--target", "nope"])
    assert run.exit_code == 2
    assert "unknown target 'nope'" in run.stderr
    assert "available targets: " + ", ".join(sorted(extensions.targets())) in run.stderr


def test_readme_names_every_builtin_target() -> None:
    """The README's `Targets:` list is written by hand; it names exactly the registered ones."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"^Targets: (.+?) \(`plugman/agents/targets/`\)", readme, re.M | re.S)
    assert listed is not None, "README.md has no `Targets:` list"
    names = {name.strip() for name in listed[1].replace("\n", " ").split(",")}
    assert names == set(BUILTIN), f"README.md lists {sorted(names)}; registered: {BUILTIN}"

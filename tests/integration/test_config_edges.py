"""Rough edges of `config explain`, `mcp list`, `config resolve` and `list` a new user hit
(issue 24), for real: `python -m plugman` subprocesses with their own HOME and PLUGMAN_HOME, a
local marketplace, and broken files in a real project folder. Every hint a command prints that
names a command is followed, and must work."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PLANTED_CONFIG

KEY = PLANTED_CONFIG["api_key"]

# A plugin whose one MCP server and one hook need an option nobody has given yet.
MANIFEST = {
    "name": "weather-tools",
    "version": "1.0.0",
    "description": "Weather",
    "userConfig": {"api_key": {"type": "string", "title": "API key", "description": "Your key",
                               "sensitive": True, "required": True}},
    "mcpServers": {"weather": {"command": sys.executable, "args": ["${CLAUDE_PLUGIN_ROOT}/s.py"],
                               "env": {"WEATHER_KEY": "${user_config.api_key}"}}},
    "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": sys.executable,
                                           "args": ["-c", "pass", "${user_config.api_key}"]}]}]},
}  # fmt: skip


class Machine:
    """One isolated machine (HOME, PLUGMAN_HOME, a project) running plugman as a user would."""

    def __init__(self, tmp: Path, home: Path, seen: list[str]) -> None:
        self.project, self.seen = tmp / "project", seen
        self.project.mkdir()
        (tmp / "home").mkdir()
        self.env = {**os.environ, "HOME": str(tmp / "home"), "PLUGMAN_HOME": str(home),
                    "PLUGMAN_SECRETS": "file"}  # fmt: skip

    def run(self, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "plugman", "--project", str(self.project), *args],
            env=self.env, cwd=self.project, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        self.seen += [done.stdout, done.stderr]
        assert done.returncode == code, (args, done.returncode, done.stdout, done.stderr)
        return done

    def json(self, *args: str, code: int = 0) -> Any:
        return json.loads(self.run(*args, "--json", code=code).stdout)

    def follow(self, text: str, code: int = 0) -> list[subprocess.CompletedProcess[str]]:
        """Run every `plugman ...` command `text` names (up to `;`, `(` or `)`), VALUE given."""
        named = re.findall(r"plugman ([a-z][^;()\n]*[^;()\n\s])", text)
        assert named, text
        words = [c.replace("VALUE", KEY).split() for c in named]
        return [self.run(*w, code=code) for w in words]


@pytest.fixture
def machine(tmp_path: Path, isolated_home: Path, secret_scan: list[str]) -> Machine:
    market = tmp_path / "market"
    plugin = market / "weather-tools"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps(MANIFEST))
    (plugin / "s.py").write_text("print('weather')\n")
    (market / ".claude-plugin").mkdir()
    entry = {"name": "weather-tools", "source": "./weather-tools", "description": "Weather"}
    catalog = {"name": "wx", "owner": {"name": "t"}, "plugins": [entry]}
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    found = Machine(tmp_path, isolated_home, secret_scan)
    found.run("marketplace", "add", str(market))
    return found


def test_a_plugin_needing_config_is_explained_by_its_name_and_listed(machine: Machine) -> None:
    warned = machine.run("install", "weather-tools").stderr
    # the warning names what is left out by the names config explain and mcp get take
    assert "MCP server plugin:weather-tools:weather and hook SessionStart:* are left out" in (
        warned
    ), warned
    assert "(details: plugman config explain weather-tools@wx)" in warned, warned
    # `config explain` takes the plugin's name, bare or with its marketplace
    for name in ("weather-tools", "weather-tools@wx"):
        explained = machine.run("config", "explain", name).stdout
        assert "weather-tools@wx is a plugin" in explained, explained
        assert "named plugin:weather-tools:SERVER" in explained
        assert (
            "plugin:weather-tools:weather:\n    dropped: plugin weather-tools@wx: needs-config"
            in (explained)
        ), explained
        assert "hook SessionStart:*: dropped: needs-config" in explained
    as_json = machine.json("config", "explain", "weather-tools")["plugins"]
    assert [(p["id"], [s["name"] for s in p["servers"]]) for p in as_json] == [
        ("weather-tools@wx", ["plugin:weather-tools:weather"])
    ]
    assert [d["reason"] for d in as_json[0]["servers"][0]["dropped"]] == ["needs-config"]
    # `mcp list` shows the plugin's server, which plugin it comes from, and why it is left out
    listed = machine.run("mcp", "list").stdout
    assert "no MCP servers configured" not in listed
    row = next(line for line in listed.splitlines() if "plugin:weather-tools:weather" in line)
    assert "plugin weather-tools@wx" in row and "needs-config" in row, listed
    rows = machine.json("mcp", "list")["servers"]
    assert [(r["name"], r["plugin"], r["status"]) for r in rows] == [
        ("plugin:weather-tools:weather", "weather-tools@wx", "needs-config")
    ]
    # every command a hint names works when followed: explain's, mcp get's, the failure's
    (got,) = machine.follow("plugman mcp get plugin:weather-tools:weather")
    assert "needs-config" in got.stdout
    failed = machine.run("config", "explain", "no-such", code=2).stderr
    assert "no MCP server or installed plugin named 'no-such'" in failed
    machine.follow(failed)  # mcp list, list
    configured, _explain = machine.follow(warned)  # configure (the value given), config explain
    assert "plugin:weather-tools:weather" in machine.json("config", "resolve")["mcpServers"]
    assert "left out" not in configured.stderr
    after = machine.run("config", "explain", "weather-tools").stdout
    assert "plugin:weather-tools:weather:\n    wins: plugin weather-tools@wx" in after, after


def test_broken_project_files_are_reported_with_what_they_leave_out(machine: Machine) -> None:
    machine.run("mcp", "add", "kept", "--scope", "user", "--", sys.executable, "-V")
    mcp_json = machine.project / ".mcp.json"
    # invalid JSON: where, and that every server in it is left out; the rest still resolves
    mcp_json.write_text('{"mcpServers": {"a": {"command": "x"}}\n')
    done = machine.run("config", "resolve", code=1)
    assert "kept  [user]" in done.stdout
    assert "error: .mcp.json:2:1: invalid JSON" in done.stderr, done.stderr
    assert "  left out: every MCP server in this file" in done.stderr
    doc = machine.json("config", "resolve", code=1)
    assert list(doc["mcpServers"]) == ["kept"]
    found = {d["code"]: d for d in doc["diagnostics"]}
    assert found["json-syntax"]["line"] == 2 and found["json-syntax"]["column"] == 1
    assert found["left-out"]["file"] == str(mcp_json)
    # a wrong shape: the same
    mcp_json.write_text('{"mcpServers": []}\n')
    done = machine.run("config", "resolve", code=1)
    shape = "error: .mcp.json:1:2: mcpServers: must be an object of servers by name, not an array"
    assert shape in done.stderr, done.stderr
    assert "  left out: every MCP server in this file" in done.stderr
    # one bad entry: that entry is dropped as invalid, and shown where servers are
    mcp_json.write_text('{"mcpServers": {"a": {"command": 5}, "b": {"command": "x"}}}\n')
    machine.run("config", "resolve", code=1)
    listed = machine.run("mcp", "list", code=1).stdout
    assert re.search(
        r"^a +project +invalid .*mcpServers\.a\.command: expected string", listed, re.M
    )
    explained = machine.run("config", "explain", "a").stdout
    assert "dropped: project (.mcp.json): invalid — line 1: mcpServers.a.command" in explained
    mcp_json.unlink()
    assert machine.run("config", "resolve").stderr == ""
    # a broken plugman.toml: `list` says so (its plugins are still listed), and so does resolve
    (machine.project / "plugman.toml").write_text('[plugins]\n"x" = \n')
    done = machine.run("list", code=1)
    assert "error: plugman.toml:2:7: not valid TOML: Invalid value" in done.stderr, done.stderr
    assert "  left out: everything in this file" in done.stderr
    problems = machine.json("list", code=1)["diagnostics"]
    assert [(p["code"], p["line"]) for p in problems] == [("toml-syntax", 2), ("left-out", None)]
    assert "plugman.toml:2:7" in machine.run("config", "resolve", code=1).stderr
    # a command that writes a linked agent's files says what they were resolved without
    (machine.project / "plugman.toml").unlink()
    mcp_json.write_text('{"mcpServers": {"a": {"command": "x"}}\n')
    done = machine.run("agents", "add", "codex", "--scope", "project")
    assert "codex (project): .mcp.json:2:1: invalid JSON" in done.stderr, done.stderr
    assert "what it declares is left out (plugman config resolve)" in done.stderr

"""Which server entries an export writes as the server launcher, and how it spells plugman."""

from __future__ import annotations

import sys

from plugman.agents.export_entries import launched, launcher_entry
from plugman.config.merge import Origin

STORE = "/home/u/.local/share/plugman/store"
KEPT = frozenset({"${TOKEN}", "${TOKEN:-", "${PLUGMAN_OPT_", STORE})
PLUGIN = Origin("plugin", "/x/plugin.json", "weather@wx")
USER = Origin("user", "/home/u/.config/plugman/plugman.toml")


def test_a_plugins_stdio_server_is_launched_a_remote_one_when_it_needs_a_kept_value() -> None:
    assert launched({"command": "python3", "args": ["server.py"]}, PLUGIN, KEPT)
    assert not launched({"type": "http", "url": "https://x/mcp"}, PLUGIN, KEPT)
    assert not launched({"url": "https://x/mcp", "headers": {"K": "${HOME}"}}, USER, KEPT)
    assert launched({"url": "https://x/mcp", "headers": {"K": "${TOKEN}"}}, USER, KEPT)
    headers = {"X-Api-Key": "${PLUGMAN_OPT_WEATHER_API_KEY}"}
    assert launched({"type": "http", "url": "https://x/mcp", "headers": headers}, PLUGIN, KEPT)


def test_a_users_stdio_server_is_launched_only_for_what_plugman_keeps() -> None:
    assert not launched({"command": "srv", "env": {"A": "${HOME}"}}, USER, KEPT)
    assert not launched({"command": "srv", "env": {"A": "TOKEN"}}, USER, KEPT)
    assert launched({"command": "srv", "env": {"A": "${TOKEN}"}}, USER, KEPT)
    assert launched({"command": "srv", "args": ["${TOKEN:-x}"]}, USER, KEPT)
    assert launched({"command": f"{STORE}/abc/bin/srv"}, USER, KEPT)


def test_spelling_per_scope() -> None:
    env = {"PLUGMAN_HOME": "/opt/ph", "PLUGMAN_SECRETS": "file", "OTHER": "x"}
    assert launcher_entry("project", "plugin:w:s", env) == {
        "command": "plugman",
        "args": ["mcp", "run", "plugin:w:s"],
    }
    assert launcher_entry("user", "plugin:w:s", env) == {
        "command": sys.executable,
        "args": ["-m", "plugman", "mcp", "run", "plugin:w:s"],
        "env": {"PLUGMAN_HOME": "/opt/ph", "PLUGMAN_SECRETS": "file"},
    }
    assert "env" not in launcher_entry("local", "s", {})

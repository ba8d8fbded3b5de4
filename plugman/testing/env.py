"""The isolated environment of one test: every place plugman or an agent reads or writes moved
into a temporary folder, and no way out to the network."""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

# Variables of the real environment that would move an agent's files (or plugman's) elsewhere
# or change what plugman does; every `PLUGMAN_*` variable goes too.
CLEARED = (
    "CODEX_HOME",
    "COPILOT_HOME",
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_PLUGIN_ROOT",
    "CLAUDE_PLUGIN_DATA",
    "GEMINI_CLI_HOME",
)
# A closed port: a client that honours the proxy variables (urllib, httpx, git, npm) fails at
# once instead of reaching the network; servers a test starts on this machine stay reachable.
NO_NETWORK = "http://127.0.0.1:9"
PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
LOCAL = "localhost,127.0.0.1,::1"


@dataclass(frozen=True)
class PlugmanEnv:
    """Where one test's plugman lives (every folder exists, under `root`)."""

    root: Path
    home: Path  # HOME: the agents' user files (`~/.codex`, `~/.gemini`, ...)
    plugman_home: Path  # PLUGMAN_HOME: plugman's store, state and logs
    project: Path  # the project the CLI runner passes as `--project`
    site: Path  # where `plugman_extension.entry_points` writes entry points (on the path)
    variables: dict[str, str]  # what the environment was given (besides the ones cleared)


@contextmanager
def isolated(root: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PlugmanEnv]:
    """`isolate`, with urllib's process-wide opener dropped on the way in and out: urllib builds
    it once, from the proxy variables of the moment, and would keep this test's closed-port
    proxy for every later request of the process (or the process's own for this test's)."""
    urllib.request.install_opener(None)  # None: built again on the next urlopen
    try:
        yield isolate(root, monkeypatch)
    finally:
        urllib.request.install_opener(None)


def isolate(root: Path, monkeypatch: pytest.MonkeyPatch) -> PlugmanEnv:
    """Move every place plugman and the agents use under `root` (a new folder), for as long as
    `monkeypatch` lasts."""
    home, plugman_home = root / "home", root / "plugman-home"
    project, site = root / "project", root / "site"
    variables = {
        "HOME": str(home),
        "USERPROFILE": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "PLUGMAN_HOME": str(plugman_home),
        "PLUGMAN_MANAGED_DIR": str(root / "managed"),
        "PLUGMAN_CLAUDE_MANAGED_DIR": str(root / "claude-managed"),
        "PLUGMAN_SECRETS": "file",  # never the machine's keychain
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "npm_config_offline": "true",
        **dict.fromkeys(PROXIES, NO_NETWORK),
        "NO_PROXY": LOCAL,
        "no_proxy": LOCAL,
    }
    for folder in (home, plugman_home, project, site):
        folder.mkdir(parents=True)
    for name in [*CLEARED, *(n for n in os.environ if n.startswith("PLUGMAN_"))]:
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    return PlugmanEnv(root, home, plugman_home, project, site, variables)

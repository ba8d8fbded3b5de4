"""Claude Code's session is the same whether `claude plugin install` or plugman installed a plugin.

For every plugin of the shared corpus's marketplaces that Claude Code 2.1.328 installs (as in
`test_corpus_install`), two homes: in one, Claude itself adds the marketplace and installs the
plugins; in the other, plugman does (user scope, Claude Code linked). Then one offline session
per home and marketplace (`claude_session_events`), and the inventories are compared plugin by
plugin: the init event's skills, slash commands, agents, plugins, MCP servers, plugin errors,
and the SessionStart hooks that ran (`hook_response` events). Normalised is only what must
differ: the marketplace part of an id (`skills-dir`, `plugman-user` vs the marketplace's name),
each plugin's root (Claude's cache copy vs plugman's link into its store), the home folder.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plugman.cli import invoke
from tests.conftest import CORPUS
from tests.integration import agents
from tests.integration.test_corpus_install import MARKETPLACES, catalog, local_plugins

# Deliberate differences, plugin by plugin, with the reason: (marketplace folder, plugin) -> why.
DELIBERATE: dict[tuple[str, str], str] = {}


def _claude(claude: Path, env: dict[str, str], home: Path, *args: str) -> bool:
    done = subprocess.run(
        [str(claude), "plugin", *args],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode == 0


def _plugman(*args: str) -> None:
    result = invoke(list(args))
    assert result.exit_code == 0, (args, result.output)


def _inventory(events: list[dict[str, Any]], home: Path) -> dict[str, Any]:
    """Per plugin name: what the session shows of it, roots and home normalised."""
    init = next(e for e in events if e.get("subtype") == "init")
    roots = {p["name"]: p["path"] for p in init["plugins"] if p.get("path") != "builtin"}

    def norm(text: str) -> str:
        for name, root in sorted(roots.items(), key=lambda r: -len(r[1])):
            text = text.replace(root, f"<root:{name}>")
        text = text.replace(str(home), "<home>")
        return re.sub(r"@(skills-dir|plugman-user|oracle-\d+)\b", "@<market>", text)

    found: dict[str, dict[str, Any]] = {name: {} for name in roots}

    def put(name: str, kind: str, value: Any) -> None:
        if name in found:
            found[name].setdefault(kind, []).append(value)

    for kind in ("skills", "slash_commands", "agents"):
        for item in init.get(kind, []):
            if ":" in item:
                put(item.split(":")[0], kind, item)
    # Claude keeps one server per URL or command across plugins, shown under the plugin that
    # loaded first; its installs load in install order, plugman's skills-folder links in
    # folder order. So servers are compared per session, by their own name.
    servers = sorted(
        s["name"].split(":", 2)[2]
        for s in init.get("mcp_servers", [])
        if s["name"].startswith("plugin:") and s["name"].count(":") >= 2
    )
    for plugin in init["plugins"]:
        if plugin.get("path") != "builtin":
            put(plugin["name"], "plugin", norm(json.dumps({**plugin, "path": "", "source": ""})))
    for error in init.get("plugin_errors") or []:
        name = str(error.get("plugin", "")).split("@")[0]
        put(name, "plugin_errors", norm(json.dumps(error, sort_keys=True)))
    hooks = sorted(
        norm(json.dumps({k: e.get(k) for k in ("hook_name", "stdout", "exit_code", "outcome")}))
        for e in events
        if e.get("subtype") == "hook_response"
    )
    for entry in found.values():
        for values in entry.values():
            values.sort()
    return {"plugins": found, "hooks": hooks, "servers": servers}


def _compact(real: dict[str, Any] | None, mine: dict[str, Any] | None) -> dict[str, Any]:
    """Per kind, what only Claude's install shows and what only plugman's shows."""
    real, mine = real or {"(plugin)": ["missing"]}, mine or {"(plugin)": ["missing"]}
    found = {}
    for kind in sorted(real.keys() | mine.keys()):
        a, b = set(real.get(kind, [])), set(mine.get(kind, []))
        if a != b:
            found[kind] = {"claude only": sorted(a - b), "plugman only": sorted(b - a)}
    return found


@pytest.mark.slow
@pytest.mark.parametrize("folder", list(MARKETPLACES))
def test_claude_sees_the_same_plugins_whether_claude_or_plugman_installed_them(
    folder: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    record_property: Callable[[str, object], None],
) -> None:
    claude = agents.claude_bin()
    started = time.monotonic()
    differences: dict[str, Any] = {}
    copy = tmp_path / "oracle-0"
    shutil.copytree(CORPUS / folder, copy)
    doc = catalog(copy) | {"name": copy.name}
    (copy / ".claude-plugin" / "marketplace.json").write_text(json.dumps(doc))
    theirs, ours = tmp_path / "claude", tmp_path / "plugman"
    for home in (theirs, ours):
        home.mkdir()
    # MCP_TIMEOUT: a print-mode session waits for every server before its init event, and
    # the corpus's remote servers cannot be reached here (same value on both sides).
    claude_env = agents.agent_env(theirs, Path(sys.executable).parent) | {"MCP_TIMEOUT": "2000"}
    assert _claude(claude, claude_env, theirs, "marketplace", "add", str(copy))
    specs = [
        f"{name}@{copy.name}"
        for name in local_plugins(copy)
        if _claude(claude, claude_env, theirs, "install", f"{name}@{copy.name}")
    ]
    installed = time.monotonic()
    our_env = agents.agent_env(ours, Path(sys.executable).parent) | {"MCP_TIMEOUT": "2000"}
    our_env["PLUGMAN_HOME"] = str(ours / "plugman")
    with monkeypatch.context() as patch:
        for key in ("HOME", "PLUGMAN_HOME", "XDG_CONFIG_HOME"):
            patch.setenv(key, our_env[key])
        _plugman("marketplace", "add", str(copy))
        _plugman("agents", "add", "claude-code", "--scope", "user")
        _plugman("install", *specs, "--scope", "user")
    ours_done = time.monotonic()
    a = _inventory(agents.claude_session_events(theirs, claude_env), theirs)
    b = _inventory(agents.claude_session_events(ours, our_env), ours)
    for name in sorted(a["plugins"].keys() | b["plugins"].keys()):
        if (folder, name) in DELIBERATE:
            continue
        mine, real = b["plugins"].get(name), a["plugins"].get(name)
        if mine != real:
            differences[name] = _compact(real, mine)
    if a["servers"] != b["servers"]:
        differences["MCP servers"] = _compact({"": a["servers"]}, {"": b["servers"]})
    if a["hooks"] != b["hooks"]:
        differences["SessionStart hooks"] = {"claude": a["hooks"], "plugman": b["hooks"]}
    took = time.monotonic() - started
    record_property(
        "summary",
        f"claude inventory {folder}: {len(specs)} plugins in {took:.0f} s (claude installs "
        f"{installed - started:.0f} s, plugman {ours_done - installed:.0f} s)",
    )
    assert differences == {}, json.dumps(differences, indent=1)

"""How to ask an agent's own CLI what it loaded (`Ask`, the `ask` field of an `AgentSpec`), and
how to read each built-in agent's answer into states (`agents.readback` runs it).

An `Ask` names the binary and its arguments, a reader turning its output into `Seen` (the
agent's id for an item → its state and the agent's own words; raise `ValueError` when the
output cannot be read) and what it vouches for: `plugins` (Claude Code's plugin list, keyed by
Claude's plugin id), `servers` (an MCP server list, keyed by server name) or `skills` (a skill
list, keyed by the skill folder's real path).

What the agents' lists can say (checked with Claude Code 2.1.328, Codex 0.169.0, Gemini CLI
0.61.0, Copilot CLI 1.0.102): `claude plugin list --json` lists skills-folder plugins and
the plugins in Claude's install record, each with its load `errors`; a plugin plugman enables
from its generated marketplace gets there only once a Claude session records it (it loads
either way; until then the list cannot confirm it: `unconfirmed`), and a project one is then
listed with scope `local` (said in `LOCAL_SCOPE`). `gemini mcp list` starts every server and
says `Connected`, `Disconnected` or `Disabled`. `codex mcp list --json` and `copilot mcp list
--json` say which servers the agent read and whether each is enabled; they start none.
`gemini skills list` and `copilot skill list --json` say which skill folders it read (Gemini
lists no workspace skill of a folder it does not trust; Copilot reads them untrusted).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

OK = "ok"
FAILED = "failed"
DISABLED = "disabled"
MISSING = "missing"
UNCONFIRMED = "unconfirmed"
Seen = dict[str, tuple[str, str]]  # the agent's id → (state, its own words)


class Ask(NamedTuple):
    binary: str
    args: tuple[str, ...]
    read: Callable[[str], Seen]
    kind: str  # plugins | servers | skills
    stderr: bool = False  # the list is printed on stderr (Gemini CLI)


def _claude(out: str) -> Seen:
    data = json.loads(out[out.index("[") :]) if "[" in out else None
    if not isinstance(data, list):
        raise ValueError("no JSON list of plugins")
    seen: Seen = {}
    for item in data:
        errors = [str(e) for e in item.get("errors") or []]
        state = FAILED if errors else OK if item.get("enabled") else DISABLED
        words = "; ".join(errors) or ("loaded" if state == OK else "not enabled")
        claude_id = str(item.get("id"))
        if state == OK and item.get("scope") == "local" and PROJECT_NATIVE.search(claude_id):
            words += f" ({LOCAL_SCOPE})"
        seen[claude_id] = (state, words)
    return seen


PROJECT_NATIVE = re.compile(r"@plugman-project-[0-9a-f]+$")  # claude_plugin.plan's project ids
# Claude reports a plugin's scope from the settings file that turns it on; plugman turns a
# project plugin on in .claude/settings.local.json (docs/claude-native.md, "Scope: local").
LOCAL_SCOPE = (
    'Claude calls its scope "local": plugman turns the project\'s plugins on for this machine '
    "in .claude/settings.local.json, kept out of git; the project shares them through "
    "plugman.toml and plugman.lock"
)


def _codex(out: str) -> Seen:
    data = json.loads(out[out.index("[") :]) if "[" in out else None
    if not isinstance(data, list):
        raise ValueError("no JSON list of servers")
    return {
        str(s.get("name")): (OK, "enabled")
        if s.get("enabled")
        else (DISABLED, f"disabled: {s.get('disabled_reason') or 'no reason given'}")
        for s in data
    }


def _copilot(out: str) -> Seen:
    data = json.loads(out[out.index("{") :]) if "{" in out else None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ValueError("no JSON object with mcpServers")
    return {
        name: (OK, "enabled") if s.get("enabled", True) else (DISABLED, "disabled")
        for name, s in servers.items()
    }


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_GEMINI_ROW = re.compile(r"^\s*\S\s+([^\s:]+): .* - (\w[\w ]*?)\s*$")
_GEMINI_STATES = {"Connected": OK, "Disabled": DISABLED}


def _gemini(out: str) -> Seen:
    text = _ANSI.sub("", out)
    why = next((line.strip() for line in text.splitlines() if line.startswith("Warning:")), "")
    seen: Seen = {}
    for line in text.splitlines():
        match = _GEMINI_ROW.match(line)
        if match:
            status = match.group(2)
            state = _GEMINI_STATES.get(status, FAILED)
            seen[match.group(1)] = (state, f"{status} ({why})" if why and state != OK else status)
    if not seen and "No MCP servers configured" not in text:
        raise ValueError("no server rows")
    return seen


_GEMINI_SKILL = re.compile(r"^(\S.*?) \[(\w+)\]\s*$")
_GEMINI_WHERE = re.compile(r"^\s+Location:\s+(.+?)\s*$")


def _gemini_skills(out: str) -> Seen:
    """`gemini skills list`: `NAME [Enabled]` then `  Location: <folder>/SKILL.md`, keyed by the
    folder's real path; a workspace skill of a folder Gemini does not trust is not listed."""
    text = _ANSI.sub("", out)
    if "Discovered Agent Skills" not in text and "No skills discovered" not in text:
        raise ValueError("no skill list")
    seen: Seen = {}
    name, status = "", ""
    for line in text.splitlines():
        if found := _GEMINI_SKILL.match(line):
            name, status = found.groups()
        elif (where := _GEMINI_WHERE.match(line)) and name:
            state = OK if status == "Enabled" else DISABLED
            folder = os.path.realpath(Path(where.group(1)).parent)
            seen[folder] = (state, f"{name} [{status}]")
    return seen


def _copilot_skills(out: str) -> Seen:
    """`copilot skill list --json`: each skill with its folder (`path`) and `enabled`."""
    data = json.loads(out[out.index("[") :]) if "[" in out else None
    if not isinstance(data, list):
        raise ValueError("no JSON list of skills")
    return {
        os.path.realpath(str(s["path"])): (OK, f"{s.get('name')}: enabled")
        if s.get("enabled", True)
        else (DISABLED, f"{s.get('name')}: disabled")
        for s in data
        if isinstance(s, dict) and s.get("path")
    }


# The built-in agents' read-backs (`AgentSpec.ask` in `table`).
CLAUDE = Ask("claude", ("plugin", "list", "--json"), _claude, "plugins")
CODEX = Ask("codex", ("mcp", "list", "--json"), _codex, "servers")
GEMINI = Ask("gemini", ("mcp", "list"), _gemini, "servers", stderr=True)
GEMINI_SKILLS = Ask("gemini", ("skills", "list"), _gemini_skills, "skills")
COPILOT = Ask("copilot", ("mcp", "list", "--json"), _copilot, "servers")
COPILOT_SKILLS = Ask("copilot", ("skill", "list", "--json"), _copilot_skills, "skills")

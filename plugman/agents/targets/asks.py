"""How to ask an agent's own CLI what it loaded (`Ask`, the `ask` field of an `AgentSpec`), and
how to read each built-in agent's answer into states (`agents.readback` runs it).

An `Ask` names the binary and its arguments, a reader turning its output into `Seen` (the
agent's id for an item → its state and the agent's own words; raise `ValueError` when the
output cannot be read) and what it vouches for: `plugins` (Claude Code's plugin list, keyed by
Claude's plugin id), `servers` (an MCP server list, keyed by server name) or `skills` (a skill
list, keyed by the skill folder's real path) or `hooks` (a hook list, keyed by the agent's
own key for each hook, which plugman's record holds as the entry of `Ask.entries`, with
`UNTRUSTED` for a hook the agent lists but will not run until the user reviews it).

An `Ask` with `requests` is a JSON-RPC conversation over the agent's stdin and stdout: each
request is written as one line, and the reader gets the one line answering the last request
(Codex's `app-server`, which ends when its stdin closes and answers nothing then).

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
`codex app-server`'s `hooks/list` (Codex 0.171.0, `cwds` empty: the folder it runs in) lists
every hook it read, user and project, each with its `key` (`<hooks.json>:<event_snake>:<group>:
<handler>`, the key of its `hooks.state` trust entry), `enabled` and `trustStatus` (`trusted`,
`managed`, `untrusted`: no trust entry, `modified`: its content is not what was trusted; Codex
runs neither until the user reviews it in `/hooks`); a `hooks.json` it cannot read is one of
its `warnings` ("failed to parse hooks config <file>: …"); it lists no hook of a project folder
Codex does not trust.
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
UNTRUSTED = "untrusted"
Seen = dict[str, tuple[str, str]]  # the agent's id → (state, its own words)


class Ask(NamedTuple):
    binary: str
    args: tuple[str, ...]
    read: Callable[[str], Seen]
    kind: str  # plugins | servers | skills | hooks
    stderr: bool = False  # the list is printed on stderr (Gemini CLI)
    requests: tuple[dict[str, object], ...] = ()  # JSON-RPC over stdio; () a plain command
    entries: tuple[str, ...] = ()  # hooks: where plugman's record holds the agent's keys
    review: str = ""  # hooks: what the user does about an `UNTRUSTED` one


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


def _codex_hooks(out: str) -> Seen:
    """`hooks/list`'s answer: each hook by its key; a file Codex could not read by its path
    (`readback` looks a hook up there when its key is not listed)."""
    data = json.loads(out)
    if not isinstance(data, dict):
        raise ValueError("no JSON-RPC answer")
    if isinstance(data.get("error"), dict):
        raise ValueError(f"codex answered: {data['error'].get('message', 'an error')}")
    found = data.get("result", {}).get("data") if isinstance(data.get("result"), dict) else None
    if not isinstance(found, list):
        raise ValueError("no list of hooks")
    seen: Seen = {}
    for folder in found:
        for error in folder.get("errors") or []:
            seen[str(error.get("path"))] = (FAILED, str(error.get("message", "unreadable")))
        for warning in folder.get("warnings") or []:
            if unread := _CODEX_UNREAD.match(str(warning)):
                seen[unread.group(1)] = (FAILED, str(warning))
        for hook in folder.get("hooks") or []:
            status = str(hook.get("trustStatus"))
            if not hook.get("enabled", True):
                said = (DISABLED, "disabled")
            elif status in ("trusted", "managed"):
                said = (OK, status)
            else:
                said = (UNTRUSTED, _CODEX_UNTRUSTED.get(status, status))
            seen[str(hook.get("key"))] = said
    return seen


_CODEX_UNREAD = re.compile(r"failed to parse hooks config (.+?): ")
_CODEX_UNTRUSTED = {
    "untrusted": "untrusted: Codex has no trust for the hook at this place, and does not run it",
    "modified": "modified: the hook at this place is not the one trusted, and Codex does not "
    "run it",
}


# The built-in agents' read-backs (`AgentSpec.ask` in `table`).
CLAUDE = Ask("claude", ("plugin", "list", "--json"), _claude, "plugins")
CODEX = Ask("codex", ("mcp", "list", "--json"), _codex, "servers")
GEMINI = Ask("gemini", ("mcp", "list"), _gemini, "servers", stderr=True)
GEMINI_SKILLS = Ask("gemini", ("skills", "list"), _gemini_skills, "skills")
CODEX_HOOKS = Ask(
    "codex",
    ("app-server",),
    _codex_hooks,
    "hooks",
    requests=(
        {
            "id": 0,
            "method": "initialize",
            "params": {"clientInfo": {"name": "plugman", "version": "0"}, "capabilities": None},
        },
        {"method": "initialized"},
        {"id": 1, "method": "hooks/list", "params": {"cwds": []}},
    ),
    entries=("hooks", "state"),
    review="review it in Codex's /hooks, or have plugman write it again: plugman agents add "
    "codex --scope {scope}",
)
COPILOT = Ask("copilot", ("mcp", "list", "--json"), _copilot, "servers")
COPILOT_SKILLS = Ask("copilot", ("skill", "list", "--json"), _copilot_skills, "skills")

"""Read-back: ask each linked agent's own CLI what it loaded of what plugman delivered, and
report what it failed to load in the agent's own words (`plugman doctor`, `list --check`,
`info --check`).

One row per agent in `ASKS`: the command, how to read its output, and what it can vouch for
(`plugins`: Claude Code's plugin list, keyed by Claude's plugin id; `servers`: an MCP server
list, keyed by server name). What plugman delivered comes from its records: the deployment
record (`deployments.json`) for Claude's plugins, whose Claude id is the deployed link's name
(`~/.claude/skills/NAME` is `NAME@skills-dir`, `<marketplace>/plugins/NAME` is
`NAME@<marketplace>`, as `claude_plugin.plan` names them), and the export record for servers.

An agent runs with the environment plugman was given, in the project folder, with no input and
a timeout; one that is not on PATH, too slow, failing or printing what cannot be read is "not
checked", with why, and never fails the caller. Output is read for names and states only:
`codex mcp list --json` prints servers' env values, which go nowhere.

What the agents' lists can say (checked with Claude Code 2.1.328, Codex 0.169.0, Gemini CLI
0.61.0, Copilot CLI 1.0.102): `claude plugin list --json` lists skills-folder plugins and
the plugins in Claude's install record, each with its load `errors`; a plugin plugman enables
from its generated marketplace gets there only once a Claude session records it (it loads
either way; until then the list cannot confirm it: `unconfirmed`), and a project one is then
listed with scope `local` (said in `LOCAL_SCOPE`). `gemini mcp list` starts every server and
says `Connected`, `Disconnected` or `Disabled`. `codex mcp list --json` and `copilot mcp list
--json` say which servers the agent read and whether each is enabled; they start none.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

from plugman.core.errors import PlugmanError
from plugman.core.paths import Paths
from plugman.core.state import SCOPES

TIMEOUT_S = 60.0
OK, FAILED, DISABLED, MISSING, UNCONFIRMED = "ok", "failed", "disabled", "missing", "unconfirmed"
Seen = dict[str, tuple[str, str]]  # the agent's id → (state, its own words)


class Item(NamedTuple):
    plugin: str | None  # plugman's plugin id (None: a server of plugman.toml's own)
    name: str  # the agent's id for it: Claude's plugin id, a server name
    state: str  # ok | failed | disabled | missing | unconfirmed
    detail: str  # what the agent said
    scope: str = ""  # the scope plugman delivered it in

    def as_json(self) -> dict[str, Any]:
        return self._asdict()


class Report(NamedTuple):
    agent: str
    command: str  # as run, its binary by name
    checked: bool
    reason: str  # why not checked ("" when checked)
    items: list[Item]

    def as_json(self) -> dict[str, Any]:
        return {**self._asdict(), "items": [i.as_json() for i in self.items]}


class Ask(NamedTuple):
    binary: str
    args: tuple[str, ...]
    read: Callable[[str], Seen]
    kind: str  # plugins | servers
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


ASKS: dict[str, Ask] = {
    "claude-code": Ask("claude", ("plugin", "list", "--json"), _claude, "plugins"),
    "codex": Ask("codex", ("mcp", "list", "--json"), _codex, "servers"),
    "gemini": Ask("gemini", ("mcp", "list"), _gemini, "servers", stderr=True),
    "copilot-cli": Ask("copilot", ("mcp", "list", "--json"), _copilot, "servers"),
}


def ask(
    paths: Paths,
    env: Mapping[str, str],
    agents: list[str] | None = None,
    timeout: float = TIMEOUT_S,
) -> list[Report]:
    """Each of `agents` (default: every agent linked or delivered to here) that plugman can
    ask, asked at once (in parallel)."""
    from plugman.agents import links

    expected = _expected(paths)
    if agents is None:
        try:
            linked = {link.agent for link in links.every(paths)}
        except PlugmanError:  # a broken plugman.toml: the caller reports it; ask the others
            linked = set()
        agents = sorted(linked | set(expected))
    chosen = [a for a in dict.fromkeys(agents) if a in ASKS]
    if not chosen:
        return []
    with ThreadPoolExecutor(max_workers=len(chosen)) as pool:  # each waits on its process
        runs = [
            pool.submit(_one, a, ASKS[a], paths.project_dir, env, timeout, expected.get(a, {}))
            for a in chosen
        ]
        return [r.result() for r in runs]


def _one(
    agent: str,
    how: Ask,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    expected: dict[str, tuple[str | None, str]],
) -> Report:
    command = " ".join((how.binary, *how.args))
    found = shutil.which(how.binary, path=env.get("PATH", ""))
    if found is None:
        return Report(agent, command, False, f"{how.binary} is not on PATH", [])
    try:
        proc = subprocess.run(
            [found, *how.args],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Report(agent, command, False, f"{how.binary} gave no answer in {timeout:g} s", [])
    except OSError as exc:
        return Report(agent, command, False, f"{how.binary} could not run: {exc.strerror}", [])
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1][:200]
        return Report(agent, command, False, f"exit code {proc.returncode}: {last}", [])
    try:
        seen = how.read(proc.stdout + (proc.stderr if how.stderr else ""))
    except (ValueError, AttributeError) as exc:
        return Report(agent, command, False, f"its output could not be read ({exc})", [])
    return Report(agent, command, True, "", _items(how, seen, expected))


def _items(how: Ask, seen: Seen, expected: dict[str, tuple[str | None, str]]) -> list[Item]:
    items = []
    for name, (plugin, scope) in sorted(expected.items()):
        if name in seen:
            state, words = seen[name]
        elif how.kind == "plugins" and not name.endswith("@skills-dir"):
            state, words = (
                UNCONFIRMED,
                (
                    "not listed: `claude plugin list` lists a plugin from plugman's generated "
                    "marketplace only once a Claude session has recorded it (in a project, only "
                    "in a git repository that ignores .claude/settings.local.json); it loads "
                    "either way"
                ),
            )
        else:
            state, words = MISSING, f"not in `{how.binary} {' '.join(how.args)}`"
        items.append(Item(plugin, name, state, words, scope))
    return items


def _expected(paths: Paths) -> dict[str, dict[str, tuple[str | None, str]]]:
    """agent → its id for each thing plugman delivered to it here → plugman's plugin id and
    the scope."""
    from plugman.agents import artifacts
    from plugman.agents.delivered import HOOK_ID
    from plugman.config import export_record

    here = {export_record.key("", scope, paths).strip() for scope in SCOPES}
    found: dict[str, dict[str, tuple[str | None, str]]] = {}
    for key, files in export_record.load(paths).items():
        agent, _, rest = key.partition(" ")
        if rest not in here or ASKS.get(agent, ASKS["claude-code"]).kind != "servers":
            continue
        for sealed in files.values():
            for part in sealed.parts:
                for entry in part.entries:
                    if not HOOK_ID.match(entry):
                        owner = sealed.owners.get(entry)
                        found.setdefault(agent, {})[entry] = (owner, rest.split(" ")[0])
    for path, item in artifacts.load(paths).items():
        links = [link.partition(" ") for link in item["links"]]
        if item.get("kind") == "plugin" and item.get("owner"):
            for agent, _, rest in links:
                if rest in here and agent == "claude-code":
                    scope = rest.split(" ")[0]
                    found.setdefault(agent, {})[claude_id(Path(path))] = (item["owner"], scope)
    return found


def claude_id(link: Path) -> str:
    """Claude's plugin id for a plugin plugman deployed as `link`, as `claude_plugin.plan`
    names it (`NativePlan.ids`)."""
    from plugman.agents.claude_plugin import SKILLS_DIR

    if link.parent.name == "plugins":  # <marketplace folder>/plugins/NAME
        return f"{link.name}@{link.parent.parent.name}"
    return f"{link.name}@{SKILLS_DIR}"  # <claude config>/skills/NAME


def by_plugin(reports: list[Report]) -> dict[tuple[str, str], dict[str, list[Item]]]:
    """(plugin id, scope) → agent → what the agent said of it (`list --check`,
    `info --check`)."""
    found: dict[tuple[str, str], dict[str, list[Item]]] = {}
    for report in reports:
        for item in report.items:
            if item.plugin:
                key = (item.plugin, item.scope)
                found.setdefault(key, {}).setdefault(report.agent, []).append(item)
    return found

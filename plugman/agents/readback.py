"""Read-back: ask each linked agent's own CLI what it loaded of what plugman delivered, and
report what it failed to load in the agent's own words (`plugman doctor`, `list --check`,
`info --check`).

Each agent says how it is asked in its `AgentSpec.ask` (`targets.asks`: the command, how to
read its output, and what it can vouch for: `plugins`, Claude Code's plugin list, keyed by
Claude's plugin id; `servers`, an MCP server list, keyed by server name); an agent with none
is not asked. What plugman delivered comes from its records: the deployment
record (`deployments.json`) for Claude's plugins, whose Claude id is the deployed link's name
(`~/.claude/skills/NAME` is `NAME@skills-dir`, `<marketplace>/plugins/NAME` is
`NAME@<marketplace>`, as `claude_plugin.plan` names them), and the export record for servers.

An agent runs with the environment plugman was given, in the project folder, with no input and
a timeout; one that is not on PATH, too slow, failing or printing what cannot be read is "not
checked", with why, and never fails the caller. Output is read for names and states only:
`codex mcp list --json` prints servers' env values, which go nowhere.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

from plugman.agents.targets.asks import MISSING, UNCONFIRMED, Ask, Seen
from plugman.core.errors import PlugmanError
from plugman.core.paths import Paths
from plugman.core.state import SCOPES

TIMEOUT_S = 60.0


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


def ask(
    paths: Paths,
    env: Mapping[str, str],
    agents: list[str] | None = None,
    timeout: float = TIMEOUT_S,
) -> list[Report]:
    """Each of `agents` (default: every agent linked or delivered to here) that plugman can
    ask, asked at once (in parallel)."""
    from plugman.agents import links

    asks = _asks()
    expected = _expected(paths, asks)
    if agents is None:
        try:
            linked = {link.agent for link in links.every(paths)}
        except PlugmanError:  # a broken plugman.toml: the caller reports it; ask the others
            linked = set()
        agents = sorted(linked | set(expected))
    chosen = [a for a in dict.fromkeys(agents) if a in asks]
    if not chosen:
        return []
    with ThreadPoolExecutor(max_workers=len(chosen)) as pool:  # each waits on its process
        runs = [
            pool.submit(_one, a, asks[a], paths.project_dir, env, timeout, expected.get(a, {}))
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


def _asks() -> dict[str, Ask]:
    """How each agent plugman knows is asked, for those that can be."""
    from plugman import extensions

    return {name: spec.ask for name, spec in extensions.targets().items() if spec.ask}


def _expected(paths: Paths, asks: dict[str, Ask]) -> dict[str, dict[str, tuple[str | None, str]]]:
    """agent → its id for each thing plugman delivered to it here → plugman's plugin id and
    the scope."""
    from plugman.agents import artifacts
    from plugman.agents.delivered import HOOK_ID
    from plugman.config import export_record

    here = {export_record.key("", scope, paths).strip() for scope in SCOPES}
    found: dict[str, dict[str, tuple[str | None, str]]] = {}
    for key, files in export_record.load(paths).items():
        agent, _, rest = key.partition(" ")
        how = asks.get(agent)
        if rest not in here or how is None or how.kind != "servers":
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
                how = asks.get(agent)
                if rest in here and how is not None and how.kind == "plugins":
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

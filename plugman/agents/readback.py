"""Read-back: ask each linked agent's own CLI what it loaded of what plugman delivered, and
report what it failed to load in the agent's own words (`plugman doctor`, `list --check`,
`info --check`).

Each agent says how it is asked in its `AgentSpec.ask`, `ask_skills` and `ask_hooks`
(`targets.asks`: the command, how to read its output, and what it can vouch for: `plugins`,
Claude Code's plugin list, keyed by Claude's plugin id; `servers`, an MCP server list, keyed by
server name; `skills`, a skill list, keyed by the skill folder's real path; `hooks`, a hook
list keyed by the agent's own key, which plugman's record holds as the trust entry it wrote:
Codex's `hooks.state`); an agent with none is not asked.

What plugman delivered comes from its records, each compared only with its own kind: the
deployment record (`deployments.json`) for Claude's plugins, whose Claude id is the
deployed link's name (`~/.claude/skills/NAME` is `NAME@skills-dir`,
`<marketplace>/plugins/NAME` is `NAME@<marketplace>`, as `claude_plugin.plan` names them), and
for skills; the export record for servers (the entries of the agent's server table only:
Codex's hook-trust keys are not servers) and for hooks (the entries of `Ask.entries`). A hook
the agent lists but does not trust is `untrusted`, with the step (`Ask.review`).

What an agent does not load because it waits for the user's folder trust is said so (`waits`,
with the step to take: `agents.gating`), not "missing".

An agent runs with the environment plugman was given, in the project folder, with no input and
a timeout; one that is not on PATH, too slow, failing or printing what cannot be read is "not
checked", with why, and never fails the caller. Output is read for names and states only:
`codex mcp list --json` prints servers' env values, which go nowhere.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

from plugman import extensions
from plugman.agents import artifacts, export_record, links
from plugman.agents.delivered import claude_id
from plugman.agents.gating import WAITS, Gating
from plugman.agents.targets.asks import (
    DISABLED,
    FAILED,
    MISSING,
    OK,
    UNCONFIRMED,
    UNTRUSTED,
    Ask,
    Seen,
)
from plugman.core.paths import Paths
from plugman.core.state import SCOPES

TIMEOUT_S = 60.0


class Item(NamedTuple):
    plugin: str | None  # plugman's plugin id (None: a server of plugman.toml's own)
    name: str  # the agent's id for it: Claude's plugin id, a server name
    state: str  # ok | failed | disabled | missing | unconfirmed | untrusted | waits
    detail: str  # what the agent said
    scope: str = ""  # the scope plugman delivered it in
    step: str = ""  # what the user does about it (waits)

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
    asks, tables = _asks()
    expected = _expected(paths, tables)
    if agents is None:
        linked = {link.agent for link in links.readable(paths)}  # a broken file: its check
        agents = sorted(linked | set(expected))
    chosen = [a for a in dict.fromkeys(agents) if a in asks]
    if not chosen:
        return []
    gating = Gating(paths.project_dir, Path(env.get("HOME") or Path.home()), env)

    def one_agent(agent: str) -> list[Report]:
        """An agent's lists one after the other: each may start its servers, and two of one
        agent starting the same servers at once can make one of them fail to connect."""
        wanted = expected.get(agent, {})
        return [
            _gated(_one(agent, how, paths.project_dir, env, timeout, wanted.get(how.kind, {})),
                   how.kind, gating)
            for how in asks[agent]
        ]  # fmt: skip

    with ThreadPoolExecutor(max_workers=len(chosen)) as pool:  # each waits on its processes
        return [report for run in pool.map(one_agent, chosen) for report in run]


def _one(
    agent: str,
    how: Ask,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    expected: Wanted,
) -> Report:
    command = " ".join((how.binary, *how.args))
    found = shutil.which(how.binary, path=env.get("PATH", ""))
    if found is None:
        return Report(agent, command, False, f"{how.binary} is not on PATH", [])
    try:
        if how.requests:
            out = _converse([found, *how.args], how.requests, cwd, env, timeout)
        else:
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
            if proc.returncode != 0:
                last = (proc.stderr.strip().splitlines() or ["no output"])[-1][:200]
                return Report(agent, command, False, f"exit code {proc.returncode}: {last}", [])
            out = proc.stdout + (proc.stderr if how.stderr else "")
    except subprocess.TimeoutExpired:
        return Report(agent, command, False, f"{how.binary} gave no answer in {timeout:g} s", [])
    except OSError as exc:
        return Report(agent, command, False, f"{how.binary} could not run: {exc.strerror}", [])
    except EOFError as exc:
        return Report(agent, command, False, f"{how.binary} {exc}", [])
    try:
        seen = how.read(out)
    except (ValueError, AttributeError) as exc:
        return Report(agent, command, False, f"its output could not be read ({exc})", [])
    return Report(agent, command, True, "", _items(how, seen, expected))


def _converse(
    argv: list[str],
    requests: tuple[dict[str, object], ...],
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
) -> str:
    """The line answering the last of `requests`, each written as a JSON-RPC line to the
    process's stdin, which stays open until then (`codex app-server` answers nothing once it
    closes); notifications and other answers are passed over. The process then ends with its
    stdin closed, or is killed. Raises `subprocess.TimeoutExpired` past `timeout`, `OSError`
    when it cannot run, `EOFError` when it ends without answering."""
    last = requests[-1].get("id")
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    assert proc.stdin is not None and proc.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    out = proc.stdout

    def pump() -> None:  # a reader that never blocks the deadline below
        for line in out:
            lines.put(line)
        lines.put("")

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + timeout
    try:
        try:
            proc.stdin.write("".join(json.dumps({"jsonrpc": "2.0", **r}) + "\n" for r in requests))
            proc.stdin.flush()
        except BrokenPipeError:  # it ended already: said below, with its exit code
            pass
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise subprocess.TimeoutExpired(argv, timeout) from None
            if not line:
                raise EOFError(f"ended without answering (exit code {proc.wait()})")
            if _answers(line, last):
                return line
    finally:
        _end(proc)


def _answers(line: str, request: object) -> bool:
    try:
        message = json.loads(line)
    except ValueError:
        return False
    return isinstance(message, dict) and "method" not in message and message.get("id") == request


def _end(proc: subprocess.Popen[str]) -> None:
    """Close its stdin (the server's cue to end) and wait a little; kill it if it stays."""
    try:
        if proc.stdin is not None:
            proc.stdin.close()
    except OSError:  # it is gone already
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _items(how: Ask, seen: Seen, expected: Wanted) -> list[Item]:
    items = []
    for (name, scope), plugin in sorted(expected.items()):
        step = ""
        whole = name.rsplit(":", 3)[0] if how.kind == "hooks" else ""  # the hook's file
        if name in seen:
            state, words = seen[name]
            if state == UNTRUSTED:
                step = how.review.format(scope=scope)
        elif whole in seen:  # the agent could not read the file it is in
            state, words = seen[whole]
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
        items.append(Item(plugin, name, state, words, scope, step))
    return items


Tables = dict[str, dict[tuple[str, ...], str]]  # agent → a table in its files → the kind


def _asks() -> tuple[dict[str, tuple[Ask, ...]], Tables]:
    """How each agent plugman knows is asked, for those that can be, and which tables of its
    files hold what each kind compares: its servers, and the keys of its hooks (`Ask.entries`)."""
    found: dict[str, tuple[Ask, ...]] = {}
    tables: Tables = {}
    for name, spec in extensions.targets().items():
        every = (spec.ask, spec.ask_skills, spec.ask_hooks)
        asked = tuple(how for how in every if how is not None)
        if asked:
            found[name] = asked
            tables[name] = {spec.mcp.key: "servers"}
            tables[name].update({how.entries: how.kind for how in asked if how.entries})
    return found, tables


Wanted = dict[tuple[str, str], str | None]  # (the agent's id, scope) → plugman's plugin id
Expected = dict[str, dict[str, Wanted]]


def _expected(paths: Paths, tables: Tables) -> Expected:
    """agent → kind (`plugins`, `servers`, `skills`, `hooks`) → (its id for each thing plugman
    delivered to it here, the scope) → plugman's plugin id."""
    here = {export_record.key("", scope, paths).strip() for scope in SCOPES}
    found: Expected = {}

    def add(agent: str, kind: str, name: str, plugin: str | None, scope: str) -> None:
        found.setdefault(agent, {}).setdefault(kind, {})[(name, scope)] = plugin

    for key, files in export_record.load(paths).items():
        agent, _, rest = key.partition(" ")
        if rest not in here or agent not in tables:
            continue
        for sealed in files.values():
            for part in sealed.parts:
                kind = tables[agent].get(part.container)  # hooks, inputs: none of these
                if kind is None:
                    continue
                for entry in part.entries:
                    add(agent, kind, entry, sealed.owners.get(entry), rest.split(" ")[0])
    for path, item in artifacts.load(paths).items():
        kind = {"plugin": "plugins", "skills": "skills"}.get(item.kind or "")
        if kind is None or not item.owner:
            continue
        for agent, _, rest in (link.partition(" ") for link in item.links):
            if rest in here:
                name = claude_id(Path(path)) if kind == "plugins" else os.path.realpath(path)
                add(agent, kind, name, item.owner, rest.split(" ")[0])
    return found


def _gated(report: Report, asked: str, gating: Gating) -> Report:
    """`report` with what the agent did not load for want of the user's folder trust said so,
    with the step to take."""
    items = []
    kind = _KINDS[asked]
    loads: dict[str, bool] = {
        s: gating.loading(report.agent, s, [kind]).state != WAITS for s in SCOPES
    }
    for item in report.items:
        # listed, but as the same name another scope gives it, which the agent loads
        other = any(i.name == item.name and loads[i.scope] for i in report.items if i != item)
        if item.state in (MISSING, DISABLED, FAILED, UNCONFIRMED) or (
            other and not loads[item.scope]
        ):
            waits = gating.loading(report.agent, item.scope, [kind])
            if waits.state == WAITS and item.state != FAILED:
                listed = "the one listed is another scope's" if item.state == OK else item.detail
                said = f"for {waits.detail.removeprefix('waits for ')} ({waits.step}); {listed}"
                item = item._replace(state=WAITS, detail=said, step=waits.step)
        items.append(item)
    return report._replace(items=items)


# Ask.kind → component
_KINDS = {"plugins": "plugin", "servers": "mcp", "skills": "skills", "hooks": "hooks"}


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

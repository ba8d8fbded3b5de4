"""The agent side of `plugman doctor`: entries and links pointing into store folders that are
gone (`agents.dangling`), and what the agents' own CLIs say they failed to load
(`agents.readback`), each as a problem with what to do."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from plugman.agents import artifacts, claude_own, claude_plugin, dangling, delivered, links
from plugman.agents.gating import LOADED, SHADOWED
from plugman.agents.readback import Report
from plugman.agents.targets.asks import DISABLED, FAILED, MISSING, UNTRUSTED
from plugman.core.paths import Paths
from plugman.core.state import InstallRecord
from plugman.doctor.problem import ERROR, WARNING, Problem

CLAUDE = "claude-code"


def waiting(paths: Paths, env: Mapping[str, str]) -> list[Problem]:
    """A warning per agent and scope whose deliveries the agent does not load: it waits for the
    user's folder trust, or the user turned it off in Claude's settings (a name Claude's own
    install takes: `two_copies`)."""
    reached = delivered.by_scope(paths)
    held: dict[tuple[str, str, str, str], list[str]] = {}  # (agent, scope, detail, step) → ids
    for (plugin, scope), agents in delivered.loading(paths, env, reached).items():
        for agent, loads in agents.items():
            if loads.state not in (LOADED, SHADOWED):
                held.setdefault((agent, scope, loads.detail, loads.step), []).append(plugin)
    return [
        Problem(WARNING, agent, f"{agent} ({scope} scope) {detail}: {', '.join(ids)}", step)
        for (agent, scope, detail, step), ids in sorted(held.items())
    ]


def claude_installs(paths: Paths, env: Mapping[str, str]) -> list[claude_own.OwnInstall]:
    home = Path(env.get("HOME") or Path.home())
    return claude_own.installs(claude_plugin.config_dir(home, env), paths.project_dir)


def _both_ways(own: claude_own.OwnInstall, plugin_id: str, scope: str) -> str:
    """The two ways to one copy: Claude's own install out, or plugman's."""
    return (
        f"to have plugman's copy: {own.uninstall()} (or plugman import claude --apply, which "
        f"retires it and can be undone); to keep Claude's: plugman uninstall {plugin_id} "
        f"--scope {scope}"
    )


def two_copies(paths: Paths, env: Mapping[str, str]) -> list[Problem]:
    """Each plugin plugman would deliver to a linked Claude Code whose name Claude's own
    install holds there (plugman then leaves it to Claude's copy: `claude_native`)."""
    scopes = {link.scope for link in links.readable(paths) if link.agent == CLAUDE}
    own = claude_installs(paths, env) if scopes else []
    found = []
    for scope in sorted(scopes):
        for plugin_id, entry in InstallRecord.load(paths, scope).plugins.items():
            theirs = claude_own.taking(own, plugin_id.partition("@")[0], scope)
            if theirs is None or not entry.enabled:
                continue
            found.append(
                Problem(
                    WARNING,
                    CLAUDE,
                    f"{CLAUDE} loads its own install {theirs.id} ({theirs.scope} scope), not "
                    f"plugman's {plugin_id} ({scope}): one name, two copies",
                    _both_ways(theirs, plugin_id, scope),
                )
            )
    return found


# (plugman wrote it, it names a store folder) → what to do
_GONE_HINTS = {
    (True, True): "reinstall the plugin it comes from (doctor names its missing stored copy), "
    "then run: plugman sync",
    (True, False): "install the plugin (plugman sync installs the ones the project declares)",
    (False, True): "delete the entry, or point it at a path that exists; plugman leaves an "
    "entry edited by hand alone",
    (False, False): "install the plugin (plugman sync installs the ones the project declares), "
    "or delete the entry; plugman leaves an entry it did not write here alone",
}


def gone(paths: Paths, env: Mapping[str, str]) -> list[Problem]:
    found = []
    for entry in dangling.entries(paths, env):
        whose = (
            "plugman wrote it" if entry.plugmans else "yours: edited by hand, or not plugman's here"
        )
        hint = _GONE_HINTS[entry.plugmans, entry.gone == dangling.STORE_GONE]
        message = f"{entry.key} names {entry.target}, {entry.gone} ({whose})"
        found.append(Problem(ERROR, entry.file, message, hint))
    for link in dangling.links(paths):
        agent, scope, *_ = (link.links[0] if link.links else "AGENT SCOPE").split(" ")
        found.append(
            Problem(
                ERROR,
                link.path,
                f"links to {link.target}, which no longer exists",
                f"deploy again: plugman agents add {agent} --scope {scope}",
            )
        )
    return found


_SAID = {
    FAILED: (ERROR, "failed to load", "fix what {agent} says, or uninstall the plugin"),
    DISABLED: (
        WARNING,
        "has but does not use",
        "{agent} says why; trust the project folder in {agent} if it asks for that",
    ),
    UNTRUSTED: (WARNING, "does not trust", "review it in {agent}"),
    MISSING: (
        WARNING,
        "does not list",
        "{agent} does not read the file plugman wrote it in here (is the project folder "
        "trusted in {agent}?); to write it again: plugman agents add {agent}",
    ),
}


TAKEN = re.compile(r"already taken by an installed plugin \(([^()\s]+)\)")


def said(reports: list[Report], own: list[claude_own.OwnInstall] | None = None) -> list[Problem]:
    """A problem for each thing an agent says it failed to load, left unused or lacks; a name
    Claude's own install takes names that install (`own`: Claude's installs here)."""
    found = []
    for report in reports:
        for item in report.items:
            if item.state not in _SAID:  # a `waits` is said once per scope by `waiting`
                continue
            severity, verb, hint = _SAID[item.state]
            hint = item.step or hint.format(agent=report.agent)
            taken = TAKEN.search(item.detail)
            theirs = next((i for i in own or [] if taken and i.id == taken.group(1)), None)
            if theirs is not None and item.plugin:
                hint = _both_ways(theirs, item.plugin, item.scope or "user")
            whose = f"{item.plugin}'s " if item.plugin else ""
            found.append(
                Problem(
                    severity,
                    report.agent,
                    f"{report.agent} {verb} {whose}{item.name}: {item.detail}",
                    hint,
                )
            )
    return found


def deployed(paths: Paths) -> list[Problem]:
    """Each skill, command, subagent or plugin link deployed into an agent's folders that is
    gone, or changed since plugman wrote it (drift)."""
    found = []
    for key, entry in artifacts.load(paths).items():
        drift = artifacts.drift(Path(key), entry)
        for link in entry.links if drift else []:
            agent, scope = link.split(" ")[:2]
            found.append(
                Problem(
                    WARNING,
                    key,
                    f"{drift} since plugman deployed it to {agent} ({scope} scope)",
                    f"to deploy it again: plugman agents add {agent} --scope {scope}"
                    + (
                        " (a changed one is yours: move it away first)"
                        if drift == "changed"
                        else ""
                    ),
                )
            )
    return found

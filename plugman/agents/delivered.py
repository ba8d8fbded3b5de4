"""Which agents received which components of each plugin here (`plugman list`), read from the
export record (servers and hooks written into agents' files) and the deployment record (skills,
commands and subagents written as files; whole plugins Claude Code loads natively).

Per scope, since one plugin may be installed in several: a plugin Claude Code loads natively
(kind `plugin`) from the user scope gives way in this project to a project or local one of the
same name (Claude's own rule, see `claude_native._precedence`); it is then listed as `plugin,
not loaded here: <id> (<scope>) comes first`, and only the one Claude loads as `plugin`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from plugman.agents import artifacts, export_record
from plugman.core.paths import Paths
from plugman.core.state import SCOPES

if TYPE_CHECKING:
    from plugman.agents.gating import Loading

HOOK_ID = re.compile(r"^[A-Za-z]+:[0-9a-f]{12}$")  # targets.hook_id: EVENT:<12 hex>
HOOK_TRUST = re.compile(r":[a-z_]+:\d+:\d+$")  # Codex's hooks.state key: FILE:event:group:index


def entry_kind(entry: str) -> str:
    """What an entry plugman wrote into an agent's config file is: `hooks` (a hook, or Codex's
    trust key for one) or `mcp` (a server)."""
    return "hooks" if HOOK_ID.match(entry) or HOOK_TRUST.search(entry) else "mcp"


CLAUDE = "claude-code"
FIRST = ("local", "project", "user")  # which of one name Claude loads (claude_native)


def by_scope(paths: Paths) -> dict[tuple[str, str], dict[str, list[str]]]:
    """(plugin id, scope) → agent → the kinds of components it received (`hooks`, `mcp`,
    `skills`, `plugin`, …), in the user scope and this project's scopes."""
    here = {export_record.key("", scope, paths).strip(): scope for scope in SCOPES}
    found: dict[tuple[str, str], dict[str, set[str]]] = {}
    native: dict[str, dict[str, str]] = {}  # scope → Claude's plugin name → plugin id

    def add(plugin: str, key: str, kind: str) -> str | None:
        agent, _, rest = key.partition(" ")
        scope = here.get(rest)
        if scope is not None:
            found.setdefault((plugin, scope), {}).setdefault(agent, set()).add(kind)
        return scope if agent == CLAUDE else None

    for key, files in export_record.load(paths).items():
        for sealed in files.values():
            for entry, plugin in sealed.owners.items():
                add(plugin, key, entry_kind(entry))
    for path, item in artifacts.load(paths).items():
        owner, kind = item.owner or "", "files" if item.kind is None else item.kind
        for key in item.links:
            scope = add(owner, key, kind)
            if scope is not None and item.kind == "plugin" and owner:
                native.setdefault(scope, {})[Path(path).name] = owner
    for scope, names in native.items():
        higher = FIRST[: FIRST.index(scope)]
        for name, plugin in names.items():
            winner = next((s for s in higher if name in native.get(s, {})), None)
            if winner is not None:
                kinds = found[(plugin, scope)][CLAUDE]
                kinds.discard("plugin")
                kinds.add(f"plugin, not loaded here: {native[winner][name]} ({winner}) comes first")
    return {
        key: {agent: sorted(kinds) for agent, kinds in sorted(agents.items())}
        for key, agents in found.items()
    }


def delivered(paths: Paths) -> dict[str, dict[str, list[str]]]:
    """plugin id → agent → the kinds of components it received, every scope together."""
    merged: dict[str, dict[str, set[str]]] = {}
    for (plugin, _), agents in by_scope(paths).items():
        for agent, kinds in agents.items():
            merged.setdefault(plugin, {}).setdefault(agent, set()).update(kinds)
    return {
        plugin: {agent: sorted(kinds) for agent, kinds in sorted(agents.items())}
        for plugin, agents in merged.items()
    }


def loading(
    paths: Paths, env: Mapping[str, str], reached: Mapping[tuple[str, str], Mapping[str, list[str]]]
) -> dict[tuple[str, str], dict[str, Loading]]:
    """(plugin id, scope) → agent → whether the agent loads what it received (`by_scope`'s
    `reached`): loaded, waiting for its folder trust (with the step), or shadowed by Claude's
    own install of the name (`kept`), or turned off in Claude's settings (`agents.gating`)."""
    if not reached:
        return {}
    # lazy: gating is not loaded by `plugman list` when nothing is installed
    from plugman.agents.gating import Gating
    from plugman.runtime.launch import agent_facts

    written = agent_facts.load(paths).agents  # no agent table imported for `plugman list`
    gating = Gating(paths.project_dir, Path(env.get("HOME") or Path.home()), env, written)
    names = _claude_names(paths) if any(CLAUDE in a for a in reached.values()) else {}
    found: dict[tuple[str, str], dict[str, Loading]] = {}
    for (plugin, scope), agents in reached.items():
        for agent, kinds in agents.items() if plugin else ():  # "": a file of no plugin's
            said = gating.loading(agent, scope, [k.split(",")[0] for k in kinds])
            if agent == CLAUDE and "plugin" in kinds:
                off = [gating.turned_off(i) for i in sorted(names.get(plugin, ()))]
                said = next(filter(None, off), said)
            found.setdefault((plugin, scope), {})[agent] = said
    return found


def kept(
    paths: Paths, env: Mapping[str, str], installed: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], Loading]:
    """(plugin id, scope) → shadowed, for each of `installed` in a scope Claude Code is linked in
    whose name Claude's own install holds: plugman leaves it to Claude's copy (`claude_native`),
    so it reaches Claude not at all."""
    installed = list(installed)
    if not installed:
        return {}
    # lazy: links and gating are not loaded by `plugman list` when nothing is installed
    from plugman.agents import links
    from plugman.agents.gating import Gating

    scopes = {link.scope for link in links.readable(paths) if link.agent == CLAUDE}
    if not scopes:
        return {}
    gating = Gating(paths.project_dir, Path(env.get("HOME") or Path.home()), env)
    found = {}
    for plugin, scope in installed:
        said = gating.shadowed(plugin.partition("@")[0], scope) if scope in scopes else None
        if said is not None:
            found[(plugin, scope)] = said
    return found


def _claude_names(paths: Paths) -> dict[str, set[str]]:
    """plugin id → Claude Code's ids for it (`name@marketplace`, from its deployed links)."""
    found: dict[str, set[str]] = {}
    for path, item in artifacts.load(paths).items():
        if item.kind == "plugin" and item.owner:
            found.setdefault(item.owner, set()).add(claude_id(Path(path)))
    return found


def claude_id(link: Path) -> str:
    """Claude's plugin id for a plugin plugman deployed as `link`, as `claude_plugin.plan`
    names it (`NativePlan.ids`)."""
    # lazy: agents.claude_plugin is not loaded by `plugman list` (+1 ms)
    from plugman.agents.claude_plugin import SKILLS_DIR

    if link.parent.name == "plugins":  # <marketplace folder>/plugins/NAME
        return f"{link.name}@{link.parent.parent.name}"
    return f"{link.name}@{SKILLS_DIR}"  # <claude config>/skills/NAME

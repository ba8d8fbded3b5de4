"""Resolution: every scope's MCP servers, hooks and skills merged into one config, with why.

A pure function. Rules (docs/claude-format.md#scopes-and-precedence): a present
managed-mcp.json is exclusive (only its servers,
plus claude.ai connectors with `allowAllClaudeAiMcps`); otherwise precedence is
claude.ai < plugin < user < project < local and the whole entry wins, never a field merge.
Plugin and connector servers are dropped when their endpoint (URL, or command + args) is a
manual scope's. Policy denies; project entries, and the servers and hooks of plugins `sync`
installed from the project's declaration, wait for approval (keyed to the project, the entry
and the digest of each file its command runs: `approval_key`); unset variables drop an entry.
Hooks concatenate per event, highest scope first, an identical handler once; skills go by name.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from itertools import groupby
from types import MappingProxyType
from typing import Literal, NamedTuple

from plugman.config.expand import expand_entry
from plugman.config.policy import Policy, refusal
from plugman.core.jsonvalue import HookEntry, JSONObject, ServerEntry
from plugman.core.state import PRECEDENCE, Layer
from plugman.core.state import SCOPES as MANUAL

NEEDS_APPROVAL = ("project",)
Runs = tuple[tuple[str, str], ...]  # the files an entry runs and their digests (config.binding)


class Origin(NamedTuple):
    scope: Layer
    file: str
    plugin: str | None = None


class Server(NamedTuple):
    name: str
    entry: ServerEntry
    origin: Origin
    runs: Runs = ()  # set where it needs approval (config.binding.files_run)


class Hook(NamedTuple):
    event: str
    matcher: str | None
    handler: HookEntry
    origin: Origin
    env: tuple[tuple[str, str], ...] = ()  # set when it runs (a plugin's options)
    runs: Runs = ()  # set where it needs approval (config.binding.files_run)
    # its place among the hooks of its owner (plugin or scope) and event, counted before any
    # is dropped (pending, policy), so the launcher id an agent's file names never shifts onto
    # another hook while one waits for approval (plugman.runtime.launch.hook.refs); -1: not set
    slot: int = -1


class MarkdownComponent(NamedTuple):
    """A skill (its SKILL.md), or a plugin's command or subagent (its Markdown file)."""

    name: str  # `plugin:name` for a plugin's
    path: str
    origin: Origin


Reason = Literal[
    "managed-exclusive",  # managed-mcp.json is present
    "endpoint-duplicate",  # a plugin or connector server with a hand-configured endpoint
    "policy",  # denied by managed policy
    "pending-approval",  # waits for `plugman trust approve`
    "missing-variable",  # needs an unset variable
    "shadowed",  # a skill whose name a higher scope has
    "needs-config",  # a plugin's userConfig value is unset (plugman configure)
    "unsafe-config",  # ${user_config.*} in a field a shell parses
    "invalid",  # an entry its file gets wrong (the file's problems say where)
]


class Dropped(NamedTuple):
    kind: Literal["server", "hook", "skill"]
    name: str
    origin: Origin
    reason: Reason
    detail: str  # what to do (for pending-approval: the `plugman trust approve` to run)
    why: str = ""  # for pending-approval: why it waits (config.trust.why_pending)


class Layers(NamedTuple):
    managed: tuple[Server, ...] | None  # None: no managed-mcp.json
    servers: tuple[Server, ...] = ()  # every other scope; origin.scope says which
    hooks: tuple[Hook, ...] = ()
    skills: tuple[MarkdownComponent, ...] = ()
    commands: tuple[
        MarkdownComponent, ...
    ] = ()  # the enabled plugins' (passed through, not merged)
    agents: tuple[MarkdownComponent, ...] = ()
    # plugins whose servers and hooks wait for approval (nobody on this machine chose them:
    # `sync` installed them from the project's declaration): plugin id -> its tree's hash
    unconsented: Mapping[str, str] = MappingProxyType({})
    dropped: tuple[Dropped, ...] = ()  # left out while read (unset userConfig, a bad entry)
    project: str = ""  # the project folder, links resolved: what an approval is bound to


class Resolved(NamedTuple):
    servers: dict[str, Server]
    shadowed: dict[str, list[Server]]
    dropped: list[Dropped]
    hooks: list[Hook]
    skills: dict[str, MarkdownComponent]


def content_hash(name: str, entry: JSONObject) -> str:
    """What an approval is keyed to: a changed entry needs approval again."""
    text = json.dumps({"name": name, "entry": entry}, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def needs_approval(origin: Origin, unconsented: Mapping[str, str]) -> bool:
    """Whether an entry from `origin` runs only once approved: the project's own, and the
    plugins nobody on this machine chose."""
    return origin.scope in NEEDS_APPROVAL or (
        origin.scope == "plugin" and (origin.plugin or "") in unconsented
    )


def approval_key(
    name: str,
    entry: JSONObject,
    origin: Origin,
    unconsented: Mapping[str, str],
    project: str = "",
    runs: Runs = (),
) -> str | None:
    """The hash an approval of this server or hook is keyed to; None when it needs none. It
    covers the project (approved in one, nothing in another), the entry and the digest of each
    file its command runs (a changed script waits again); a plugin's entry covers the plugin's
    tree too, so any change to the plugin waits again."""
    if not needs_approval(origin, unconsented):
        return None
    covered: JSONObject = {"project": project, "entry": entry, "runs": dict(runs)}
    if origin.scope == "plugin":
        covered |= {"plugin": origin.plugin, "tree": unconsented[origin.plugin or ""]}
    return content_hash(name, covered)


def _hook_hint(name: str, origin: Origin) -> str:
    """How to approve a hook: by its name, EVENT:MATCHER, or (several hooks of a plugin may
    share that name) by its plugin."""
    return f"run: plugman trust approve {origin.plugin if origin.scope == 'plugin' else name}"


def rank(origin: Origin) -> int:
    return PRECEDENCE.index(origin.scope)


def _head(server: Server) -> tuple[int, str, str]:
    return rank(server.origin), server.name, server.origin.file


def _ordered(servers: list[Server]) -> list[Server]:
    """By precedence, name and file, then the entry's text: a fixed tie-break, so the order
    files were read in never matters. The text is written only where the rest ties (rare):
    the order is that of sorting by all four."""
    ordered = sorted(servers, key=_head)
    found: list[Server] = []
    for _head_key, tied in groupby(ordered, key=_head):
        group = list(tied)
        if len(group) > 1:
            group.sort(key=lambda s: json.dumps(s.entry, sort_keys=True))
        found += group
    return found


def resolve(
    layers: Layers,
    policy: Policy,
    env: Mapping[str, str],
    approved: frozenset[str] = frozenset(),
    references: bool = False,
) -> Resolved:
    """Merge the layers. Winning servers are expanded with `env`, unless `references`: then
    their `${VAR}` references stay, for an agent that expands them itself (so a variable unset
    here does not drop the entry)."""
    dropped: list[Dropped] = list(layers.dropped)
    candidates = _candidates(layers, policy, dropped)
    waiting = _Waiting(approved, layers.unconsented, layers.project)
    done: dict[int, ServerEntry] = {}  # id(server) -> its entry expanded (by _eligible)
    eligible = [
        s for s in candidates if _eligible(s, policy, env, waiting, dropped, references, done)
    ]
    servers, shadowed = _by_precedence(eligible, dropped)
    expanded = {
        name: s
        if references
        else s._replace(entry=done.get(id(s)) or expand_entry(s.entry, env)[0])
        for name, s in servers.items()
    }
    hooks = _hooks(layers, policy, waiting, dropped)
    skills = _skills(layers.skills, dropped)
    return Resolved(expanded, shadowed, dropped, hooks, skills)


class _Waiting(NamedTuple):
    """What decides whether an entry waits for approval."""

    approved: frozenset[str]
    unconsented: Mapping[str, str]
    project: str

    def pending(self, name: str, entry: ServerEntry, origin: Origin, runs: Runs) -> bool:
        key = approval_key(name, entry, origin, self.unconsented, self.project, runs)
        return key is not None and key not in self.approved


def _candidates(layers: Layers, policy: Policy, dropped: list[Dropped]) -> list[Server]:
    if layers.managed is None:
        return list(layers.servers)
    keep = [
        s for s in layers.servers if s.origin.scope == "claude.ai" and policy.allow_all_claude_ai
    ]
    for server in layers.servers:
        if server not in keep:
            dropped.append(
                Dropped(
                    "server",
                    server.name,
                    server.origin,
                    "managed-exclusive",
                    "managed-mcp.json is present and exclusive",
                )
            )
    return [*layers.managed, *keep]


def _eligible(
    server: Server,
    policy: Policy,
    env: Mapping[str, str],
    waiting: _Waiting,
    dropped: list[Dropped],
    references: bool = False,
    done: dict[int, ServerEntry] | None = None,
) -> bool:
    """Allowed by policy, approved if it must be, and (unless its references are kept for an
    agent to expand) every variable it needs is set. The expanded entry goes to `done`."""
    expanded, missing = expand_entry(server.entry, env)
    if done is not None:
        done[id(server)] = expanded
    reason = refusal(server.name, expanded, policy, env)
    if reason:
        dropped.append(Dropped("server", server.name, server.origin, "policy", reason))
        return False
    if waiting.pending(server.name, server.entry, server.origin, server.runs):
        hint = f"run: plugman trust approve {server.name}"
        dropped.append(Dropped("server", server.name, server.origin, "pending-approval", hint))
        return False
    if missing and not references:
        dropped.append(
            Dropped(
                "server",
                server.name,
                server.origin,
                "missing-variable",
                "unset: " + ", ".join(missing),
            )
        )
        return False
    return True


def endpoint(entry: ServerEntry) -> tuple[str, ...]:
    if isinstance(entry.get("url"), str):
        return ("url", entry["url"])
    return ("command", str(entry.get("command")), *arguments(entry))


def arguments(entry: ServerEntry) -> list[str]:
    """The entry's `args` as strings (none when `args` is not a list: a schema error, reported
    where the entry was read)."""
    args = entry.get("args")
    return [str(a) for a in args] if isinstance(args, list) else []


def _by_precedence(
    servers: list[Server], dropped: list[Dropped]
) -> tuple[dict[str, Server], dict[str, list[Server]]]:
    ordered = _ordered(servers)
    manual = {endpoint(s.entry) for s in ordered if s.origin.scope in (*MANUAL, "managed")}
    winners: dict[str, Server] = {}
    shadowed: dict[str, list[Server]] = {}
    for server in ordered:
        automatic = server.origin.scope in ("plugin", "claude.ai")
        if automatic and endpoint(server.entry) in manual:
            dropped.append(
                Dropped(
                    "server",
                    server.name,
                    server.origin,
                    "endpoint-duplicate",
                    "the same endpoint is configured by hand",
                )
            )
        elif server.name in winners:
            shadowed.setdefault(server.name, []).append(server)
        else:
            winners[server.name] = server
    return dict(sorted(winners.items())), shadowed


def _hooks(layers: Layers, policy: Policy, waiting: _Waiting, dropped: list[Dropped]) -> list[Hook]:
    kept: list[Hook] = []
    seen: set[str] = set()
    for hook in _slotted(sorted(layers.hooks, key=lambda h: (rank(h.origin), h.origin.file))):
        name = f"{hook.event}:{hook.matcher or '*'}"
        if policy.allow_managed_hooks_only and not _managed_hook(hook.origin, policy):
            dropped.append(Dropped("hook", name, hook.origin, "policy", "allowManagedHooksOnly"))
            continue
        if waiting.pending(name, hook.handler, hook.origin, hook.runs):
            hint = _hook_hint(name, hook.origin)
            dropped.append(Dropped("hook", name, hook.origin, "pending-approval", hint))
            continue
        same = json.dumps([hook.event, hook.matcher, hook.handler], sort_keys=True)
        if hook.origin.scope != "plugin" and same in seen:
            continue  # an identical handler in several settings files runs once
        seen.add(same)
        kept.append(hook)
    return kept


def _slotted(hooks: list[Hook]) -> list[Hook]:
    """The candidate hooks (in their stable order), each with its `slot`."""
    counts: dict[tuple[str, str], int] = {}
    found = []
    for hook in hooks:
        key = (hook.origin.plugin or hook.origin.scope, hook.event)
        found.append(hook._replace(slot=counts.get(key, 0)))
        counts[key] = counts.get(key, 0) + 1
    return found


def _managed_hook(origin: Origin, policy: Policy) -> bool:
    """A hook allowManagedHooksOnly keeps: a managed one, or one of a plugin managed policy
    forces on (enabledPlugins true), as Claude Code 2.1.328 keeps them."""
    if origin.scope == "managed":
        return True
    rule = policy.plugin_rule(origin.plugin) if origin.scope == "plugin" and origin.plugin else None
    return rule is not None and rule.enabled


def _skills(
    skills: tuple[MarkdownComponent, ...], dropped: list[Dropped]
) -> dict[str, MarkdownComponent]:
    found: dict[str, MarkdownComponent] = {}
    for skill in sorted(skills, key=lambda s: rank(s.origin)):
        if skill.name in found:
            dropped.append(
                Dropped(
                    "skill",
                    skill.name,
                    skill.origin,
                    "shadowed",
                    f"{found[skill.name].origin.scope} has a skill of that name",
                )
            )
        else:
            found[skill.name] = skill
    return dict(sorted(found.items()))

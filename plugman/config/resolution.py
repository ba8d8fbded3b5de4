"""The resolved config as one typed value: what every consumer (the CLI's documents, export,
probe, the gateway, hooks, doctor) takes. `resolve` reads every scope (`scopes.load`), applies
the stored approvals (`trust`) and merges (`merge.resolve`); documents are rendered from the
value in `plugman.output`, never parsed back."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

from plugman.config import merge, scopes, server_vars, trust
from plugman.config.contribute import Installed
from plugman.config.merge import Dropped, Hook, Layers, MarkdownComponent, Origin, Runs, Server
from plugman.config.policy import Policy
from plugman.core.errors import UsageError
from plugman.core.paths import Paths
from plugman.core.state import Scope
from plugman.manifest.diagnostics import ERROR, Diagnostic


class About(NamedTuple):
    """Everything resolution did with the server entries called one name."""

    name: str
    winner: Server | None
    shadowed: list[Server]
    dropped: list[Dropped]


class PluginAbout(NamedTuple):
    """What resolution did with one installed plugin's servers and hooks (`config explain
    PLUGIN`): its servers by the name every other command takes, its hooks left out."""

    plugin: Installed
    servers: list[About]
    hooks: list[Dropped]


class Resolution(NamedTuple):
    """One project's resolved config (a NamedTuple, not a dataclass: `dataclasses` pulls in
    `inspect`, ~5 ms of every command that resolves)."""

    servers: dict[str, Server]  # the winners, by name (expanded unless `references`)
    shadowed: dict[str, list[Server]]  # name -> the entries a higher scope's entry hides
    dropped: list[Dropped]  # what was left out, and why
    hooks: list[Hook]  # in the order they run
    skills: dict[str, MarkdownComponent]
    commands: tuple[MarkdownComponent, ...]  # the enabled plugins' commands and subagents
    agents: tuple[MarkdownComponent, ...]
    layers: Layers  # every entry read, before the merge
    policy: Policy
    plugins: list[Installed]
    diagnostics: list[Diagnostic]  # problems in the files read

    def broken(self, paths: Paths) -> list[Diagnostic]:
        """The errors in the files the user keeps (every scope's plugman.toml, the project's
        .mcp.json, the managed files): what makes `config resolve` and `mcp list` exit 1. A
        plugin's broken component was accepted, and said, at install: it is only left out."""
        return [
            d
            for d in self.diagnostics
            if d.severity == ERROR and not Path(d.file).is_relative_to(paths.store_dir)
        ]

    def pending(self) -> list[Dropped]:
        """The entries waiting for `plugman trust approve`."""
        return [d for d in self.dropped if d.reason == "pending-approval"]

    def without(self, plugins: Iterable[str]) -> Resolution:
        """This resolution with none of the servers and hooks of `plugins` (an agent that loads
        those plugins itself gets them from there)."""
        gone = set(plugins)
        return self._replace(
            servers={n: s for n, s in self.servers.items() if s.origin.plugin not in gone},
            hooks=[h for h in self.hooks if h.origin.plugin not in gone],
        )

    def about(self, name: str) -> About:
        """The winner, the shadowed and the dropped entries called `name`."""
        dropped = [d for d in self.dropped if d.name == name]
        winner = self.servers.get(name)
        if winner is None and name not in self.shadowed and not dropped:
            raise UsageError(
                f"no MCP server named {name!r} in any scope", hint="see them all: plugman mcp list"
            )
        return About(name, winner, self.shadowed.get(name, []), dropped)

    def explain(self, name: str) -> About | list[PluginAbout]:
        """`about` a server called `name`; else each installed plugin `name` names (`NAME` or
        `NAME@MARKETPLACE`): every server it brings, and the hooks it has left out."""
        if (
            name in self.servers
            or name in self.shadowed
            or any(d.name == name for d in self.dropped)
        ):
            return self.about(name)
        chosen = [p for p in self.plugins if name in (p.id, p.id.partition("@")[0])]
        if not chosen:
            raise UsageError(
                f"no MCP server or installed plugin named {name!r}",
                hint="see the servers: plugman mcp list; the plugins: plugman list",
            )
        return [self._plugin(p) for p in chosen]

    def _plugin(self, plugin: Installed) -> PluginAbout:
        mine = [s.name for s in self.layers.servers if s.origin.plugin == plugin.id]
        mine += [
            d.name for d in self.dropped if d.kind == "server" and d.origin.plugin == plugin.id
        ]
        hooks = [d for d in self.dropped if d.kind == "hook" and d.origin.plugin == plugin.id]
        return PluginAbout(plugin, [self.about(n) for n in sorted(set(mine))], hooks)


def _why_pending(
    dropped: list[Dropped], layers: Layers, known: dict[str, trust.Stored]
) -> list[Dropped]:
    """`dropped` with each pending entry's detail saying why it waits (`trust.why_pending`):
    never approved, approved in another project, or a file it runs changed since."""
    if not any(d.reason == "pending-approval" for d in dropped):
        return dropped
    runs: dict[tuple[str, str, Origin], Runs] = {}
    for server in layers.servers:
        runs[("server", server.name, server.origin)] = server.runs
    for hook in layers.hooks:
        runs[("hook", f"{hook.event}:{hook.matcher or '*'}", hook.origin)] = hook.runs
    alike: dict[tuple[str, str, str | None], dict[str, trust.Stored]] = {}
    for key, approval in known.items():  # why_pending looks at these alone: found once
        alike.setdefault((approval.kind, approval.name, approval.plugin), {})[key] = approval
    found = []
    for drop in dropped:
        if drop.reason == "pending-approval":
            had = runs.get((drop.kind, drop.name, drop.origin), ())
            same = alike.get((drop.kind, drop.name, drop.origin.plugin), {})
            why = trust.why_pending(same, layers.project, drop.kind, drop.name, drop.origin, had)
            drop = drop._replace(why=why)
        found.append(drop)
    return found


def resolve(
    paths: Paths, env: Mapping[str, str], *, references: bool = False, only: Scope | None = None
) -> Resolution:
    """This project's config, every scope merged with the stored approvals. `references`: server
    entries keep their `${VAR}` references (for an agent that expands them); `only`: one scope's
    own entries and plugins (what an export at that scope writes; see `scopes.load`)."""
    found = scopes.load(paths, only, env, references)
    stored = {} if references else server_vars.values(paths, env)  # agents expand their own
    # sensitive plugin options (config.user_config), stored server variables (config.server_vars)
    with_secrets = {**stored, **env, **found.secrets}
    known = trust.approvals(paths)
    merged = merge.resolve(found.layers, found.policy, with_secrets, frozenset(known), references)
    return Resolution(
        merged.servers,
        merged.shadowed,
        _why_pending(merged.dropped, found.layers, known),
        merged.hooks,
        merged.skills,
        found.layers.commands,
        found.layers.agents,
        found.layers,
        found.policy,
        found.plugins,
        found.diagnostics,
    )

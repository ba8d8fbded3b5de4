"""Deploying to the linked agents, inside the transaction of the command that changed the config.

`refresh(work, env)` brings every linked agent's files (`plugman.agents.links`) to what is
resolved now, scope by scope: each agent file gets only its own scope's entries, written and
recorded exactly as `plugman export --write` does (`plugman.agents.export`), so taking an
agent out (`unlink`) or uninstalling a plugin leaves its files as they were. It runs in the
command's own session: a kill leaves every agent file old or new, never half-written.

Every command that changes what is resolved ends with it (plugman.commands): install,
uninstall, enable, disable, configure, update, sync, `import claude`, `mcp add|remove`, `mcp vars
set|unset`, `trust approve|revoke` and `agents add|remove`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

from plugman import extensions
from plugman.agents import claude_native, delivered, export, export_record, files, links, warnings
from plugman.agents.artifacts import Artifact, Ledger
from plugman.agents.export import Outcome
from plugman.agents.gating import Gating
from plugman.agents.links import Link
from plugman.agents.targets import AgentSpec, Place, target
from plugman.config import declarations
from plugman.config.resolution import resolve
from plugman.core import progress, secrets
from plugman.core.folders import Folders
from plugman.core.paths import Paths
from plugman.core.session import Session
from plugman.runtime.launch import agent_facts, notices, plans, server_plans


class Deployed(NamedTuple):
    link: Link
    outcome: Outcome  # its MCP servers and hooks, written into the agent's config files
    files: list[Path]  # its skills, commands and subagents, written as files and folders
    notes: list[str]  # what it cannot take


CLAUDE = "claude-code"


def refresh(work: Session, env: Mapping[str, str], unlink: Iterable[Link] = ()) -> list[Deployed]:
    """Take plugman's entries out of the agents in `unlink`, then write every linked agent's
    files as resolved now. What an agent cannot take is a warning, per agent and scope."""
    paths = work.paths
    exports = export_record.load(paths)
    folders = Folders(paths)
    ledger = Ledger(work, folders)
    linked = links.every(paths)
    wanted = [(link, True) for link in unlink] + [(link, False) for link in linked]
    setting = declarations.declared(paths, "user", notices.TABLE).get(notices.KEY)
    gating = Gating(paths.project_dir, export.home_of(env), env)
    done = []
    artifacts: list[tuple[str, Artifact]] = []
    specs = []
    for link, remove in wanted:
        before = export_record.dump(exports)
        place = Place(link.scope, export.home_of(env), paths.project_dir, env)
        resolution = None if remove else resolve(paths, env, references=True, only=link.scope)
        notes: list[str] = []
        mine: list[Artifact] = []
        native: frozenset[str] = frozenset()
        if link.agent == CLAUDE and not link.via_gateway:
            loaded = claude_native.deploy(work, place, link, exports, folders, ledger, resolution)
            native, notes, mine = loaded.ids, loaded.notes, loaded.artifacts
        notice = not remove and notices.wanted(link.notify, setting)
        how = export.How(gateway=link.via_gateway, native=native, notice=notice)
        spec = extensions.target(link.agent)
        specs += [] if remove else [spec]
        outcome = export.plan(paths, target(spec), place, exports, remove, how)
        export.write(work, outcome, folders)
        after = export_record.dump(exports)
        if after != before:  # on disk before the next agent's resolution reads it
            work.tx.stage(export_record.path(paths), after)
        notes += outcome.notes
        if resolution is not None:
            where = files.Where(link.scope, place.home, paths.project_dir, env)
            mine += files.wanted(spec, where, resolution, ledger, notes)
        if resolution is not None:
            given = {delivered.entry_kind(e) for ids in outcome.entries.values() for e in ids}
            note = gating.note(link.agent, link.scope, given | {a.kind for a in mine})
            notes += [note] if note else []
            notes += _held(gating, [a for a in mine if a.kind == "plugin" and a.owner])
        artifacts += [(_key(link, paths), artifact) for artifact in mine]
        done.append(Deployed(link, outcome, [a.path for a in mine], notes))
    _write_facts(work, specs)
    _write_plans(work, env, specs)
    ledger.apply(artifacts, {_key(link, paths) for link, _ in wanted})
    ledger.save()
    folders.save(work.tx)
    gone = len(wanted) - len(linked)  # `wanted` has the unlinked ones first
    _warn(work, env, done[gone:], done[:gone], ledger.notes)
    return done


def _write_facts(work: Session, specs: list[AgentSpec]) -> None:
    """What the hot commands the linked agents' files name need of them, from their specs
    (`runtime.agent_facts`), added to what other projects' deployments wrote."""
    facts = agent_facts.load(work.paths)
    launchers, agents = dict(facts.launchers), dict(facts.agents)
    for spec in specs:
        agents[spec.name] = spec.facts()
        if spec.hooks is not None and spec.hooks.launcher:
            launchers[spec.hooks.launcher] = spec.hooks.launching()
    fresh = agent_facts.Facts(launchers, agents)
    if fresh != facts:
        work.tx.write(agent_facts.path(work.paths), agent_facts.dump(fresh), private=True)


def _write_plans(work: Session, env: Mapping[str, str], specs: list[AgentSpec]) -> None:
    """The launch plans of this project's hooks for the linked agents' launchers
    (`runtime.launch.plans`) and of its servers (`runtime.launch.server_plans`), in this
    transaction; the ones no agent names any more go."""
    launchers = {
        spec.hooks.launcher: spec.hooks.launching()
        for spec in specs
        if spec.hooks is not None and spec.hooks.launcher
    }
    folder = plans.project_folder(work.paths)
    if not specs and not folder.exists():
        return
    with secrets.recording() as reads:  # the store keys a server plan names (never values)
        resolution = resolve(work.paths, env) if specs else None
    plans.deploy(work, env, resolution if launchers else None, launchers)
    server_plans.deploy(work, env, resolution, reads)


def _held(gating: Gating, plugins: list[Artifact]) -> list[str]:
    """Claude Code's plugins plugman gave it that the user turned off in Claude's settings (a
    name Claude's own install holds is not given: `claude_native` says so)."""
    notes = []
    for plugin in plugins:
        said = gating.turned_off(delivered.claude_id(plugin.path))
        if said is not None:
            notes.append(
                f"{plugin.owner}: Claude Code does not load it: {said.detail}; {said.step}"
            )
    return notes


def _key(link: Link, paths: Paths) -> str:
    return export_record.key(link.agent, link.scope, paths)


def _warn(
    work: Session,
    env: Mapping[str, str],
    kept: list[Deployed],
    gone: list[Deployed],
    general: list[str],
) -> None:
    """Tell what this deployment brought that was not standing before (an unlinked agent's
    notes are all new), each once, and keep what stands for `plugman agents list`."""
    paths = work.paths
    before = warnings.load(paths)
    now = {_key(d.link, paths): d.notes for d in kept} | {warnings.general(paths): general}
    owners = {_key(d.link, paths): (d.link.agent, d.link.scope) for d in [*kept, *gone]}
    fresh = warnings.fresh(before, now, owners)
    fresh += warnings.fresh({}, {_key(d.link, paths): d.notes for d in gone}, owners)
    kept_before = {k: v for k, v in before.items() if k not in owners}
    record = {k: v for k, v in (kept_before | now).items() if v}
    if record != before:
        work.tx.write(warnings.path(paths), warnings.dump(record))
    if fresh:
        stores = warnings.stores(paths)
        progress.warn(warnings.Warned(fresh, export.home_of(env), paths.project_dir, stores))

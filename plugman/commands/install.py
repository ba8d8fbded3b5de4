"""`plugman install`: plan the plugins asked for, install them into a scope and bring the
linked agents up to date, in one transaction (what installing writes:
plugman.plugins.lifecycle.install)."""

from __future__ import annotations

import os

from plugman.agents import links
from plugman.commands import redeploy
from plugman.core import progress
from plugman.core.paths import Paths
from plugman.core.session import session
from plugman.core.state import InstallRecord, Scope
from plugman.plugins.lifecycle import configure
from plugman.plugins.lifecycle import install as installing
from plugman.plugins.lifecycle import planner as resolver
from plugman.plugins.lifecycle.installed import PluginChange


def install(
    paths: Paths,
    specs: list[str],
    scope: Scope,
    *,
    dry_run: bool = False,
    config: list[str] | None = None,
    ask: configure.Ask | None = None,
    allow_hidden: bool = False,
) -> list[PluginChange]:
    """`config`: KEY=VALUE userConfig values for the plugins named; `ask` is asked for required
    ones still missing (a terminal's prompt; none: they stay unset, their entries dropped).
    `allow_hidden`: install plugins with hidden text (recorded; plugman.manifest.hidden)."""
    parsed = [resolver.parse_spec(text, paths.project_dir) for text in specs]
    with session(paths) as work:
        record = InstallRecord.load(paths, scope)
        planned = resolver.plan(
            paths, work.store, parsed, record.plugins, allow_hidden=allow_hidden
        )
        named = [p for p in planned if not p.required_by]
        writes = installing.options(record, named, config or [], ask)
        if dry_run:
            return [PluginChange("would install", p.id, p.version, scope, "") for p in planned]
        with configure.writing(paths, os.environ, writes):  # the secrets, undone on a failure
            changes = installing.add_planned(work, record, planned)
            redeploy.if_linked(work)
            _unreached(paths, scope)
    return changes


def _unreached(paths: Paths, scope: Scope) -> None:
    note = links.unreached(paths, scope)
    if note:
        progress.warn(note)

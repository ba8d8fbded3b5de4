"""`plugman uninstall`: take plugins out of a scope and bring the linked agents up to date, in
one transaction; their secrets, update notices and data folders go after the commit (what
uninstalling takes out: plugman.plugins.lifecycle.uninstall)."""

from __future__ import annotations

from plugman.commands import redeploy
from plugman.core.paths import Paths
from plugman.core.session import session
from plugman.core.state import InstallRecord, Scope
from plugman.plugins.lifecycle import uninstall as uninstalling
from plugman.plugins.lifecycle.installed import PluginChange


def uninstall(
    paths: Paths, names: list[str], scope: Scope, *, keep_data: bool = False, force: bool = False
) -> list[PluginChange]:
    with session(paths) as work:
        record = InstallRecord.load(paths, scope)
        removed = uninstalling.remove(work, record, names, force)
        redeploy.if_linked(work)
    uninstalling.after_commit(paths, removed, keep_data)
    return removed.changes

"""`plugman enable|disable`: turn an installed plugin on or off in its scope and bring the
linked agents up to date, in one transaction (the record's change:
plugman.plugins.lifecycle.installed.set_enabled)."""

from __future__ import annotations

from plugman.commands import redeploy
from plugman.core.paths import Paths
from plugman.core.session import session
from plugman.core.state import Scope
from plugman.plugins.lifecycle import installed
from plugman.plugins.lifecycle.installed import PluginChange


def set_enabled(paths: Paths, name: str, scope: Scope, enabled: bool) -> PluginChange:
    with session(paths) as work:
        change = installed.set_enabled(work, name, scope, enabled)
        redeploy.if_linked(work)
    return change

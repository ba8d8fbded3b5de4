"""`plugman configure`: list a plugin's userConfig options, or change their values and bring
the linked agents up to date, in one transaction (where the values go:
plugman.plugins.lifecycle.configure)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from plugman.agents import deploy
from plugman.config import user_config
from plugman.core.paths import Paths
from plugman.core.session import session
from plugman.core.state import InstallRecord, Scope
from plugman.plugins.lifecycle import configure
from plugman.plugins.lifecycle.installed import find_installed, save


def run(
    paths: Paths,
    name: str,
    scope: Scope | None,
    pairs: list[str],
    unset: list[str],
    env: Mapping[str, str] | None = None,
) -> list[configure.Option]:
    """Set `pairs` (KEY=VALUE) and remove `unset` in the plugin's values in its scope (the
    highest it is installed in, unless `scope`); with neither, change nothing. The options as
    they are after."""
    env = os.environ if env is None else env
    chosen = configure.scope_of(paths, name, scope)
    if not pairs and not unset:
        record = InstallRecord.load(paths, chosen)
        plugin_id = find_installed(record, name)
        options = configure.loaded(paths, record.plugins[plugin_id]).user_config
        return configure.rows(paths, record, plugin_id, options)
    with session(paths) as work:
        record = InstallRecord.load(paths, chosen)
        plugin_id = find_installed(record, name)
        found = configure.loaded(paths, record.plugins[plugin_id])
        options = found.user_config
        given = user_config.parse_pairs(pairs, plugin_id)
        writes = configure.apply(record, plugin_id, found, given, unset)
        with configure.writing(paths, env, [writes]):
            save(work, record)
            deploy.refresh(work, env)
    return configure.rows(paths, record, plugin_id, options)

"""What install, uninstall, enable/disable, update and sync share: the `PluginChange` each reports,
finding an installed plugin, saving a scope's record (and the project's lock), turning a plugin
on or off; the commands in plugman.commands redeploy. Light on purpose: `uninstall` and
`enable` load nothing of planning, fetching or validating plugins."""

from __future__ import annotations

from typing import Literal, NamedTuple

from plugman.config import declarations
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.fs import present
from plugman.core.session import Session
from plugman.core.state import InstallRecord, Scope
from plugman.plugins.supply_chain import lockfile

PluginAction = Literal[
    "installed", "uninstalled", "enabled", "disabled", "updated", "would install"
]


class PluginChange(NamedTuple):
    """What a command did to one installed plugin (or would do, under --dry-run)."""

    action: PluginAction
    id: str
    version: str
    scope: Scope
    content_hash: str
    # an update: what it moved from, and the commit / sha256 / digest it moved from and to
    from_version: str | None = None
    from_content_hash: str | None = None
    from_pin: str | None = None
    pin: str | None = None


def find_installed(record: InstallRecord, name: str) -> str:
    if name in record.plugins:
        return name
    hits = [key for key, value in record.plugins.items() if value.name == name]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise UsageError(f"{name!r} matches {', '.join(hits)}", hint="say which: NAME@MARKETPLACE")
    raise PlugmanError(
        f"plugin {name!r} is not installed in the {record.scope} scope",
        hint="run: plugman list (to see every scope), or pass --scope",
    )


def save(work: Session, record: InstallRecord) -> None:
    """Write the record and, for the project, the lock file that mirrors it."""
    if record.scope == "project":
        declarations.check_project_file(work.paths, work.paths.project_lock)
        work.tx.write(work.paths.project_lock, _lock(record))
    work.tx.write(record.path, record.to_bytes())


def _lock(record: InstallRecord) -> bytes | None:
    """The project's plugman.lock for its record: what one machine's managed policy forced
    stays out (plugman.core.state.InstalledPlugin.forced)."""
    pins = [lockfile.pinned(k, v) for k, v in record.plugins.items() if not v.forced]
    return lockfile.render(pins)


def set_enabled(work: Session, name: str, scope: Scope, enabled: bool) -> PluginChange:
    """Turn an installed plugin on or off in `scope`'s record, in `work` (the caller
    redeploys: plugman.commands.enable)."""
    record = InstallRecord.load(work.paths, scope)
    plugin_id = find_installed(record, name)
    entry = record.plugins[plugin_id] = record.plugins[plugin_id]._replace(enabled=enabled)
    save(work, record)
    action: PluginAction = "enabled" if enabled else "disabled"
    return PluginChange(action, plugin_id, entry.version, scope, entry.content_hash)


def forget_exports(work: Session, plugin_ids: set[str]) -> None:
    """Take what `plugin_ids` put into files `export` wrote (none exported: nothing to do)."""
    # lazy: config.exported is not loaded by plugman list, only this path needs it
    from plugman.config import exported

    if plugin_ids and present(exported.path(work.paths)):
        # lazy: agents.export takes ~45 ms to import, only this path needs it
        from plugman.agents import export

        export.forget(work, plugin_ids)

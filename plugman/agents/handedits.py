"""Entries plugman wrote into an agent's file that the user has since edited by hand.

An entry the user changed after plugman wrote it is theirs and stays (`plugman.manifest.edit`):
taking plugman's share out of the file leaves it. When that share goes because its plugin is
uninstalled (or the agent unlinked, or the export removed), the edited entry would stay behind
pointing at what is gone (a plugin a launcher names, a store folder, a data folder), so those
commands ask first: they refuse and name each entry, and `--force` goes on and leaves the
entries, said once each (`plugman doctor` then reports the ones naming a plugin that is not
installed or a deleted store folder: `dangling`).

Which entry is the edited one: in a map (an MCP server), the entry of plugman's id whose value
is no longer as written; in a list (Claude-format hook groups, which have no id), an item that
is not one plugman wrote as it is and that still names the plugin (its id, as a hook launcher
does; a server name of it, as a server launcher does; its store folder or its data folder). A
list item of plugman.toml's own hooks (no plugin) cannot be told from the user's own items, and
is not looked for.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from plugman.agents import dangling, export_record
from plugman.agents.export_record import Sealed, digest
from plugman.core.errors import PlugmanError
from plugman.core.fs import present, read_bytes
from plugman.core.paths import Paths
from plugman.core.state import SCOPES, InstallRecord, Scope
from plugman.core.store import Store
from plugman.manifest import edit

if TYPE_CHECKING:
    from plugman.agents.export import Outcome


class HandEdit(NamedTuple):
    file: str
    key: str  # where in the file: `mcp_servers.plugin_x_y`, `hooks.PreToolUse[0]`
    entry: str  # plugman's id of the entry as it wrote it
    plugin: str | None  # the plugin it came from; None for plugman.toml's own entries


def for_plugins(
    paths: Paths, plugin_ids: set[str], scope: Scope, env: Mapping[str, str]
) -> list[HandEdit]:
    """The edited entries that uninstalling `plugin_ids` from `scope` leaves behind: those the
    export record still knows, and any other entry in the scope's agent files that names one
    of the plugins (an edit plugman has handed to the user at an earlier deployment)."""
    if not plugin_ids:
        return []
    mine = {export_record.key(name, scope, paths) for name in _exported(paths)}
    found = _find(paths, lambda key, owner: key in mine and owner in plugin_ids)
    marks = {m: p for p, ms in _marks(paths).items() if p in plugin_ids for m in ms}
    for file, fmt in dangling.files(paths, env, scope).items():
        doc = _load(file, fmt)
        known = [e.key for e in found if e.file == file] + dangling.plugmans(paths, file, doc)
        for key, text in dangling.strings(doc, ""):
            owner = next((p for m, p in marks.items() if m in text), None)
            if owner and not dangling.under(key, known):
                found.append(HandEdit(file, key, "", owner))
                known.append(key)
    return found


def for_export(paths: Paths, target: str, scope: Scope) -> list[HandEdit]:
    """The edited entries that taking `target`'s `scope` export out leaves behind."""
    wanted = export_record.key(target, scope, paths)
    return _find(paths, lambda key, owner: key == wanted)


def remove_export(
    paths: Paths, env: Mapping[str, str], target: str, scope: Scope, force: bool
) -> Outcome:
    """`plugman export --remove`: refused, nothing changed, when it would leave entries the user
    edited since (unless `force`; the outcome's notes then say what stays). The check reads
    before the export takes the lock: another plugman run in between can at worst leave an
    edited entry with no refusal, and an edited entry stays in any case (`manifest.edit`)."""
    # lazy: agents.export takes ~92 ms to import, only this path needs it
    from plugman.agents.export import export

    kept = refuse(for_export(paths, target, scope), f"removing the {target} export", force)
    outcome = export(paths, env, target, scope, remove=True, dry_run=False)
    return outcome._replace(notes=outcome.notes + kept)


def edited(paths: Paths, file: str, sealed: Sealed) -> dict[str, str]:
    """plugman's entries in `file` that the user has edited: entry id → its key path now."""
    ids = {i for p in sealed.parts for i in p.entries}
    return {e.entry: e.key for e in _in_file(file, sealed, ids, _marks(paths))}


def refuse(found: list[HandEdit], what: str, force: bool) -> list[str]:
    """Raise when `found` is not empty and not `force`d; else the notes on what stays."""
    if not found:
        return []
    if not force:
        first = found[0]
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise PlugmanError(
            f"{first.key} ({_whose(first)}) was edited by hand since plugman wrote it{more}; "
            f"{what} would leave it pointing at what is removed",
            where=first.file,
            hint="pass --force to go on and leave the edited entries as they are (plugman "
            "doctor then reports them), or put them back as plugman wrote them (plugman doctor "
            "names them) or delete them by hand, then run this again; nothing was changed",
        )
    return [
        f"{e.file}: {e.key} ({_whose(e)}) was edited by hand, so it stays as it is; "
        "delete it or point it elsewhere yourself"
        for e in found
    ]


def _whose(found: HandEdit) -> str:
    return f"{found.plugin}'s {found.entry or 'entry'}" if found.plugin else found.entry


def _exported(paths: Paths) -> set[str]:
    return {key.split(" ", 1)[0] for key in export_record.load(paths)}


def _find(paths: Paths, chosen: Callable[[str, str | None], bool]) -> list[HandEdit]:
    if not present(export_record.path(paths)):
        return []
    marks = _marks(paths)
    found: list[HandEdit] = []
    for key, files in export_record.load(paths).items():
        for file, sealed in files.items():
            ids = {i for p in sealed.parts for i in p.entries if chosen(key, sealed.owners.get(i))}
            if ids:
                found += _in_file(file, sealed, ids, marks)
    return found


def _marks(paths: Paths) -> dict[str, set[str]]:
    """plugin id → the strings an entry for it holds: its id (a hook launcher's `OWNER#N`), its
    servers' names (`plugin:NAME:`, a server launcher's), its store and data folders."""
    store = Store(paths.store_dir)
    found: dict[str, set[str]] = {}
    for scope in SCOPES:
        for plugin_id, entry in InstallRecord.load(paths, scope).plugins.items():
            servers = f"plugin:{plugin_id.partition('@')[0]}:"
            marks = found.setdefault(plugin_id, {plugin_id, servers})
            marks |= {str(paths.plugin_data(plugin_id)), str(store.path(entry.content_hash))}
    return found


def _load(file: str, fmt: str) -> Any:
    """The file's data; None when it is missing or unreadable (plugman's removal refuses an
    unreadable file on its own, with its place)."""
    data = read_bytes(Path(file))
    if data is None:
        return None
    try:
        return edit.module(fmt).load(data.decode("utf-8"), file)
    except (PlugmanError, UnicodeDecodeError):
        return None


def _in_file(
    file: str, sealed: Sealed, ids: set[str], marks: dict[str, set[str]]
) -> list[HandEdit]:
    doc = _load(file, sealed.fmt)
    if doc is None:
        return []
    found: list[HandEdit] = []
    for part in sealed.parts:
        container = edit.at(doc, part.container)
        where = ".".join(part.container)
        ours = set(part.entries.values())
        for entry_id, wanted in part.entries.items():
            if entry_id not in ids:
                continue
            owner = sealed.owners.get(entry_id)
            if export_record.current(container, entry_id, wanted, part.listed) is not None:
                continue
            if not part.listed:
                if isinstance(container, dict) and entry_id in container:
                    found.append(HandEdit(file, f"{where}.{entry_id}", entry_id, owner))
                continue
            for index in _named(container, ours, marks.get(owner or "", set())):
                found.append(HandEdit(file, f"{where}[{index}]", entry_id, owner))
    return _once(found)


def _named(container: Any, ours: set[str], marks: set[str]) -> list[int]:
    """The list items not written by plugman as they are that still name the plugin."""
    if not marks or not isinstance(container, list):
        return []
    return [
        index
        for index, item in enumerate(container)
        if digest(item) not in ours and any(m in json.dumps(item) for m in marks)
    ]


def _once(found: list[HandEdit]) -> list[HandEdit]:
    first: dict[tuple[str, str], HandEdit] = {}
    for item in found:
        first.setdefault((item.file, item.key), item)
    return list(first.values())

"""A plugin's userConfig values: set at install (`--config KEY=VALUE`, or asked through the
caller's `Ask`), changed with `plugman configure`, removed with the plugin.

Non-sensitive values go into the scope's record (`config.<plugin id>`), sensitive ones into the
secret store, the record naming which keys it holds (`secrets.<plugin id>`) so uninstall removes
exactly those (see `plugman.config.user_config` for why there). The store is not journaled: its
writes happen inside the session, before the record commits (so the linked agents refreshed in
that session see the value), and are undone if the session fails; its deletions happen after
the commit, as the data folder's do.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

from plugman.config import user_config
from plugman.core import progress, secrets
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.paths import Paths
from plugman.core.state import PRECEDENCE, SCOPES, InstalledPlugin, InstallRecord, Scope
from plugman.core.store import Store
from plugman.manifest.diagnostics import Sink
from plugman.manifest.model import Plugin, UserOption
from plugman.manifest.reader import Report

Ask = Callable[[str, UserOption], str | None]  # (plugin id, option) -> a value, or None


class Option(NamedTuple):
    """One option as `plugman configure` lists it; never a sensitive value."""

    plugin: str
    key: str
    type: str
    title: str
    description: str
    sensitive: bool
    required: bool
    state: str  # set | default | unset
    value: Any  # the non-sensitive value or default; None for a sensitive one

    def as_json(self) -> dict[str, Any]:
        return self._asdict()


class Writes(NamedTuple):
    """Secret store changes a record change needs: (key, value) to set, keys to delete."""

    set: list[tuple[str, str]]
    delete: list[str]


def apply(
    record: InstallRecord,
    plugin_id: str,
    plugin: Plugin,
    given: Mapping[str, str],
    unset: Sequence[str] = (),
    ask: Ask | None = None,
) -> Writes:
    """Check `given` (and what `ask` answers for required options still missing), then put the
    non-sensitive values into `record` and return the secret store's writes. A bad value is a
    usage error and changes nothing."""
    options = plugin.user_config
    checked = user_config.check(plugin_id, options, given)
    known = {o.key: o for o in options}
    for key in unset:
        if key not in known:
            raise UsageError(f"{plugin_id} has no option {key!r}")
    values = record.config.setdefault(plugin_id, {})
    held = record.secrets.setdefault(plugin_id, [])
    have = {*values, *held, *checked} - set(unset)
    for option in user_config.missing(options, have) if ask else []:
        answer = ask(plugin_id, option) if ask else None
        if answer:
            checked.update(user_config.check(plugin_id, options, {option.key: answer}))
    writes = Writes([], [])
    tag = record.path.stem
    for key, value in checked.items():
        if known[key].sensitive:
            writes.set.append((user_config.store_key(plugin_id, key, tag), str(value)))
            held.append(key) if key not in held else None
        else:
            values[key] = value
    for key in unset:
        values.pop(key, None)
        if key in held:
            held.remove(key)
            writes.delete.append(user_config.store_key(plugin_id, key, tag))
    left = user_config.missing(options, {*values, *held})
    if left:
        keys = [o.key for o in left]
        progress.warn(
            f"{plugin_id}: required option(s) {', '.join(keys)} not set, so {_users(plugin, keys)}"
            f" left out until you {user_config.fix_command(plugin_id, keys, record.scope)}"
            f" (details: plugman config explain {plugin_id})"
        )
    return writes


def _users(plugin: Plugin, keys: list[str]) -> str:
    """What needs one of `keys`, by the names `config explain` and `mcp get` take."""
    wanted = set(keys)
    names = [
        f"MCP server plugin:{plugin.name}:{s.name}"
        for s in plugin.mcp_servers
        if user_config.used(s.entry) & wanted
    ]
    names += sorted(
        {
            f"hook {h.event}:{h.matcher or '*'}"
            for h in plugin.hooks
            if user_config.used(h.entry) & wanted
        }
    )
    if not names:
        return "what uses them is"
    return (", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]) + (
        " are" if len(names) > 1 else " is"
    )


def forget(record: InstallRecord, plugin_id: str) -> list[str]:
    """Take the plugin's values out of `record`; the secret store keys to delete."""
    record.config.pop(plugin_id, None)
    held = record.secrets.pop(plugin_id, [])
    return [user_config.store_key(plugin_id, key, record.path.stem) for key in held]


@contextmanager
def writing(paths: Paths, env: Mapping[str, str], writes: list[Writes]) -> Iterator[None]:
    """Around the rest of a session: set the secrets now (restoring the previous values if what
    follows fails); delete the ones to delete once it succeeded."""
    pending = [pair for w in writes for pair in w.set]
    store = secrets.open_store(paths, env) if pending or any(w.delete for w in writes) else None
    before: list[tuple[str, str | None]] = []
    try:
        for key, value in pending:
            assert store is not None
            before.append((key, store.get(key)))
            store.set(key, value)
        yield
    except BaseException:
        for key, old in reversed(before):
            assert store is not None
            store.set(key, old) if old is not None else store.delete(key)
        raise
    for key in [k for w in writes for k in w.delete]:
        assert store is not None
        store.delete(key)


def delete(paths: Paths, keys: list[str], env: Mapping[str, str] | None = None) -> None:
    """Delete secret store keys (after an uninstall committed)."""
    if keys:
        store = secrets.open_store(paths, os.environ if env is None else env)
        for key in keys:
            store.delete(key)


def loaded(paths: Paths, entry: InstalledPlugin) -> Plugin:
    """The installed plugin an install record entry names, from the store."""
    from plugman.manifest import plugin  # the loaders: not for uninstall, which needs none

    root = Store(paths.store_dir).path(entry.content_hash)
    fields = entry.entry
    declaration = plugin.Declaration(fields, Sink(str(root))) if fields else None
    found = plugin.load(root, Report(), declaration, strict=fields is None)
    if found is None:
        raise PlugmanError(f"the stored plugin at {root} no longer loads", hint="reinstall it")
    return found


def scope_of(paths: Paths, name: str, scope: Scope | None) -> Scope:
    """`scope`, or the highest scope the plugin is installed in."""
    if scope is not None:
        return scope
    for layer in PRECEDENCE:
        if layer in SCOPES:
            record = InstallRecord.load(paths, layer)
            if name in record.plugins or any(e.name == name for e in record.plugins.values()):
                return record.scope
    raise PlugmanError(f"plugin {name!r} is not installed", hint="run: plugman list")


def rows(
    paths: Paths, record: InstallRecord, plugin_id: str, options: tuple[UserOption, ...]
) -> list[Option]:
    values = record.config.get(plugin_id, {})
    held = record.secrets.get(plugin_id, [])
    found = []
    for o in options:
        given = o.key in held if o.sensitive else o.key in values
        state = "set" if given else "default" if o.default is not None else "unset"
        shown = None if o.sensitive else values.get(o.key, o.default)
        found.append(
            Option(
                plugin_id,
                o.key,
                o.type,
                o.title,
                o.description,
                o.sensitive,
                o.required,
                state,
                shown,
            )
        )
    return found

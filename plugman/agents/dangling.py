"""Agent-file entries and deployed links that point at what is gone (`plugman doctor`): a store
tree, or a plugin a launcher names.

A store tree goes when no install record refers to it any more (uninstall, update). plugman's
own entries in agents other than Claude Code name no store path (they name the launchers,
`plugman hooks exec AGENT EVENT 'OWNER#N'` or its direct form `plugman-hook AGENT EVENT
'OWNER#N'`, and `plugman mcp run plugin:NAME:SERVER`), but the user's own entries may, and
so may one written by an older plugman or copied by hand: every string in each agent file
plugman exported to or feeds (a linked agent's files) that names
`<store>/<hash>` is checked, with its key path. A launcher entry naming a plugin that is not
installed (one the user edited by hand, so it stayed when the plugin was uninstalled) fails at
each hook call or server start, and is reported too, as is a link plugman deployed (a Claude
Code plugin, a skill folder) whose target is gone. Reading only: nothing here changes a file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from plugman import extensions
from plugman.agents import export_record
from plugman.agents import links as linked
from plugman.core.errors import PlugmanError
from plugman.core.fs import read_bytes
from plugman.core.paths import Paths
from plugman.core.state import SCOPES, InstallRecord, Scope
from plugman.manifest import edit
from plugman.runtime.gateway.naming import split_server

STORE_GONE = "a store folder that no longer exists"
HOOK_LAUNCHER = re.compile(  # the launcher, or its direct form (runtime.launch.shplan)
    r"(?:\bhooks exec|(?:^|[/'\s])plugman-hook'?) \S+ \S+ '?([^'\s]+@[^'\s]+)#(\d+)'?"
)


class Dangling(NamedTuple):
    file: str
    key: str  # `mcp_servers.plugin_x_y.args[0]`, `hooks.PreToolUse[0].hooks[0].command`
    target: str  # what it names that is gone: a store path, a launched hook or server
    plugmans: bool  # the entry is still as plugman wrote it (else it is the user's)
    gone: str = STORE_GONE  # why the target is gone


class Launched(NamedTuple):
    key: str  # where the launcher names it
    target: str  # `the hook OWNER#N`, `the server plugin:NAME:SERVER`
    plugin: str  # the plugin's id (a hook's owner) or name (a server's)


class GoneLink(NamedTuple):
    path: str
    target: str
    links: list[str]  # `agent scope [project]` that want it


def entries(paths: Paths, env: Mapping[str, str]) -> list[Dangling]:
    """Every string naming a store tree that is gone, and every launcher naming a plugin that
    is not installed, in every agent file plugman knows."""
    pattern = re.compile(re.escape(str(paths.store_dir)) + r"/[0-9a-f]{64}")
    here = installed(paths)
    found: list[Dangling] = []
    for file, fmt in sorted(files(paths, env).items()):
        data = read_bytes(Path(file))
        if data is None:
            continue
        try:
            doc = edit.module(fmt).load(data.decode("utf-8"), file)
        except (PlugmanError, UnicodeDecodeError):
            continue  # doctor reports an unreadable exported file on its own
        owned = plugmans(paths, file, doc)
        for key, text in strings(doc, ""):
            for hit in dict.fromkeys(pattern.findall(text)):
                if not Path(hit).is_dir():
                    found.append(Dangling(file, key, hit, under(key, owned)))
        for named in launched(doc, ""):
            if here is not None and named.plugin not in here:
                gone = f"of {named.plugin}, which is not installed here"
                found.append(Dangling(file, named.key, named.target, under(named.key, owned), gone))
    return found


def installed(paths: Paths) -> set[str] | None:
    """The ids and names of the plugins installed in any scope; None when a record is broken
    (doctor reports that file on its own)."""
    try:
        ids = {i for scope in SCOPES for i in InstallRecord.load(paths, scope).plugins}
    except PlugmanError:
        return None
    return ids | {i.partition("@")[0] for i in ids}


def launched(value: Any, key: str) -> Iterator[Launched]:
    """Each plugin hook and server a launcher entry in a document names, with its key path."""
    if isinstance(value, str):
        hook = HOOK_LAUNCHER.search(value)
        if hook is not None:
            owner, n = hook.groups()
            yield Launched(key, f"the hook {owner}#{n}", owner)
    elif isinstance(value, dict):
        given = value.get("args")
        args: list[Any] = given if isinstance(given, list) else []
        for at in range(2, len(args)):
            plugin = split_server(str(args[at]))[0]
            if args[at - 2 : at] == ["mcp", "run"] and plugin:
                yield Launched(f"{key}.args[{at}]", f"the server {args[at]}", plugin)
        for name, item in value.items():
            yield from launched(item, f"{key}.{name}" if key else str(name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from launched(item, f"{key}[{index}]")


def links(paths: Paths) -> list[GoneLink]:
    """Links plugman deployed whose target is gone (the link itself still there)."""
    # lazy: agents.artifacts takes ~7 ms to import, only this path needs it
    from plugman.agents import artifacts

    found = []
    for key, entry in artifacts.load(paths).items():
        target = entry.files.get("", "")
        path = Path(key)
        if target.startswith("link:") and path.is_symlink() and not path.exists():
            found.append(GoneLink(key, target.removeprefix("link:"), list(entry.links)))
    return found


def files(paths: Paths, env: Mapping[str, str], scope: Scope | None = None) -> dict[str, str]:
    """file → format: every file plugman exported to, and every file of a linked agent (of
    `scope` only, when given)."""
    # lazy: agents.targets takes ~100 ms to import, only this path needs it
    from plugman.agents.targets import Place

    exports = export_record.load(paths)
    keys = {export_record.key(k.split(" ")[0], scope, paths) for k in exports} if scope else set()
    found = {
        file: written.fmt
        for key, exported in exports.items()
        if scope is None or key in keys
        for file, written in exported.items()
    }
    try:
        every = linked.every(paths)
    except PlugmanError:  # a broken plugman.toml: doctor reports it once, on its own
        every = []
    for link in [link for link in every if scope in (None, link.scope)]:
        try:
            spec = extensions.target(link.agent)
        except PlugmanError:
            continue  # an agent no longer known: `agents list` says so
        home = Path(env.get("HOME") or Path.home())  # as `export.home_of`, without the cycle
        place = Place(link.scope, home, paths.project_dir, env)
        for loc in spec.locate(place).values():
            found.setdefault(str(loc.path), loc.fmt or spec.fmt)
    return found


def plugmans(paths: Paths, file: str, doc: Any) -> list[str]:
    """The key paths of the entries in `file` that are still as plugman wrote them."""
    owned = []
    for exported in export_record.load(paths).values():
        sealed = exported.get(file)
        for part in sealed.parts if sealed else []:
            container = edit.at(doc, part.container)
            where = ".".join(part.container)
            for entry_id, wanted in part.entries.items():
                value = export_record.current(container, entry_id, wanted, part.listed)
                if value is None:
                    continue
                if part.listed and isinstance(container, list):
                    owned += [f"{where}[{i}]" for i, v in enumerate(container) if v == value]
                else:
                    owned.append(f"{where}.{entry_id}")
    return owned


def strings(value: Any, key: str) -> Iterator[tuple[str, str]]:
    """Every string in a document, with its key path."""
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, dict):
        for name, item in value.items():
            yield from strings(item, f"{key}.{name}" if key else str(name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from strings(item, f"{key}[{index}]")


def under(key: str, tops: list[str]) -> bool:
    """Whether key path `key` is one of `tops` or inside one."""
    return any(key == t or key.startswith((t + ".", t + "[")) for t in tops)

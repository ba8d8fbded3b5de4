"""What a new tree of a plugin can do that the installed one could not.

`compare` reads two plugin trees (the installed one in the store and the one fetched) as Claude
Code loads them and lists what was gained: hooks (event, matcher, command, condition and
timeout), MCP servers (command and arguments and the names of their env variables, or URL, its
host and the names of its headers: a changed value shows as a changed digest, never as the
value), executables in `bin/` (on the Bash tool's PATH), the honoured keys of the plugin's
`settings.json`, and the always-on context (skill descriptions and command text, in bytes).
What was lost is listed apart. Pure: it reads files and returns values; `update`, `sync` and
`plugman diff` show it before (or without) changing bytes.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path
from typing import Literal, NamedTuple
from urllib.parse import urlsplit

from plugman.core.jsonvalue import JSONObject, PluginFields
from plugman.manifest import plugin as plugins
from plugman.manifest.model import Plugin

CapabilityKind = Literal["hook", "server", "executable", "setting", "context"]


class CapabilityChange(NamedTuple):
    """One capability gained or lost: `before` None when it is new, `after` None when gone."""

    kind: CapabilityKind
    name: str
    before: str | None
    after: str | None


class Capabilities(NamedTuple):
    plugin: str
    gained: tuple[CapabilityChange, ...]
    lost: tuple[CapabilityChange, ...]
    context_before: int  # bytes of always-on text (skill descriptions, command files)
    context_after: int

    @property
    def empty(self) -> bool:
        return not self.gained and not self.lost


def _hooks(plugin: Plugin | None) -> dict[str, set[str]]:
    """`EVENT:MATCHER` -> the commands (or URLs, prompts) its handlers run, each with the
    condition (`if`) and the timeout it runs under."""
    found: dict[str, set[str]] = {}
    for hook in plugin.hooks if plugin else ():
        entry = hook.entry
        what = f"{hook.type} {entry.get('command') or entry.get('url') or entry.get('prompt')}"
        if isinstance(entry.get("if"), str):
            what += f" [if {entry['if']}]"
        if isinstance(entry.get("timeout"), int | float) and not isinstance(entry["timeout"], bool):
            what += f" [timeout {entry['timeout']:g}s]"
        key = f"{hook.event}:{hook.matcher or '*'}"
        found.setdefault(key, set()).add(what)
    return found


def _names_and_values(entry: JSONObject, key: str) -> str:
    """` KEY a, b (values #1a2b3c)`: the names in a server's `env` or `headers` table, and a
    digest of their values, so a changed value shows without printing it (it may be a secret)."""
    table = entry.get(key)
    if not isinstance(table, dict) or not table:
        return ""
    digest = hashlib.sha256(json.dumps(table, sort_keys=True).encode()).hexdigest()[:6]
    return f"; {key} {', '.join(sorted(map(str, table)))} (values #{digest})"


def _servers(plugin: Plugin | None) -> dict[str, str]:
    found = {}
    for server in plugin.mcp_servers if plugin else ():
        entry = server.entry
        if isinstance(entry.get("url"), str):
            host = urlsplit(entry["url"]).hostname or "?"
            found[server.name] = f"{server.transport} {entry['url']} (host {host})"
            found[server.name] += _names_and_values(entry, "headers")
        else:
            args = [str(a) for a in entry.get("args") or [] if isinstance(a, (str, int, float))]
            found[server.name] = shlex.join([str(entry.get("command", "")), *args])
            found[server.name] += _names_and_values(entry, "env")
    return found


def _executables(root: Path) -> dict[str, str]:
    folder = root / "bin"
    if not folder.is_dir():
        return {}
    return {
        f"bin/{p.relative_to(folder).as_posix()}": hashlib.sha256(p.read_bytes()).hexdigest()[:12]
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


SETTINGS = ("agent", "subagentStatusLine")  # the keys Claude Code honours in a plugin's file


def _settings(root: Path) -> dict[str, str]:
    try:
        doc = json.loads((root / "settings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict):
        return {}
    return {k: json.dumps(doc[k], sort_keys=True) for k in SETTINGS if k in doc}


def _context(plugin: Plugin | None) -> int:
    if plugin is None:
        return 0
    size = sum(len((s.description or "").encode()) for s in plugin.skills)
    return size + sum(p.stat().st_size for p in plugin.commands if p.is_file())


def _keyed(
    kind: CapabilityKind, old: dict[str, str], new: dict[str, str]
) -> tuple[list[CapabilityChange], list[CapabilityChange]]:
    gained = [
        CapabilityChange(kind, k, old.get(k), v) for k, v in sorted(new.items()) if old.get(k) != v
    ]
    lost = [CapabilityChange(kind, k, v, None) for k, v in sorted(old.items()) if k not in new]
    return gained, lost


def compare(
    plugin_id: str,
    old: Path | None,
    new: Path,
    old_fields: PluginFields | None = None,
    new_fields: PluginFields | None = None,
) -> Capabilities:
    """What the tree `new` can do that `old` (None: nothing installed) could not, and lost."""
    before = plugins.load_as_installed(old, old_fields) if old is not None else None
    after = plugins.load_as_installed(new, new_fields)
    gained: list[CapabilityChange] = []
    lost: list[CapabilityChange] = []
    old_hooks, new_hooks = _hooks(before), _hooks(after)
    for key in sorted(new_hooks):
        was = old_hooks.get(key, set())
        for command in sorted(new_hooks[key] - was):
            gone = sorted(was - new_hooks[key])
            gained.append(CapabilityChange("hook", key, "; ".join(gone) or None, command))
    for key in sorted(old_hooks):
        for command in sorted(old_hooks[key] - new_hooks.get(key, set())):
            if new_hooks.get(key, set()) <= old_hooks[key]:
                lost.append(CapabilityChange("hook", key, command, None))
    tables: tuple[tuple[CapabilityKind, dict[str, str], dict[str, str]], ...] = (
        ("server", _servers(before), _servers(after)),
        ("executable", _executables(old) if old else {}, _executables(new)),
        ("setting", _settings(old) if old else {}, _settings(new)),
    )
    for kind, was_table, now_table in tables:
        more, less = _keyed(kind, was_table, now_table)
        gained += more
        lost += less
    size_before, size_after = _context(before), _context(after)
    if size_after > size_before:
        gained.append(
            CapabilityChange("context", "always-on text", f"{size_before}", f"{size_after}")
        )
    return Capabilities(plugin_id, tuple(gained), tuple(lost), size_before, size_after)

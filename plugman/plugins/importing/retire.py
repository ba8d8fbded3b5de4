"""Retiring Claude Code's own installs that `plugman import claude` replaces, and putting them
back on `--undo`, byte for byte.

After an import, plugman delivers its copy of each plugin to a linked Claude Code; Claude's own
install of it would stay beside it (a project plugin loaded twice, a user one taking the name
from plugman's: docs/claude-import.md, "Two copies"). So the import retires Claude's install in
the same transaction, doing to Claude's records what Claude Code 2.1.328 does itself:

- `uninstall` (user and local scope), as `claude plugin uninstall ID --scope S --keep-data`:
  the scope's record in `<claude config>/plugins/installed_plugins.json` taken out (the plugin's
  key with it when it was the last) and its `enabledPlugins` entry taken out of that scope's
  settings file (`~/.claude/settings.json`, `.claude/settings.local.json`). A disabled install
  still takes the name, so turning it off is not enough there. Its data folder, options,
  secrets and cached copy stay, as `--keep-data` leaves them (Claude sweeps a cached version
  no record names after 7 days; an undo after that makes Claude fetch it again).
- `disable` (project scope), as `claude plugin disable ID --scope local`: the team's committed
  `.claude/settings.json` is not touched; `enabledPlugins[ID] = false` in this machine's
  `.claude/settings.local.json` turns it off here (two marketplace plugins of one name load
  side by side, a disabled one not at all). Its record stays.

Each file is edited in place (only the entry, `manifest.edit.jsonc`), and the change is kept as
one splice per file (where, the text taken out, the text put in, and the digest of the result):
an undo finding the file as the import left it puts the old bytes back exactly; one finding it
changed since (Claude wrote it again) puts each entry back by itself. The splices hold only
Claude's entries for these plugins, never the rest of a settings file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from plugman.agents import claude_own
from plugman.core.fs import read_bytes
from plugman.core.jsonvalue import JSONObject
from plugman.core.state import Scope, as_scope
from plugman.core.transaction import Transaction
from plugman.manifest import edit
from plugman.manifest.edit import Part, jsonc

UNINSTALL, DISABLE, KEEP = "uninstall", "disable", "keep"
ENABLED = ("enabledPlugins",)


class Retire(NamedTuple):
    id: str  # Claude's id, name@marketplace
    scope: Scope
    how: str  # uninstall | disable | keep
    settings: Path  # the settings file of that scope it edits (disable: the local one)
    record: JSONObject  # its entry in installed_plugins.json, as Claude wrote it
    reason: str = ""  # why it is kept, when it is kept without being asked


class RetiredEntry(NamedTuple):
    """One install retired, as the import record keeps it (its keys in this order)."""

    id: str  # Claude's id, name@marketplace
    scope: Scope
    how: str  # uninstall | disable
    settings: str  # the settings file edited
    enabled: object  # its `enabledPlugins` value there before (JSON), None when it had none
    had: bool  # whether that settings file had an `enabledPlugins` entry for it
    record: JSONObject  # its entry in installed_plugins.json, as Claude wrote it


class Splice(NamedTuple):
    """One file's edit: at byte `at`, `removed` taken out and `added` put in, giving a file of
    digest `sha256` (`created`: the file did not exist before)."""

    path: str
    created: bool
    at: int
    removed: str
    added: str
    sha256: str


class Retirement(NamedTuple):
    """What one import retired, and the splices that put it back: a table of the import record
    (`claude_import`), read with `from_json` and written with `to_json` under the keys the file
    always had."""

    claude_dir: str
    entries: tuple[RetiredEntry, ...]
    files: tuple[Splice, ...]

    def to_json(self) -> JSONObject:
        return {
            "claude_dir": self.claude_dir,
            "entries": [entry._asdict() for entry in self.entries],
            "files": [splice._asdict() for splice in self.files],
        }

    @classmethod
    def from_json(cls, data: object) -> Retirement:
        """The table as `to_json` wrote it; ValueError for any other shape."""
        table = _object(data, {"claude_dir": str, "entries": list, "files": list})
        entries = tuple(_entry(item) for item in table["entries"])
        files = tuple(Splice(**_object(item, _SPLICE)) for item in table["files"])
        return cls(table["claude_dir"], entries, files)


_SPLICE: dict[str, type] = {
    "path": str,
    "created": bool,
    "at": int,
    "removed": str,
    "added": str,
    "sha256": str,
}
_ENTRY: dict[str, type] = {
    "id": str,
    "scope": str,
    "how": str,
    "settings": str,
    "enabled": object,
    "had": bool,
    "record": dict,
}


def _object(data: object, kinds: dict[str, type]) -> JSONObject:
    """`data`'s members named in `kinds`, each of its kind; ValueError when one is not."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    if any(key not in data or not isinstance(data[key], kind) for key, kind in kinds.items()):
        raise ValueError("a member is missing or of the wrong type")
    if "at" in kinds and isinstance(data["at"], bool):
        raise ValueError("'at' is not a number")
    return {key: data[key] for key in kinds}


def _entry(data: object) -> RetiredEntry:
    fields = _object(data, _ENTRY)
    scope = as_scope(fields.pop("scope"))
    if scope is None or fields["how"] not in (UNINSTALL, DISABLE):
        raise ValueError("an entry's scope or action is not one plugman writes")
    return RetiredEntry(scope=scope, **fields)


def claude_step(item: Retire) -> str:
    """What it does, as Claude's own command."""
    if item.how == DISABLE:
        return f"claude plugin disable {item.id} --scope local"
    return f"claude plugin uninstall {item.id} --scope {item.scope} --keep-data"


def apply(tx: Transaction, config: Path, items: list[Retire]) -> Retirement:
    """Retire `items` in `tx`; what `restore` needs to put them back."""
    record = claude_own.record_file(config)
    edits: dict[Path, list[Callable[[str], str]]] = {}
    entries = []
    for item in items:
        if item.how == KEEP:
            continue
        text = _text(item.settings)
        enabled = json.loads(text).get("enabledPlugins", {}) if text.strip() else {}
        had = item.id in enabled if isinstance(enabled, dict) else False
        value = enabled.get(item.id) if had else None
        entries.append(
            RetiredEntry(item.id, item.scope, item.how, str(item.settings), value, had, item.record)
        )
        if item.how == DISABLE:
            edits.setdefault(item.settings, []).append(_turned_off(item.id))
            continue
        if had:
            edits.setdefault(item.settings, []).append(_without_enabled(item.id))
        edits.setdefault(record, []).append(_without_record(item.id, item.record))
    files = [_edit(tx, path, steps) for path, steps in edits.items()]
    return Retirement(str(config), tuple(entries), tuple(f for f in files if f))


def _edit(tx: Transaction, path: Path, steps: list[Callable[[str], str]]) -> Splice | None:
    before = read_bytes(path)
    text = before.decode("utf-8") if before is not None else ""
    for step in steps:
        text = step(text)
    after = text.encode("utf-8")
    if after == before:
        return None
    tx.write(path, after)
    old = before or b""
    start = 0
    while start < min(len(old), len(after)) and old[start] == after[start]:
        start += 1
    end = 0
    limit = min(len(old), len(after)) - start
    while end < limit and old[-1 - end] == after[-1 - end]:
        end += 1
    return Splice(
        path=str(path),
        created=before is None,
        at=start,
        removed=old[start : len(old) - end].decode("utf-8", "surrogateescape"),
        added=after[start : len(after) - end].decode("utf-8", "surrogateescape"),
        sha256=hashlib.sha256(after).hexdigest(),
    )


def _text(path: Path) -> str:
    data = read_bytes(path)
    return data.decode("utf-8") if data is not None else ""


def _without_enabled(claude_id: str) -> Callable[[str], str]:
    def step(text: str) -> str:
        value = json.loads(text)["enabledPlugins"][claude_id]
        return jsonc.remove(text, Part(ENABLED, {claude_id: value}), claude_id)

    return step


def _turned_off(claude_id: str) -> Callable[[str], str]:
    def step(text: str) -> str:
        data = json.loads(text) if text.strip() else {}
        if isinstance(data.get("enabledPlugins"), dict):
            return jsonc.set_member(text, ENABLED, claude_id, False, claude_id)
        return edit.add("json", text or "{}", [Part(ENABLED, {claude_id: False})], claude_id).text

    return step


def _without_record(claude_id: str, record: JSONObject) -> Callable[[str], str]:
    def step(text: str) -> str:
        records = json.loads(text)["plugins"][claude_id]
        if records == [record]:
            return jsonc.remove(text, Part(("plugins",), {claude_id: records}), claude_id)
        return jsonc.remove(text, Part(("plugins", claude_id), {"": record}, True), claude_id)

    return step


def restore(tx: Transaction, config: Path, retired: Retirement) -> list[str]:
    """Put back what `apply` retired: each file as it was when it is as the import left it,
    else each entry by itself; what was done, in words."""
    exact = set()
    for done in reversed(retired.files):
        path = Path(done.path)
        now = read_bytes(path)
        if now is not None and hashlib.sha256(now).hexdigest() == done.sha256:
            exact.add(str(path))
            tx.write(path, _unsplice(now, done))
    record = claude_own.record_file(config)
    said = []
    for entry in reversed(retired.entries):
        if str(record) not in exact and entry.how == UNINSTALL:
            _put_record(tx, record, entry)
        if entry.settings not in exact:
            _put_enabled(tx, Path(entry.settings), entry)
        said.append(f"gave back Claude Code's own install {entry.id} ({entry.scope})")
    return said


def _unsplice(now: bytes, done: Splice) -> bytes | None:
    if done.created:
        return None
    added = done.added.encode("utf-8", "surrogateescape")
    removed = done.removed.encode("utf-8", "surrogateescape")
    return now[: done.at] + removed + now[done.at + len(added) :]


def _put_record(tx: Transaction, path: Path, entry: RetiredEntry) -> None:
    data = json.loads(_text(path) or '{"version": 2, "plugins": {}}')
    records = data.setdefault("plugins", {}).setdefault(entry.id, [])
    if entry.record not in records:
        records.append(entry.record)
        tx.write(path, json.dumps(data, indent=2).encode())


def _put_enabled(tx: Transaction, path: Path, entry: RetiredEntry) -> None:
    text = _text(path)
    data = json.loads(text) if text.strip() else {}
    enabled = data.get("enabledPlugins")
    if not isinstance(enabled, dict):
        return
    if entry.how == DISABLE and enabled.get(entry.id) is False and not entry.had:
        text = jsonc.remove(text, Part(ENABLED, {entry.id: False}), entry.id)
    elif (entry.had and entry.id not in enabled) or (entry.how == DISABLE and entry.had):
        text = jsonc.set_member(text, ENABLED, entry.id, entry.enabled, entry.id)
    else:
        return
    tx.write(path, text.encode())

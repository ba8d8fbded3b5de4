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
from typing import Any, NamedTuple

from plugman.agents import claude_own
from plugman.core.fs import read_bytes
from plugman.core.state import Scope
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
    record: dict[str, Any]  # its entry in installed_plugins.json
    reason: str = ""  # why it is kept, when it is kept without being asked


def claude_step(item: Retire) -> str:
    """What it does, as Claude's own command."""
    if item.how == DISABLE:
        return f"claude plugin disable {item.id} --scope local"
    return f"claude plugin uninstall {item.id} --scope {item.scope} --keep-data"


def apply(tx: Transaction, config: Path, items: list[Retire]) -> dict[str, Any]:
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
        entries.append(
            {
                "id": item.id,
                "scope": item.scope,
                "how": item.how,
                "settings": str(item.settings),
                "enabled": enabled.get(item.id) if had else None,
                "had": had,
                "record": item.record,
            }
        )
        if item.how == DISABLE:
            edits.setdefault(item.settings, []).append(_turned_off(item.id))
            continue
        if had:
            edits.setdefault(item.settings, []).append(_without_enabled(item.id))
        edits.setdefault(record, []).append(_without_record(item.id, item.record))
    files = [_edit(tx, path, steps) for path, steps in edits.items()]
    return {"claude_dir": str(config), "entries": entries, "files": [f for f in files if f]}


def _edit(tx: Transaction, path: Path, steps: list[Callable[[str], str]]) -> dict[str, Any]:
    before = read_bytes(path)
    text = before.decode("utf-8") if before is not None else ""
    for step in steps:
        text = step(text)
    after = text.encode("utf-8")
    if after == before:
        return {}
    tx.write(path, after)
    old = before or b""
    start = 0
    while start < min(len(old), len(after)) and old[start] == after[start]:
        start += 1
    end = 0
    limit = min(len(old), len(after)) - start
    while end < limit and old[-1 - end] == after[-1 - end]:
        end += 1
    return {
        "path": str(path),
        "created": before is None,
        "at": start,
        "removed": old[start : len(old) - end].decode("utf-8", "surrogateescape"),
        "added": after[start : len(after) - end].decode("utf-8", "surrogateescape"),
        "sha256": hashlib.sha256(after).hexdigest(),
    }


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


def _without_record(claude_id: str, record: dict[str, Any]) -> Callable[[str], str]:
    def step(text: str) -> str:
        records = json.loads(text)["plugins"][claude_id]
        if records == [record]:
            return jsonc.remove(text, Part(("plugins",), {claude_id: records}), claude_id)
        return jsonc.remove(text, Part(("plugins", claude_id), {"": record}, True), claude_id)

    return step


def restore(tx: Transaction, config: Path, retired: dict[str, Any]) -> list[str]:
    """Put back what `apply` retired: each file as it was when it is as the import left it,
    else each entry by itself; what was done, in words."""
    exact = set()
    for done in reversed(retired.get("files", [])):
        path = Path(done["path"])
        now = read_bytes(path)
        if now is not None and hashlib.sha256(now).hexdigest() == done["sha256"]:
            exact.add(str(path))
            tx.write(path, _unsplice(now, done))
    record = claude_own.record_file(config)
    said = []
    for entry in reversed(retired.get("entries", [])):
        if str(record) not in exact and entry["how"] == UNINSTALL:
            _put_record(tx, record, entry)
        if entry["settings"] not in exact:
            _put_enabled(tx, Path(entry["settings"]), entry)
        said.append(f"gave back Claude Code's own install {entry['id']} ({entry['scope']})")
    return said


def _unsplice(now: bytes, done: dict[str, Any]) -> bytes | None:
    if done["created"]:
        return None
    at: int = done["at"]
    added = str(done["added"]).encode("utf-8", "surrogateescape")
    removed = str(done["removed"]).encode("utf-8", "surrogateescape")
    return now[:at] + removed + now[at + len(added) :]


def _put_record(tx: Transaction, path: Path, entry: dict[str, Any]) -> None:
    data = json.loads(_text(path) or '{"version": 2, "plugins": {}}')
    records = data.setdefault("plugins", {}).setdefault(entry["id"], [])
    if entry["record"] not in records:
        records.append(entry["record"])
        tx.write(path, json.dumps(data, indent=2).encode())


def _put_enabled(tx: Transaction, path: Path, entry: dict[str, Any]) -> None:
    text = _text(path)
    data = json.loads(text) if text.strip() else {}
    enabled = data.get("enabledPlugins")
    if not isinstance(enabled, dict):
        return
    if entry["how"] == DISABLE and enabled.get(entry["id"]) is False and not entry["had"]:
        text = jsonc.remove(text, Part(ENABLED, {entry["id"]: False}), entry["id"])
    elif (entry["had"] and entry["id"] not in enabled) or (
        entry["how"] == DISABLE and entry["had"]
    ):
        text = jsonc.set_member(text, ENABLED, entry["id"], entry["enabled"], entry["id"])
    else:
        return
    tx.write(path, text.encode())

"""plugman.lock: the exact pins of a project's plugins (machine-written, deterministic), and
their typed model, `LockEntry` and its `LockedSource` (plugman.core.sources: the one typed
source table, which install records and outputs carry too).

The lock is committed, so it is input from whoever wrote the last commit: `read` parses it
once against the published schema (`plugman-lock.schema.json`), every finding (a key missing,
a wrong type, a key plugman does not write, a merge left unresolved) an `InputError` at its
line and key path (exit 2), before anything acts on it. The rest of plugman reads attributes
of the model, never keys of the file. What a lock says is a request, never consent: whether
its pins are let in is decided by their marketplaces and this machine's user (plugins.sync).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from plugman.config.declarations import read_located
from plugman.core.errors import PlugmanError
from plugman.core.sources import LockedSource
from plugman.core.state import InstalledPlugin
from plugman.manifest import schema, tomlloc

__all__ = ["LockEntry", "LockedSource", "by_id", "pinned", "read", "render"]

HEADER = "This file is written by plugman (plugman lock / install). Do not edit it by hand."
FORMAT = 1
SCHEMA = "plugman-lock.schema.json"
HINT = (
    "plugman.lock is written by plugman: take it as committed (git checkout plugman.lock) "
    "or write it again from plugman.toml: plugman lock"
)


class LockEntry(NamedTuple):
    """One locked plugin."""

    id: str
    name: str
    marketplace: str
    version: str
    content_hash: str
    source: LockedSource
    # "allowed": let in with hidden text where it was locked; a record, not an allowance
    # (sync asks this machine's user again: plugins.sync)
    hidden_text: str | None = None
    signer: str | None = None  # its signer, pinned: update and sync refuse another
    line: int | None = None  # the line of its `id` in the file read (None: made here)

    def fields(self) -> dict[str, Any]:
        """The entry as the file writes it (its keys, in order)."""
        found: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "marketplace": self.marketplace,
            "version": self.version,
            "content_hash": self.content_hash,
            "source": self.source.table(),
        }
        if self.hidden_text:
            found["hidden_text"] = self.hidden_text
        if self.signer:
            found["signer"] = self.signer
        return found


def render(pins: list[LockEntry]) -> bytes | None:
    """The lock file for these pins (sorted by id); None when there are none."""
    if not pins:
        return None
    import tomlkit  # ~10 ms: only a project's install writes a lock

    doc = tomlkit.document()
    doc.add(tomlkit.comment(HEADER))
    doc.add("format", FORMAT)
    plugins = tomlkit.aot()
    for pin in sorted(pins, key=lambda p: p.id):
        entry = tomlkit.table()
        for key, value in pin.fields().items():
            if key == "source":
                source = tomlkit.inline_table()
                source.update(dict(sorted(value.items())))
                value = source
            entry.add(key, value)
        plugins.append(entry)
    doc.add("plugins", plugins)
    return tomlkit.dumps(doc).encode()


def read(path: Path) -> list[LockEntry]:
    """The pins in a lock file, checked; empty when there is none."""
    data, text = read_located(path, HINT)
    if not data and not text.strip():
        return []
    version = data.get("format", FORMAT)
    if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT:
        raise PlugmanError(
            f"{path} has format {version!r}; this plugman reads {FORMAT}",
            hint="use the plugman version that wrote it, or run: plugman lock",
        )
    # plugman writes every key of the file: one it does not write (a warning in a file a
    # person edits) is as wrong here as a missing one
    found = [(f.path, f.message) for f in schema.check(data, schema.load(SCHEMA), SCHEMA, ())]
    locate = tomlloc.locator(text)
    if found:
        raise tomlloc.refused(str(path), locate, found, HINT)
    entries = [_entry(t, locate(("plugins", i, "id"))) for i, t in enumerate(data["plugins"])]
    ids = [entry.id for entry in entries]
    twice = [
        ((("plugins", i, "id"), f"{entry.id} is locked twice"))
        for i, entry in enumerate(entries)
        if entry.id in ids[:i]
    ]
    twice += [
        ((("plugins", i, "id"), f"{entry.id} is not {entry.name}@{entry.marketplace}"))
        for i, entry in enumerate(entries)
        if entry.id != f"{entry.name}@{entry.marketplace}"
    ]
    if twice:
        raise tomlloc.refused(str(path), locate, twice, HINT)
    return entries


def _entry(table: dict[str, Any], at: tuple[int, int] | None) -> LockEntry:
    """A checked table of `[[plugins]]` as its entry."""
    return LockEntry(
        table["id"],
        table["name"],
        table["marketplace"],
        table["version"],
        table["content_hash"],
        LockedSource.parse(table["source"], "plugman.lock", HINT).settled(),
        table.get("hidden_text"),
        table.get("signer"),
        at[0] if at else None,
    )


def pinned(plugin_id: str, plugin: InstalledPlugin) -> LockEntry:
    """The lock entry of an installed plugin, as its record has it."""
    return LockEntry(
        plugin_id,
        plugin.name,
        plugin.marketplace,
        plugin.version,
        plugin.content_hash,
        plugin.source.settled(),
        plugin.hidden_text,
        plugin.signer,
    )


def by_id(pins: list[LockEntry]) -> dict[str, LockEntry]:
    return {pin.id: pin for pin in pins}

"""`plugman marketplace build`: a marketplace's `plugins` entries, filled from its plugin
folders.

Every plugin folder under the plugin root (`metadata.pluginRoot`, else `./plugins`) gets an
entry: `name`, `source` (`./plugins/x`), and plugin.json's `description` and `version`. An
entry whose source is that folder is kept, with every field its author wrote; only its
`description` and `version` follow plugin.json (when plugin.json has them). Entries for other
sources are never touched. The file is edited in place (plugman.manifest.edit): its
indentation, key order and every other byte stay as they were.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, NamedTuple

from plugman.core import fs
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.jsonvalue import PluginFields
from plugman.manifest import edit
from plugman.manifest.edit import jsonc
from plugman.manifest.plugin import has_components, manifest_file
from plugman.manifest.validate import valid_plugin
from plugman.plugins.sources.common import relative_parts

SYNCED = ("description", "version")  # the fields plugin.json decides
DEFAULT_ROOT = "./plugins"


class EntryChange(NamedTuple):
    name: str
    source: str
    action: str  # added | updated | unchanged
    fields: tuple[str, ...] = ()  # the fields an update changed


class Built(NamedTuple):
    file: Path
    changes: tuple[EntryChange, ...]
    missing: tuple[str, ...]  # local sources of entries whose folder is gone (kept as written)
    written: bool  # False: nothing to change, or --check

    @property
    def stale(self) -> bool:
        return any(change.action != "unchanged" for change in self.changes)


class _Found(NamedTuple):
    """One plugin folder: its entry as plugin.json says it."""

    folder: Path
    entry: PluginFields


def build(directory: Path, *, check: bool = False) -> Built:
    """Bring `directory`'s marketplace.json up to date with its plugin folders (`check`: only
    say whether it is; PlugmanError when it is not)."""
    file = directory / ".claude-plugin" / "marketplace.json"
    if not file.is_file():
        raise UsageError(
            f"{directory} has no .claude-plugin/marketplace.json",
            hint="pass a marketplace folder, or make one: plugman new --marketplace NAME",
        )
    text = file.read_text(encoding="utf-8")
    data = jsonc.load(text, str(file))
    entries = data.get("plugins", [])
    if not isinstance(entries, list):
        raise PlugmanError(
            "'plugins' is not a list", where=str(file), hint="make it a list of entries"
        )
    found = _plugins(directory, data)
    expected = copy.deepcopy(data)
    changes, text = _update(file, text, expected, found)
    if jsonc.load(text, str(file)) != expected:  # set_member is checked like edit.add checks
        raise edit.EditError(
            "updating the entries would change other settings",
            where=str(file),
            hint="the file's layout is unusual; update the entries by hand",
        )
    new = [f for f in found if _index(entries, f) is None]
    _check_names(file, entries, new)
    if new:
        part = edit.Part(("plugins",), {f.entry["name"]: f.entry for f in new}, listed=True)
        text = edit.add("json", text, [part], str(file)).text
        changes += [EntryChange(f.entry["name"], f.entry["source"], "added") for f in new]
    built = Built(file, tuple(changes), tuple(_missing(directory, entries)), written=False)
    if check and built.stale:
        raise PlugmanError(
            "marketplace.json is out of date: " + _summary(built),
            where=str(file),
            hint=f"run `plugman marketplace build {directory}` and commit the result",
        )
    if built.stale and not check:
        fs.atomic_write(file, text.encode("utf-8"))
        built = built._replace(written=True)
    return built


def _plugins(directory: Path, data: dict[str, Any]) -> list[_Found]:
    """Every plugin folder under the plugin root, sorted, with the entry plugin.json gives."""
    metadata = data.get("metadata")
    root_text = metadata.get("pluginRoot") if isinstance(metadata, dict) else None
    if not isinstance(root_text, str):
        root_text = DEFAULT_ROOT
    try:
        root = directory.joinpath(*relative_parts(root_text, "metadata.pluginRoot"))
    except PlugmanError as exc:
        raise PlugmanError(exc.message, where=str(directory), hint=exc.hint) from None
    if not root.is_dir():
        return []
    found = []
    for folder in sorted(root.iterdir(), key=lambda p: p.name):
        if not folder.is_dir() or folder.name.startswith("."):
            continue
        if manifest_file(folder)[1] is None and not has_components(folder):
            continue
        plugin, _ = valid_plugin(folder)
        entry = {"name": plugin.name, "source": "./" + folder.relative_to(directory).as_posix()}
        if plugin.description:
            entry["description"] = plugin.description
        if plugin.version:
            entry["version"] = plugin.version
        found.append(_Found(folder, entry))
    return found


def _normal(source: Any) -> str | None:
    """A local source as a plain relative path (`./plugins/x/` -> `plugins/x`), else None."""
    if not isinstance(source, str) or not source.startswith("./"):
        return None
    return "/".join(part for part in source.split("/") if part not in ("", "."))


def _index(entries: list[Any], found: _Found) -> int | None:
    """The entry whose source is the folder `found`, if any."""
    wanted = _normal(found.entry["source"])
    for index, entry in enumerate(entries):
        if isinstance(entry, dict) and _normal(entry.get("source")) == wanted:
            return index
    return None


def _update(
    file: Path, text: str, data: dict[str, Any], found: list[_Found]
) -> tuple[list[EntryChange], str]:
    """Each listed folder's entry brought up to date, in `text` and in `data` alike."""
    changes = []
    entries = data.get("plugins", [])
    for item in found:
        index = _index(entries, item)
        if index is None:
            continue
        entry = entries[index]
        fields = [key for key in SYNCED if key in item.entry and entry.get(key) != item.entry[key]]
        for key in fields:
            text = jsonc.set_member(text, ("plugins", index), key, item.entry[key], str(file))
            entry[key] = item.entry[key]
        name = entry.get("name") if isinstance(entry.get("name"), str) else item.entry["name"]
        action = "updated" if fields else "unchanged"
        changes.append(EntryChange(name, str(entry.get("source")), action, tuple(fields)))
    return changes, text


def _check_names(file: Path, entries: list[Any], new: list[_Found]) -> None:
    """A new entry may not take a name another entry (or another new one) has."""
    taken = {e.get("name"): e.get("source") for e in entries if isinstance(e, dict)}
    for item in new:
        name = item.entry["name"]
        if name in taken:
            raise PlugmanError(
                f"plugin folder {item.entry['source']} is named {name!r}, which the entry for "
                f"{taken[name]!r} already uses",
                where=str(file),
                hint="rename one of them (the name in plugin.json, or the entry's name)",
            )
        taken[name] = item.entry["source"]


def _missing(directory: Path, entries: list[Any]) -> list[str]:
    gone = []
    for entry in entries:
        path = _normal(entry.get("source")) if isinstance(entry, dict) else None
        if path is not None and not (directory / path).is_dir():
            gone.append(str(entry["source"]))
    return gone


def _summary(built: Built) -> str:
    parts = []
    for change in built.changes:
        if change.action == "added":
            parts.append(f"{change.name} is not listed")
        elif change.action == "updated":
            verb = "differs" if len(change.fields) == 1 else "differ"
            parts.append(f"{change.name}'s {' and '.join(change.fields)} {verb} from plugin.json")
    return "; ".join(parts)

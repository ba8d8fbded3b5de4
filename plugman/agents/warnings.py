"""What the linked agents cannot take, kept between commands (`<state>/agent-warnings.json`).

Every deployment (`deploy.refresh`) finds, per linked agent and scope, what that agent cannot
take of what is resolved (a field left out, hooks an agent has no place for, a file that is not
plugman's). Those stand as long as their cause does. The record keeps each link's standing
ones, so that a command tells only the ones it brought (`fresh`: not standing before it ran,
nor saying what a standing one said of fewer things), once, and `plugman agents list` shows
them all (`standing`). A cause that went away and came back is told again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from plugman.core.errors import PlugmanError
from plugman.core.paths import Paths
from plugman.core.state import all_installed, read_state
from plugman.core.store import Store

FORMAT = 1
GENERAL = "*"  # the record's key (with the project) for what no one link owns


class Notice(NamedTuple):
    agent: str  # "" for a general one (a deployed file that is not plugman's, say)
    scope: str
    note: str


class Warned(NamedTuple):
    """What a deployment tells: the warnings it brought, and where paths are (for short ones)."""

    notices: list[Notice]  # a command's: the ones it brought; `standing`'s: every one
    home: Path
    project: Path
    stores: dict[str, str]  # store tree path → the plugin id installed from it


Record = dict[str, list[str]]  # link key (`export_record.key`) or `general` → its notes


def path(paths: Paths) -> Path:
    return paths.state_dir / "agent-warnings.json"


def general(paths: Paths) -> str:
    return f"{GENERAL} {paths.project_dir}"


def load(paths: Paths) -> Record:
    """The record; empty when it cannot be read (it only spares repeating warnings: a command
    then tells them all and writes it afresh; `plugman doctor` reports the unreadable file)."""
    try:
        data = read_state(path(paths), "move it away (plugman tells every warning again)", FORMAT)
    except PlugmanError:
        return {}
    found = (data or {}).get("warnings")
    if not isinstance(found, dict):
        return {}
    return {str(k): [str(n) for n in v] for k, v in found.items() if isinstance(v, list)}


def dump(record: Record) -> bytes | None:
    """The record's bytes; None (delete it) when no warning stands."""
    live = {key: notes for key, notes in sorted(record.items()) if notes}
    if not live:
        return None
    return (json.dumps({"format": FORMAT, "warnings": live}, indent=2) + "\n").encode()


def fresh(before: Record, now: Record, owners: Mapping[str, tuple[str, str]]) -> list[Notice]:
    """The notes in `now` that were not standing `before`, each once; `owners` names the agent
    and scope of each key."""
    found: list[Notice] = []
    for key, notes in now.items():
        agent, scope = owners.get(key, ("", ""))
        earlier = before.get(key, [])
        found += [
            Notice(agent, scope, n)
            for n in dict.fromkeys(notes)
            if not any(n == e or _fewer(n, e) for e in earlier)
        ]
    return found


_ITEM = re.compile(r"`[^`]*`|(?<![\w/.-])\d+(?![\w/.-])")  # a quoted name, a number


def _shape(note: str) -> str:
    """The note with its names and numbers taken out (a list of names is one)."""
    return re.sub(r"#(?:, #)*", "#", _ITEM.sub("#", note))


def _fewer(note: str, earlier: str) -> bool:
    """Whether `note` says what `earlier` said, of fewer things (`a` of `a`, `b`; 4 hook groups
    of 5): no news, as after an uninstall."""
    if _shape(note) != _shape(earlier):
        return False
    words, said = _ITEM.findall(note), _ITEM.findall(earlier)
    numbers = [(int(w), int(b)) for w, b in zip(words, said, strict=False) if w.isdigit()]
    if len(words) == len(said) and numbers and len(numbers) == len(words):
        return all(w <= b for w, b in numbers)
    return set(words) <= set(said)


def stores(paths: Paths) -> dict[str, str]:
    """Each installed plugin's store tree → its id (a warning names the plugin, not the tree)."""
    store = Store(paths.store_dir)
    return {
        str(store.path(plugin.content_hash)): plugin_id
        for plugin_id, plugin in all_installed(paths)
    }


def standing(paths: Paths, home: Path) -> Warned:
    """Every warning standing for the links of this project's scopes and the user scope."""
    # lazy: agents.export_record takes ~4 ms to import, only this path needs it
    from plugman.agents import export_record

    found: list[Notice] = []
    here = {export_record.key("", s, paths).strip() for s in ("user", "project", "local")}
    for key, notes in load(paths).items() if path(paths).exists() else []:
        read = export_record.parse(key)
        if key == general(paths):
            found += [Notice("", "", n) for n in notes]
        elif f"{read.scope} {read.project}".strip() in here:
            found += [Notice(read.agent, read.scope, n) for n in notes]
    return Warned(found, home, paths.project_dir, stores(paths) if found else {})

"""What `plugman export --write` put in agents' files: `<state>/exports.json`.

One entry per target, scope and project; per file, the blocks inserted (to take them out
exactly), the entries as written (to take out only those still as written), each entry's
contributing plugin (so uninstalling the plugin takes its entries out), and whether plugman
created the file and which folders (to leave no trace).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from plugman.edit import Block, Part
from plugman.paths import Paths
from plugman.state import read_state

FORMAT = 1


class Written(NamedTuple):
    """plugman's share of one agent file."""

    fmt: str
    parts: list[Part]
    blocks: list[Block]
    owners: dict[str, str]  # entry id → plugin id
    created: str | None  # the highest folder (or the file) plugman created, if any

    def to_json(self) -> dict[str, Any]:
        return {
            "fmt": self.fmt,
            "parts": [
                {"container": list(p.container), "entries": p.entries, "listed": p.listed}
                for p in self.parts
            ],
            "blocks": [
                {"before": b.before, "after": b.after, "created": b.created and list(b.created)}
                for b in self.blocks
            ],
            "owners": self.owners,
            "created": self.created,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Written:
        return cls(
            data["fmt"],
            [Part(tuple(p["container"]), p["entries"], p["listed"]) for p in data["parts"]],
            [
                Block(b["before"], b["after"], tuple(b["created"]) if b["created"] else None)
                for b in data["blocks"]
            ],
            data["owners"],
            data["created"],
        )


def path(paths: Paths) -> Path:
    return paths.state_dir / "exports.json"


def key(target: str, scope: str, paths: Paths) -> str:
    return f"{target} {scope}" if scope == "user" else f"{target} {scope} {paths.project_dir}"


Exports = dict[str, dict[str, Written]]  # export key → file → what plugman wrote there


def load(paths: Paths) -> Exports:
    data = read_state(path(paths), "run 'plugman doctor'") or {}
    return {
        name: {file: Written.from_json(w) for file, w in files.items()}
        for name, files in data.get("exports", {}).items()
    }


def dump(exports: Exports) -> bytes | None:
    """The record's bytes; None (delete it) when nothing is exported."""
    live = {name: files for name, files in exports.items() if files}
    if not live:
        return None
    body = {
        "format": FORMAT,
        "exports": {
            name: {file: w.to_json() for file, w in files.items()}
            for name, files in sorted(live.items())
        },
    }
    return (json.dumps(body, indent=2, sort_keys=True) + "\n").encode()


def owned(paths: Paths, file: Path, container: tuple[str, ...]) -> dict[str, Any]:
    """The entries (id → value as written) plugman put in `container` of `file`."""
    found: dict[str, Any] = {}
    if not path(paths).exists():
        return found
    for files in load(paths).values():
        written = files.get(str(file))
        for part in written.parts if written else []:
            if part.container == container and not part.listed:
                found.update(part.entries)
    return found

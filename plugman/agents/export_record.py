"""What `plugman export --write` put in agents' files: `<state>/exports.json`.

One entry per target, scope and project; per file, the blocks inserted (to take them out
exactly), a digest of each entry as written (to take out only those still as written), each
entry's contributing plugin (so uninstalling the plugin takes its entries out), and whether
plugman created the file and which folders (to leave no trace).

The record keeps no secret values (format 2): an entry is kept as the sha256 of its value, and
in a block's text every secret (a string under a credential-like key, a URL with credentials,
as `plugman.config.redact` judges them) is kept as its sha256 and length. `unseal` takes the values
back from the agent's file itself, where they are found only while they are still as plugman
wrote them. A format 1 record (values in clear) is read and sealed; the next write stores
format 2.

This module owns the record. Its location, the digest an entry is kept as, and the one query
resolution makes of it (`owned`) are in plugman.config.exported, as `config` is below `agents`.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, NamedTuple

from plugman.config import redact
from plugman.config.exported import FORMAT as FORMAT  # the record's location and entry form
from plugman.config.exported import digest as digest
from plugman.config.exported import path as path
from plugman.config.exported import read
from plugman.core.paths import Paths
from plugman.core.state import Scope
from plugman.manifest import edit
from plugman.manifest.edit import Block, Part

UNMATCHED = "\x00"  # a block no longer found as written: no JSON, TOML or YAML text holds NUL


class SealedText(NamedTuple):
    """A secret in a block's text as stored: its sha256 (hex) and length, never the text."""

    sha256: str
    length: int

    def to_json(self) -> dict[str, str | int]:
        return {"sha256": self.sha256, "length": self.length}


Segment = str | SealedText  # text as written, or a secret sealed


class Written(NamedTuple):
    """plugman's share of one agent file, with its values (in memory only)."""

    fmt: str
    parts: list[Part]
    blocks: list[Block]
    owners: dict[str, str]  # entry id → plugin id
    created: str | None  # the highest folder (or the file) plugman created, if any


class SealedBlock(NamedTuple):
    before: str
    after: list[Segment] | None  # None: not storable without a secret; taken out by structure
    created: tuple[str, ...] | None


class Sealed(NamedTuple):
    """plugman's share of one agent file as stored: entries as digests, secrets sealed."""

    fmt: str
    parts: list[Part]  # entries: id → digest
    blocks: list[SealedBlock]
    owners: dict[str, str]
    created: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "fmt": self.fmt,
            "parts": [
                {"container": list(p.container), "entries": p.entries, "listed": p.listed}
                for p in self.parts
            ],
            "blocks": [
                {
                    "before": b.before,
                    "after": _stored(b.after),
                    "created": b.created and list(b.created),
                }
                for b in self.blocks
            ],
            "owners": self.owners,
            "created": self.created,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Sealed:
        return cls(
            data["fmt"],
            [Part(tuple(p["container"]), p["entries"], p["listed"]) for p in data["parts"]],
            [
                SealedBlock(
                    b["before"],
                    _segments(b["after"]),
                    tuple(b["created"]) if b["created"] else None,
                )
                for b in data["blocks"]
            ],
            data["owners"],
            data["created"],
        )


def _stored(segments: list[Segment] | None) -> list[str | dict[str, str | int]] | None:
    if segments is None:
        return None
    return [s if isinstance(s, str) else s.to_json() for s in segments]


def _segments(stored: list[Any] | None) -> list[Segment] | None:
    """A block's stored text read back: strings as written, each sealed secret typed."""
    if stored is None:
        return None
    return [s if isinstance(s, str) else SealedText(s["sha256"], int(s["length"])) for s in stored]


def secrets(value: Any, key: str = "") -> set[str]:
    """The secret strings in an entry as written: under a credential-like key, or a URL with
    credentials (more is harmless: it is only kept as a digest)."""
    if isinstance(value, dict):
        return {s for k, v in value.items() for s in secrets(v, str(k))}
    if isinstance(value, list):
        return {s for v in value for s in secrets(v, key)}
    if (
        isinstance(value, str)
        and value
        and (redact.is_secret_name(key) or redact.url(value) != value)
    ):
        return {value}
    return set()


def seal(written: Written) -> Sealed:
    hidden = {s for p in written.parts for v in p.entries.values() for s in secrets(v)}
    forms = {f for s in hidden for f in (s, json.dumps(s, ensure_ascii=False)[1:-1]) if f}
    blocks = [SealedBlock(b.before, _seal_text(b.after, forms), b.created) for b in written.blocks]
    parts = [
        p._replace(entries={i: digest(v) for i, v in p.entries.items()}) for p in written.parts
    ]
    return Sealed(written.fmt, parts, blocks, written.owners, written.created)


def _seal_text(text: str, forms: set[str]) -> list[Segment] | None:
    if not forms:
        return [text]
    pattern = re.compile("|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True)))
    segments: list[Segment] = []
    at = 0
    for match in pattern.finditer(text):
        segments += [text[at : match.start()], _sealed(match.group(0))]
        at = match.end()
    segments.append(text[at:])
    kept = "".join(s for s in segments if isinstance(s, str))
    return None if any(f in kept for f in forms) else segments


def _sealed(text: str) -> SealedText:
    return SealedText(hashlib.sha256(text.encode()).hexdigest(), len(text))


def unseal(sealed: Sealed, text: str | None, where: str) -> Written:
    """`sealed` with its values taken from the file's `text`: an entry no longer there as
    written is left out (it is the user's now), a block no longer there is UNMATCHED."""
    if text is None:
        parts = [p._replace(entries={}) for p in sealed.parts]
        return Written(sealed.fmt, parts, [], sealed.owners, sealed.created)
    data = edit.module(sealed.fmt).load(text, where)
    parts = [p._replace(entries=_found(data, p)) for p in sealed.parts]
    blocks = [Block(b.before, _unseal_text(b.after, text), b.created) for b in sealed.blocks]
    return Written(sealed.fmt, parts, blocks, sealed.owners, sealed.created)


def _found(data: Any, part: Part) -> dict[str, Any]:
    container = edit.at(data, part.container)
    found: dict[str, Any] = {}
    for entry_id, wanted in part.entries.items():
        value = current(container, entry_id, wanted, part.listed)
        if value is not None:
            found[entry_id] = value
    return found


def current(container: Any, entry_id: str, wanted: str, listed: bool) -> Any:
    """The value in `container` that is the entry as written (digest `wanted`), or None."""
    if listed:
        items = container if isinstance(container, list) else []
        return next((v for v in items if digest(v) == wanted), None)
    if isinstance(container, dict) and entry_id in container:
        value = container[entry_id]
        return value if digest(value) == wanted else None
    return None


def _unseal_text(segments: list[Segment] | None, text: str) -> str:
    if segments is None:
        return UNMATCHED
    pattern = "".join(
        re.escape(s) if isinstance(s, str) else f"(.{{{s.length}}})" for s in segments
    )
    sealed = [s.sha256 for s in segments if isinstance(s, SealedText)]
    found = [
        m.group(0)
        for m in re.finditer(pattern, text, re.DOTALL)
        if [hashlib.sha256(g.encode()).hexdigest() for g in m.groups()] == sealed
    ]
    return found[0] if len(found) == 1 else UNMATCHED


# The name Claude Code's native plugins' settings entries are recorded under
# (`agents.claude_native`): written by a claude-code link's deployment, never an export target.
CLAUDE_NATIVE = "claude-code-plugins"


def key(target: str, scope: Scope, paths: Paths) -> str:
    return f"{target} {scope}" if scope == "user" else f"{target} {scope} {paths.project_dir}"


class Key(NamedTuple):
    """A record key read back: what wrote the entries, in which scope, for which project."""

    name: str  # an export target's name, or CLAUDE_NATIVE
    scope: str
    project: str  # "" in the user scope

    @property
    def target(self) -> str | None:
        """The export target that wrote these entries; None for Claude's native plugins."""
        return None if self.name == CLAUDE_NATIVE else self.name

    @property
    def agent(self) -> str:
        """The agent whose files hold the entries."""
        return "claude-code" if self.name == CLAUDE_NATIVE else self.name


def parse(text: str) -> Key:
    name, _, rest = text.partition(" ")
    scope, _, project = rest.partition(" ")
    return Key(name, scope, project)


Exports = dict[str, dict[str, Sealed]]  # export key → file → what plugman wrote there


def load(paths: Paths) -> Exports:
    data = read(paths)
    read_one = Sealed.from_json if data.get("format") == FORMAT else _from_format_1
    return {
        name: {file: read_one(w) for file, w in files.items()}
        for name, files in data.get("exports", {}).items()
    }


def _from_format_1(data: dict[str, Any]) -> Sealed:
    blocks = [
        Block(b["before"], b["after"], tuple(b["created"]) if b["created"] else None)
        for b in data["blocks"]
    ]
    parts = [Part(tuple(p["container"]), p["entries"], p["listed"]) for p in data["parts"]]
    return seal(Written(data["fmt"], parts, blocks, data["owners"], data["created"]))


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

"""One agent file as shared state: every record's share of it, taken out and written back
together, so no share's layout depends on another's.

An agent may keep one scope's entries in another scope's file (Codex's `hooks.state` keys for a
project's hooks live in the user's `~/.codex/config.toml`; Claude Code keeps a project's
settings under `projects.<path>` in `~/.claude.json`), and two links may write into one file.
Each record key (`agents.export_record.key`: target, scope, project) owns its own entries
there, recorded under that key. When any of them changes, `settle` takes every share out of the
file in one pass (exactly, block by block, in the reverse of the order they were written, or
entry by entry where the file was edited since), which leaves the file as it would be had
plugman never written to it (the user's and the agent's own edits included), then writes every
share that remains back in one canonical order (by key). So adding or removing one scope's
entries never depends on what another scope's did before, the container a share created is
known to every share (the file's own text is the reference, not one record's blocks), and the
last share's removal leaves the file as it would be with none.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from plugman.agents import export_record
from plugman.agents.export_record import Sealed, Written
from plugman.manifest import edit
from plugman.manifest.edit import Part


class Share(NamedTuple):
    """What one record key wants in the file now."""

    parts: list[Part]
    owners: dict[str, str]  # entry id → plugin id


class Settled(NamedTuple):
    after: str | None  # None: the file goes (plugman created it and it holds nothing else)
    shares: dict[str, Written]  # key → its share now (a key with nothing left is absent)
    priors: dict[str, Written]  # key → its share before, as found in the file
    differ: dict[str, list[str]]  # key → ids left out: the file has them with another value


def settle(
    file: str,
    before: str | None,
    fmt: str,
    recorded: dict[str, Sealed],
    wanted: dict[str, Share | None],
) -> Settled:
    """`file` (now `before`) with the shares `recorded` for it replaced: a key in `wanted`
    gets that share (None: nothing), every other recorded key keeps what it has there."""
    priors = {k: export_record.unseal(s, before, file) for k, s in recorded.items()}
    order = sorted(priors)
    text = before
    if before is not None and priors:
        blocks = [b for k in order for b in priors[k].blocks]
        parts = [p for k in order for p in priors[k].parts]
        text = edit.take_out(fmt, before, blocks, parts, file)
    created = _created(file, before, priors)
    shares = {k: Share(w.parts, w.owners) for k, w in priors.items()}
    for k, share in wanted.items():
        if share is None:
            shares.pop(k, None)
        else:
            shares[k] = share
    base = edit.module(fmt).BASE
    current = base if text is None else text
    written: dict[str, Written] = {}
    differ: dict[str, list[str]] = {}
    added = False
    for k in sorted(shares):
        share = shares[k]
        edited = edit.add(fmt, current, share.parts, file)
        current = edited.text
        added = added or bool(edited.blocks)
        differ[k] = edited.differ
        kept = _kept(share, edited)
        if kept:
            ids = {i for p in kept for i in p.entries}
            mine = {i: o for i, o in share.owners.items() if i in ids}
            written[k] = Written(fmt, kept, edited.blocks, mine, created)
    after: str | None = current
    if (created is not None and after == base) or (text is None and not added):
        after = None
    return Settled(after, written, priors, differ)


def _kept(share: Share, edited: edit.Edited) -> list[Part]:
    """The share's entries plugman owns after the edit: those it added, and a plugin's entry
    the file already had exactly as plugman writes it (adopted: a committed launcher entry in
    a teammate's clone); any other entry already there is not plugman's."""
    adopted = {i for i in edited.present if i in share.owners and i not in edited.differ}
    kept = [
        p._replace(
            entries={i: v for i, v in p.entries.items() if i not in edited.present or i in adopted}
        )
        for p in share.parts
    ]
    return [p for p in kept if p.entries]


def _created(file: str, before: str | None, priors: dict[str, Written]) -> str | None:
    """The highest folder (or the file) plugman created for `file`, known to every share: a
    recorded one, or what writing the file now creates."""
    if priors:
        return next((w.created for w in priors.values() if w.created), None)
    if before is not None:
        return None
    top = Path(file)
    while not top.parent.exists():
        top = top.parent
    return str(top)

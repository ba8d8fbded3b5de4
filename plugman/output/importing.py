"""What `plugman import claude` would do or did (plugman.plugins.importing.claude), and what
`--undo` took away."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plugman.output.common import display_path, envelope

if TYPE_CHECKING:
    from plugman.plugins.importing.claude import Imported
    from plugman.plugins.importing.retire import Retire

COMMAND = "import claude"
MARKET_WORDS = {"add": "add marketplace", "known": "already known: marketplace"}
PLUGIN_WORDS = {"install": "install", "installed": "already installed:"}


def imported(done: Imported, undo: list[str], as_json: bool) -> str:
    found = done.plan
    if as_json:
        return envelope(
            COMMAND,
            applied=done.applied,
            claude_dir=str(found.claude_dir),
            marketplaces=[
                {k: v for k, v in m._asdict().items() if k not in ("text", "origin")}
                for m in found.marketplaces
            ],
            plugins=[p._asdict() | {"options": _keys(p.options)} for p in found.plugins],
            notes=list(found.notes),
            claude_installs=[_retired_json(r) for r in found.retire],
            undo=undo if done.applied else [],
        )
    would = "" if done.applied else "would "
    lines = [f"Claude Code's plugins ({display_path(str(found.claude_dir))}):"]
    for m in found.marketplaces:
        if m.action == "skip":
            lines.append(f"  cannot import marketplace {m.name} ({m.source}): {m.reason}")
        else:
            verb = would + MARKET_WORDS[m.action] if m.action == "add" else MARKET_WORDS[m.action]
            helper = f", headers from `{m.helper}`" if m.helper else ""
            lines.append(f"  {verb} {m.name} ({m.source}{helper})")
    for p in found.plugins:
        state = "enabled" if p.enabled else "disabled"
        if p.action == "skip":
            lines.append(f"  cannot import {p.id} ({p.scope}): {p.reason}")
        elif p.action == "installed":
            lines.append(f"  {PLUGIN_WORDS[p.action]} {p.id} ({p.scope})")
        else:
            given = f", options {', '.join(_keys(p.options))}" if p.options else ""
            why = f": {p.reason}" if p.reason else ""
            lines.append(f"  {would}install {p.id} ({p.scope}, {state}{given}){why}")
    lines += [_retired(r, would) for r in found.retire]
    lines += [f"  note: {note}" for note in found.notes]
    if len(lines) == 1:
        lines.append("  nothing to import")
    if not done.applied:
        lines.append("nothing changed; run plugman import claude --apply to import")
    elif undo:
        lines.append("undo with: plugman import claude --undo (" + "; ".join(undo) + ")")
    return "\n".join(lines)


def import_undone(done: list[str], as_json: bool) -> str:
    if as_json:
        return envelope(COMMAND, undone=done)
    return "\n".join(done) or "nothing left to undo"


def _keys(pairs: tuple[str, ...]) -> list[str]:
    """The option names only: a value is never shown (plugman may hold it as sensitive)."""
    return [pair.partition("=")[0] for pair in pairs]


def _retired(item: Retire, would: str) -> str:
    """A line on one of Claude's own installs the import replaces, or keeps."""
    # lazy: plugins.claude_retire takes ~16 ms to import, only this path needs it
    from plugman.plugins.importing.retire import KEEP, claude_step

    if item.how == KEEP:
        why = f" ({item.reason})" if item.reason else ""
        return (
            f"  keep Claude Code's own install {item.id} ({item.scope}){why}: plugman does not "
            "deliver its copy to Claude Code"
        )
    return (
        f"  {would}retire Claude Code's own install {item.id} ({item.scope}), replaced by "
        f"plugman's copy: {claude_step(item)}"
    )


def _retired_json(item: Retire) -> dict[str, object]:
    # lazy: plugins.claude_retire takes ~16 ms to import, only this path needs it
    from plugman.plugins.importing.retire import KEEP, claude_step

    return {
        "id": item.id,
        "scope": item.scope,
        "action": "keep" if item.how == KEEP else "retire",
        "as": None if item.how == KEEP else claude_step(item),
        "file": str(item.settings),
        "reason": item.reason,
    }

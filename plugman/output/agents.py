"""`plugman agents add|remove|list` results."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from plugman.output.common import display_path, envelope
from plugman.output.warned import grouped, short

if TYPE_CHECKING:
    from plugman.agents.deploy import Deployed
    from plugman.agents.links import Agent
    from plugman.agents.warnings import Warned
    from plugman.extensions import Shadowed


def deployed(command: str, done: list[Deployed], as_json: bool) -> str:
    """What a link or unlink wrote, per agent and scope."""
    if as_json:
        rows = [
            {
                "agent": d.link.agent,
                "scope": d.link.scope,
                "via_gateway": d.link.via_gateway,
                "changed": [str(c.path) for c in d.outcome.changes],
                "entries": d.outcome.entries,
                "files": [str(f) for f in d.files],
                "notes": d.notes,
            }
            for d in done
        ]
        return envelope(command, agents=rows)
    lines = []
    for d in done:
        head = f"{d.link.agent} ({d.link.scope})"
        lines.append(
            f"unlinked {head}" if command == "agents remove" else f"linked {head}: {_ours(d)}"
        )
        lines += [f"  {_action(c.before, c.after)} {_shown(c.path)}" for c in d.outcome.changes]
    return "\n".join(lines)


def _shown(path: Path) -> str:
    """A changed file, relative to the working folder or as `~/…`."""
    shown = display_path(str(path))
    home = os.environ.get("HOME", "")
    if home not in ("", os.sep) and shown.startswith(home + os.sep):
        return "~" + shown[len(home) :]
    return shown


def _ours(d: Deployed) -> str:
    """What of plugman's the agent has in that scope now, in a user's words."""
    entries = sum(len(ids) for ids in d.outcome.entries.values())
    counted = [
        f"{n} {one if n == 1 else many}"
        for n, one, many in (
            (entries, "config entry", "config entries"),
            (len(d.files), "file", "files"),
        )
        if n
    ]
    return (
        f"plugman has {' and '.join(counted)} there"
        if counted
        else "nothing of plugman's there yet"
    )


def _action(before: str | None, after: str | None) -> str:
    if after is None:
        return "deleted"
    return "created" if before is None else "updated"


def agents_listed(
    found: list[Agent], standing: Warned, as_json: bool, shadowed: list[Shadowed] | None = None
) -> str:
    """Every agent: present here or not, and the scopes it is linked in; the extensions' targets
    not used because another target has their name (`shadowed`); then what the linked agents
    cannot take of what is deployed to them (the standing warnings), grouped."""
    lost = shadowed or []
    if as_json:
        rows = [
            {
                "name": a.name,
                "present": a.present,
                "scopes": list(a.scopes),
                "linked": {link.scope: {"via_gateway": link.via_gateway} for link in a.links},
            }
            for a in found
        ]
        said = [
            {
                "agent": n.agent or None,
                "scope": n.scope or None,
                "message": short(n.note, standing),
            }
            for n in standing.notices
        ]
        hidden = [
            {"name": s.name, "extension": s.extension, "by": s.by, "hint": s.hint} for s in lost
        ]
        return envelope("agents list", agents=rows, shadowed=hidden, warnings=said)
    width = max(len(a.name) for a in found)
    lines = [f"{'agent':{width}}  {'present':8} linked"]
    for a in found:
        linked = ", ".join(
            link.scope + (" (via gateway)" if link.via_gateway else "") for link in a.links
        )
        lines.append(f"{a.name:{width}}  {'yes' if a.present else 'no':8} {linked or '-'}")
    for s in lost:
        lines.append(f"{s.message} ({s.hint})")
    standing_lines = grouped(standing)
    if standing_lines:
        lines += ["", "what the linked agents cannot take (standing warnings):"]
        lines += [f"  {line}" for line in standing_lines]
    return "\n".join(lines)

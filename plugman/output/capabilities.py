"""What a plugin's new content can do that its installed content could not: `plugman diff`,
and the block `update` and `sync` print under each changed plugin
(plugman.plugins.supply_chain.capabilities).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from plugman.output.common import envelope
from plugman.output.plugins import changes as changes_text
from plugman.output.versions import change_json

if TYPE_CHECKING:
    from plugman.plugins.lifecycle.installed import PluginAction
    from plugman.plugins.lifecycle.updates import Updated
    from plugman.plugins.supply_chain.capabilities import Capabilities, CapabilityChange

KINDS = {
    "hook": "hook",
    "server": "MCP server",
    "executable": "executable",
    "setting": "setting",
    "context": "always-on text",
}


def capabilities_json(found: Capabilities) -> dict[str, Any]:
    """The JSON value of a diff: what was gained (added or changed) and lost."""

    def row(change: CapabilityChange) -> dict[str, Any]:
        before: Any = change.before
        after: Any = change.after
        if change.kind == "context":  # sizes in bytes
            before, after = int(before or 0), int(after or 0)
        return {"kind": change.kind, "name": change.name, "before": before, "after": after}

    return {
        "gained": [row(c) for c in found.gained],
        "lost": [row(c) for c in found.lost],
        "context_bytes": {"before": found.context_before, "after": found.context_after},
    }


def _gained(change: CapabilityChange) -> str:
    kind = KINDS[change.kind]
    if change.kind == "context":
        return f"+ {kind}: {change.before} -> {change.after} bytes"
    if change.kind in ("executable", "setting"):
        return f"+ {kind} {change.name}" + (" (changed)" if change.before else " (new)")
    was = f" (was: {change.before})" if change.before else " (new)"
    return f"+ {kind} {change.name}: {change.after}{was}"


def capability_lines(found: Capabilities, waits: bool) -> list[str]:
    """The short block under one plugin: gained first, then lost, then the approval (no line
    at all when its capabilities did not change)."""
    lines = [f"  {_gained(c)}" for c in found.gained]
    lines += [f"  - {KINDS[c.kind]} {c.name} (removed)" for c in found.lost]
    new = sorted(
        {f"{KINDS[c.kind]} {c.name}" for c in found.gained if c.kind in ("hook", "server")}
    )
    if waits and (new or any(c.kind in ("hook", "server") for c in found.lost)):
        name = found.plugin.partition("@")[0]
        what = f" (new or changed: {', '.join(new)})" if new else ""
        lines.append(
            f"  its hooks and MCP servers wait for approval{what}: plugman trust approve {name}"
        )
    return lines


WOULD: dict[PluginAction, str] = {
    "installed": "install",
    "uninstalled": "uninstall",
    "updated": "update",
    "enabled": "enable",
    "disabled": "disable",
    "would install": "install",
}


def updated(command: str, done: Updated, as_json: bool, dry_run: bool = False) -> str:
    """`update` and `sync`: each change, and under each changed plugin what it gains."""
    paired = _paired(done)
    if as_json:
        rows = []
        for change in done.changes:
            row = change_json(change)
            found = paired.get((change.id, change.scope))
            if found is not None:
                row["capabilities"] = capabilities_json(found)
                row["waits_for_approval"] = f"{change.id} ({change.scope})" in done.waiting
            rows.append(row)
        extra: dict[str, object] = {"dry_run": True} if dry_run else {}
        if done.failed:
            extra["failed"] = [f.as_json() for f in done.failed]
        return envelope(command, changes=rows, **extra)
    lines = []
    for change in done.changes:
        line = changes_text(command, [change], False)
        if dry_run:  # "updated x" -> "would update x"
            line = "would " + WOULD[change.action] + line.removeprefix(change.action)
        lines.append(line)
        found = paired.get((change.id, change.scope))
        if found is not None:
            lines += capability_lines(found, f"{change.id} ({change.scope})" in done.waiting)
    for failed in done.failed or []:
        lines += failed.lines(f"not {'synced' if command == 'sync' else 'updated'}")
    if not lines:
        return "nothing to do"
    if dry_run:
        lines.append("dry run: nothing was changed")
    return "\n".join(lines)


def _paired(done: Updated) -> dict[tuple[str, str], Capabilities]:
    """Each changed plugin's diff, by (id, scope); diffs come in the order of the changes that
    installed content (an uninstall has none)."""
    left = list(done.capabilities)
    found: dict[tuple[str, str], Capabilities] = {}
    for change in done.changes:
        at = next((i for i, c in enumerate(left) if c.plugin == change.id), None)
        if change.action != "uninstalled" and at is not None:
            found[(change.id, change.scope)] = left.pop(at)
    return found


def capability_diff(scope: str, found: Capabilities, start: str, end: str, as_json: bool) -> str:
    """`plugman diff PLUGIN [FROM] [TO]`: what `end`'s content can do that `start`'s cannot."""
    if as_json:
        doc = {"plugin": found.plugin, "scope": scope, "from": start, "to": end}
        return envelope("diff", **doc, **capabilities_json(found))
    head = f"{found.plugin} ({scope}): {start} -> {end}"
    if found.empty and found.context_before == found.context_after:
        return f"{head}\n  no change in capability"
    return "\n".join([head, *capability_lines(found, False)])

"""Approvals of the MCP servers and hooks a project supplies, kept outside the repository.

What waits for approval: the project's own entries (`.mcp.json`, `[mcp_servers]` and `[hooks]`
in its plugman.toml) and the servers and hooks of plugins that `sync` installed from the
project's declaration (plugman.config.scopes). An approval is keyed to the entry's content hash
(plugman.config.merge.approval_key), so a changed entry or plugin is pending again; nothing inside a
project can approve itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal, NamedTuple

from plugman.config import scopes
from plugman.config.merge import Layers, Origin, approval_key
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.paths import Paths
from plugman.core.session import Finish, session
from plugman.core.state import read_state, timestamp

FORMAT = 1
LIST = "see: plugman trust list"


class Entry(NamedTuple):
    """One server or hook that needs approval, and what an approval of it covers."""

    kind: str  # server | hook
    name: str  # a server's name; a hook's EVENT:MATCHER
    origin: Origin
    covers: dict[str, Any]  # the server entry, or a hook's event, matcher and handler
    hash: str


State = Literal["approved", "pending"]


class Approval(NamedTuple):
    """An entry that needs approval, and its state (after a change, and before it)."""

    entry: Entry
    state: State
    previous: State | None = None  # set by approve and revoke

    @property
    def label(self) -> str:
        plugin = self.entry.origin.plugin
        return f"{self.entry.name} ({plugin})" if plugin else self.entry.name


def trust_path(paths: Paths) -> Path:
    return paths.state_dir / "trust.json"


def approvals(paths: Paths) -> dict[str, dict[str, Any]]:
    data = read_state(trust_path(paths), "move it away; approve the project's entries again")
    found: dict[str, dict[str, Any]] = (data or {}).get("approvals", {})
    return found


def approved(paths: Paths) -> frozenset[str]:
    return frozenset(approvals(paths))


def entries(layers: Layers) -> list[Entry]:
    """Every server and hook here that needs approval, project entries first."""
    found = []
    for server in layers.servers:
        key = approval_key(server.name, server.entry, server.origin, layers.unconsented)
        if key is not None:
            found.append(Entry("server", server.name, server.origin, server.entry, key))
    for hook in layers.hooks:
        name = f"{hook.event}:{hook.matcher or '*'}"
        key = approval_key(name, hook.handler, hook.origin, layers.unconsented)
        if key is not None:
            covers = {"event": hook.event, "matcher": hook.matcher, "handler": hook.handler}
            found.append(Entry("hook", name, hook.origin, covers, key))
    unique = {entry.hash: entry for entry in found}  # the same hook in two files: one approval
    return sorted(unique.values(), key=lambda e: (e.origin.plugin or "", e.kind, e.name, e.hash))


def listing(paths: Paths) -> list[Approval]:
    """Every entry that needs approval, approved or pending, with what approving it covers."""
    known = approvals(paths)
    return [
        Approval(entry, "approved" if entry.hash in known else "pending")
        for entry in entries(scopes.load(paths).layers)
    ]


def approve(
    paths: Paths, names: list[str], everything: bool = False, finish: Finish | None = None
) -> list[Approval]:
    """Approve entries by name (a server or hook name, or a plugin: all it brings), or every
    pending one. The rows changed or named, as they are now."""
    return _change(paths, names, everything, True, finish)


def revoke(
    paths: Paths, names: list[str], everything: bool = False, finish: Finish | None = None
) -> list[Approval]:
    """Withdraw approvals by name, or every approval of an entry here."""
    return _change(paths, names, everything, False, finish)


def _change(
    paths: Paths, names: list[str], everything: bool, approving: bool, finish: Finish | None
) -> list[Approval]:
    rows = _select(listing(paths), names, everything, approving)
    with session(paths) as work:
        known = approvals(paths)
        for row in rows:
            if approving and row.entry.hash not in known:
                known[row.entry.hash] = _stored(paths, row.entry)
            elif not approving:
                known.pop(row.entry.hash, None)
        body = {"format": FORMAT, "approvals": dict(sorted(known.items()))}
        data = (json.dumps(body, indent=2) + "\n").encode() if known else None
        work.tx.write(trust_path(paths), data)
        if finish is not None:
            finish(work)
    state: State = "approved" if approving else "pending"
    return [row._replace(state=state, previous=row.state) for row in rows]


def _select(
    rows: list[Approval], names: list[str], everything: bool, approving: bool
) -> list[Approval]:
    """The rows NAMES pick (by entry name, plugin id or plugin name), or with `everything` each
    row that would change."""
    verb = "approve" if approving else "revoke"
    if everything and names:
        raise UsageError(f"give names or --all, not both: trust {verb} {' '.join(names)} --all")
    if everything:
        return [r for r in rows if (r.state == "pending") == approving]
    if not names:
        raise _nothing_named(rows, verb, "pending" if approving else "approved")
    picked = [r for r in rows if _named(r, names)]
    unknown = sorted(n for n in names if not any(_named(r, [n]) for r in rows))
    if unknown:
        raise PlugmanError(
            f"nothing here needs approval under the name {', '.join(unknown)}",
            hint="run: plugman trust list (names are server names, EVENT:MATCHER for hooks, or "
            "a plugin, for all it brings)",
        )
    return picked


def _named(row: Approval, names: list[str]) -> bool:
    plugin = row.entry.origin.plugin or ""
    return row.entry.name in names or (
        bool(plugin) and (plugin in names or _short(plugin) in names)
    )


def _short(plugin_id: str) -> str:
    return plugin_id.partition("@")[0]


def _nothing_named(rows: list[Approval], verb: str, state: State) -> UsageError:
    """`trust approve` / `revoke` without NAME or --all: a usage error that lists the
    candidates, so nothing is approved by accident and nothing pending is hidden."""
    waiting = sorted({r.label for r in rows if r.state == state})
    if not waiting:
        return UsageError(f"name what to {verb}: nothing here is {state}", hint=LIST)
    count = f"{len(waiting)} {'is' if len(waiting) == 1 else 'are'} {state}"
    return UsageError(
        f"name what to {verb}: {count}: {', '.join(waiting)}",
        hint=f"review them with plugman trust list, then: plugman trust {verb} NAME... (or --all)",
    )


def _stored(paths: Paths, entry: Entry) -> dict[str, Any]:
    """What trust.json keeps of an approval: where it came from, never the entry's values."""
    found = {
        "kind": entry.kind,
        "name": entry.name,
        "file": entry.origin.file,
        "project": str(paths.project_dir),
        "approved_at": timestamp(),
    }
    if entry.origin.plugin:
        found["plugin"] = entry.origin.plugin
    return found

"""`plugman trust approve|revoke`: approve the servers and hooks a project supplies, or
withdraw approvals (what needs approval and what an approval covers: plugman.config.trust),
and bring the linked agents up to date in the same transaction."""

from __future__ import annotations

import json
from collections.abc import Mapping

from plugman.agents import deploy
from plugman.config import trust
from plugman.config.trust import Approval, Entry, State
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.paths import Paths
from plugman.core.session import session
from plugman.core.state import timestamp


def approve(
    paths: Paths, names: list[str], everything: bool, env: Mapping[str, str]
) -> list[Approval]:
    """Approve entries by name (a server or hook name, or a plugin: all it brings), or every
    pending one. The rows changed or named, as they are now."""
    return _change(paths, names, everything, True, env)


def revoke(
    paths: Paths, names: list[str], everything: bool, env: Mapping[str, str]
) -> list[Approval]:
    """Withdraw approvals by name, or every approval of an entry here."""
    return _change(paths, names, everything, False, env)


def _change(
    paths: Paths, names: list[str], everything: bool, approving: bool, env: Mapping[str, str]
) -> list[Approval]:
    rows = _select(trust.listing(paths), names, everything, approving)
    with session(paths) as work:
        known = trust.approvals(paths)
        for row in rows:
            if approving and row.entry.hash not in known:
                known[row.entry.hash] = _stored(paths, row.entry)
            elif not approving:
                known.pop(row.entry.hash, None)
        kept = {key: approval.fields for key, approval in sorted(known.items())}
        body = {"format": trust.FORMAT, "approvals": kept}
        data = (json.dumps(body, indent=2) + "\n").encode() if known else None
        work.tx.write(trust.trust_path(paths), data)
        deploy.refresh(work, env)  # the linked agents follow, in the same transaction
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
        return UsageError(f"name what to {verb}: nothing here is {state}", hint=trust.LIST)
    count = f"{len(waiting)} {'is' if len(waiting) == 1 else 'are'} {state}"
    return UsageError(
        f"name what to {verb}: {count}: {', '.join(waiting)}",
        hint=f"review them with plugman trust list, then: plugman trust {verb} NAME... (or --all)",
    )


def _stored(paths: Paths, entry: Entry) -> trust.Stored:
    """What trust.json keeps of an approval: where it came from, never the entry's values."""
    found: dict[str, object] = {
        "kind": entry.kind,
        "name": entry.name,
        "file": entry.origin.file,
        "project": str(paths.project_dir),
        "project_key": entry.project,
        "files": dict(entry.runs),
        "approved_at": timestamp(),
    }
    if entry.origin.plugin:
        found["plugin"] = entry.origin.plugin
    plugin, project = entry.origin.plugin, str(paths.project_dir)
    return trust.Stored(
        entry.kind, entry.name, plugin, project, entry.project, dict(entry.runs), found
    )

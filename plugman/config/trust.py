"""Approvals of the MCP servers and hooks a project supplies, kept outside the repository.

What waits for approval: the project's own entries (`.mcp.json`, `[mcp_servers]` and `[hooks]`
in its plugman.toml) and the servers and hooks of plugins that `sync` installed from the
project's declaration (plugman.config.scopes), and those of a `.plugman/local.toml` that is not
the user's (plugman.config.origins). An approval is keyed to the project folder, the entry and
the digest of each file its command runs (plugman.config.merge.approval_key,
plugman.config.binding), so a changed entry, plugin or script is pending again and an approval
in one project means nothing in another; nothing inside a project can approve itself.

Approvals an older plugman stored (format 1: keyed to the entry alone) no longer match any
entry: those entries are pending again, and `trust list` says how many such approvals of this
project there are (`stale`).

This module reads approvals; `trust approve|revoke` change them (plugman.commands.trust).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, NamedTuple

from plugman.config import scopes
from plugman.config.binding import project_key
from plugman.config.merge import Layers, Origin, Runs, approval_key
from plugman.core.errors import PlugmanError
from plugman.core.jsonvalue import JSONObject
from plugman.core.paths import Paths
from plugman.core.state import read_state

FORMAT = 2  # 1: keyed to the entry alone (no project, no files): never matched now
LIST = "see: plugman trust list"


class Entry(NamedTuple):
    """One server or hook that needs approval, and what an approval of it covers."""

    kind: str  # server | hook
    name: str  # a server's name; a hook's EVENT:MATCHER
    origin: Origin
    covers: dict[str, Any]  # the server entry, or a hook's event, matcher and handler
    hash: str
    runs: Runs = ()  # the files its command runs, and their digests
    project: str = ""  # the project folder the approval is bound to


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


class Stored(NamedTuple):
    """One approval as trust.json keeps it (plugman.commands.trust writes it): what it approved
    and where, read once and checked; `fields`, the approval as written, given back as it was."""

    kind: str
    name: str
    plugin: str | None
    project: str | None  # the project folder
    project_key: str | None  # what the approval is bound to (config.binding.project_key)
    files: dict[str, str] | None  # the files its command runs -> digest; None: an older plugman's
    fields: JSONObject

    @classmethod
    def parse(cls, data: object, where: str) -> Stored:
        if not isinstance(data, dict):
            raise _bad(where, "an approval is not a JSON object")
        kind, name, files = data.get("kind"), data.get("name"), data.get("files")
        words = [data.get(key) for key in ("plugin", "project", "project_key")]
        if not (isinstance(kind, str) and isinstance(name, str)):
            raise _bad(where, "an approval lacks its kind or name")
        if not all(word is None or isinstance(word, str) for word in words):
            raise _bad(where, "an approval's plugin or project is not a string")
        if files is not None and not (
            isinstance(files, dict) and all(isinstance(v, str) for v in files.values())
        ):
            raise _bad(where, "an approval's 'files' has the wrong type")
        plugin, project, key = (word if isinstance(word, str) else None for word in words)
        return cls(kind, name, plugin, project, key, files, data)


HINT = "move it away; approve the project's entries again"


def _bad(where: str, message: str) -> PlugmanError:
    return PlugmanError(f"not a plugman trust file: {message}", hint=HINT, where=where)


def approvals(paths: Paths) -> dict[str, Stored]:
    """The stored approvals, by the key they approve (`merge.approval_key`)."""
    path = trust_path(paths)
    found = (read_state(path, HINT, FORMAT) or {}).get("approvals", {})
    if not isinstance(found, dict):
        raise _bad(str(path), "'approvals' is not a JSON object")
    return {str(key): Stored.parse(value, str(path)) for key, value in found.items()}


def approved(paths: Paths) -> frozenset[str]:
    return frozenset(approvals(paths))


def entries(layers: Layers) -> list[Entry]:
    """Every server and hook here that needs approval, project entries first."""
    found = []
    here, waits = layers.project, layers.unconsented
    for server in layers.servers:
        key = approval_key(server.name, server.entry, server.origin, waits, here, server.runs)
        if key is not None:
            entry = Entry("server", server.name, server.origin, server.entry, key)
            found.append(entry._replace(runs=server.runs, project=here))
    for hook in layers.hooks:
        name = f"{hook.event}:{hook.matcher or '*'}"
        key = approval_key(name, hook.handler, hook.origin, waits, here, hook.runs)
        if key is not None:
            covers = {"event": hook.event, "matcher": hook.matcher, "handler": hook.handler}
            found.append(Entry("hook", name, hook.origin, covers, key, hook.runs, here))
    unique = {entry.hash: entry for entry in found}  # the same hook in two files: one approval
    return sorted(unique.values(), key=lambda e: (e.origin.plugin or "", e.kind, e.name, e.hash))


def listing(paths: Paths) -> list[Approval]:
    """Every entry that needs approval, approved or pending, with what approving it covers."""
    known = approvals(paths)
    return [
        Approval(entry, "approved" if entry.hash in known else "pending")
        for entry in entries(scopes.load(paths).layers)
    ]


def stale(paths: Paths) -> int:
    """How many approvals of this project an older plugman stored (keyed to the entry alone):
    they approve nothing now, and their entries are pending again."""
    here = {str(paths.project_dir), project_key(paths.project_dir)}
    return sum(1 for a in approvals(paths).values() if a.files is None and a.project in here)


def why_pending(
    known: dict[str, Stored], project: str, kind: str, name: str, origin: Origin, runs: Runs
) -> str:
    """Why an entry is pending, in words: never approved, approved in another project only, or
    approved here before the entry or a file it runs changed (the files named)."""
    same = [a for a in known.values() if (a.kind, a.name, a.plugin) == (kind, name, origin.plugin)]
    if not same:
        return "never approved"
    mine = [a for a in same if project == a.project_key]
    if not mine:
        if any(a.files is None for a in same):
            return (
                "approved by an older plugman, before an approval covered the project and "
                "the files an entry runs"
            )
        return "approved in another project only (an approval holds in its own project)"
    now = dict(runs)
    before = [a.files for a in mine if a.files is not None]
    changed = sorted({f for was in before for f in {*was, *now} if was.get(f) != now.get(f)})
    if changed:
        return "approved before these files it runs changed: " + ", ".join(changed)
    return "approved before the entry changed"

"""Trust, `plugman mcp add|remove|vars` and connectors results."""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING, Any, assert_never

from plugman.config import redact
from plugman.output.common import display_path, envelope

if TYPE_CHECKING:
    from plugman.commands.servers import ServerChange
    from plugman.config.trust import Approval
    from plugman.manifest.diagnostics import Diagnostic


def approval(row: Approval) -> dict[str, Any]:
    """One entry of `trust list|approve|revoke` as JSON (secret values masked)."""
    entry = row.entry
    if entry.kind == "server":
        covered = redact.entry(entry.covers)
    else:
        covered = {**entry.covers, "handler": redact.entry(entry.covers["handler"])}
    found = {
        "kind": entry.kind,
        "name": entry.name,
        "plugin": entry.origin.plugin,
        "file": entry.origin.file,
        "state": row.state,
        "covers": covered,
        "files": dict(entry.runs),  # the files its command runs, and their digests
        "project": entry.project,
        "hash": entry.hash,
    }
    return found if row.previous is None else {**found, "previous": row.previous}


STALE = (
    "{count} approval(s) of this project from an older plugman (keyed to the entry alone) no "
    "longer count: approvals now cover the project and the files each entry runs; review the "
    "pending entries and approve them again"
)


def trusted(rows: list[Approval], as_json: bool, stale: int = 0) -> str:
    """`plugman trust list`: each entry, its state and what approving it covers (the project,
    the entry, the files it runs and their digests)."""
    if as_json:
        return envelope("trust list", entries=[approval(row) for row in rows], stale=stale)
    notice = [STALE.format(count=stale)] if stale else []
    if not rows:
        return "\n".join(
            [
                *notice,
                "nothing here needs approval (no project servers or hooks, no synced plugins)",
            ]
        )
    lines = list(notice)
    for row in rows:
        lines.append(f"{row.state:9} {row.entry.kind:6} {row.entry.name}  ({_source(row)})")
        lines += [f"{'':17}{line}" for line in covers(row)]
    if any(row.state == "pending" for row in rows):
        lines.append("approve after review: plugman trust approve NAME... (or --all)")
    return "\n".join(lines)


def trust_changed(rows: list[Approval], verb: str, as_json: bool) -> str:
    """What `trust approve` / `trust revoke` did, with what each approval covers."""
    if as_json:
        return envelope(f"trust {verb}", entries=[approval(row) for row in rows])
    if not rows:
        return f"nothing to {verb}"
    done = "approved" if verb == "approve" else "revoked"
    lines = []
    for row in rows:
        what = done if row.previous != row.state else f"already {row.state}:"
        lines.append(f"{what} {row.entry.kind} {row.entry.name}  ({_source(row)})")
        lines += [f"    {line}" for line in covers(row)]
    return "\n".join(lines)


def _source(row: Approval) -> str:
    origin = row.entry.origin
    return f"plugin {origin.plugin}" if origin.plugin else display_path(origin.file)


def covers(row: Approval) -> list[str]:
    """What an approval covers, in words: a server's command and args or URL (and its env and
    headers, secrets masked), what a hook runs (its name says its event and matcher)."""
    shown = approval(row)["covers"]
    files = [f"file: {name}  {digest}" for name, digest in row.entry.runs]
    return [*_runs(shown["handler"] if row.entry.kind == "hook" else shown), *files]


def _runs(entry: dict[str, Any]) -> list[str]:
    if isinstance(entry.get("url"), str):
        lines = [f"{entry.get('type', 'http')} {entry['url']}"]
    elif isinstance(entry.get("command"), str):
        args = [str(a) for a in entry["args"]] if isinstance(entry.get("args"), list) else []
        lines = [f"runs: {shlex.join([entry['command'], *args]) if args else entry['command']}"]
    elif isinstance(entry.get("prompt"), str):
        lines = [f"prompt: {entry['prompt']}"]
    else:
        lines = [json.dumps(entry, sort_keys=True)]
    for field in ("env", "headers"):
        if isinstance(entry.get(field), dict) and entry[field]:
            pairs = " ".join(f"{k}={v}" for k, v in entry[field].items())
            lines.append(f"{field}: {pairs}")
    return lines


def mcp_changed(command: str, change: ServerChange, as_json: bool) -> str:
    """What `mcp add`, `add-json` or `remove` did (secret values masked)."""
    entry = redact.entry(change.entry)
    if as_json:
        return envelope(
            command,
            action=change.action,
            name=change.name,
            scope=change.scope,
            file=change.file,
            entry=entry,
            warnings=change.warnings,
        )
    kind = entry.get("type", "stdio")
    match change.action:
        case "added":
            where = "to"
        case "removed":
            where = "from"
        case _:
            assert_never(change.action)
    return (
        f"{change.action.capitalize()} {kind} MCP server {change.name} {where} the "
        f"{change.scope} scope ({display_path(change.file)})"
    )


def mcp_imported(change: Any, found: Any, as_json: bool) -> str:
    """What `mcp add --from` did: the entry, which package or remote, what must be set."""
    if as_json:
        data = json.loads(mcp_changed("mcp add", change, True))
        data |= {"from": found.chosen, "needs": found.needs}
        data["warnings"] = [*found.notes, *change.warnings]
        return json.dumps(data, indent=2)
    return f"{mcp_changed('mcp add', change, False)}\n  from {found.chosen}"


def mcp_import_warnings(change: Any, found: Any, kept: list[str]) -> str:
    """The notes of `mcp add --from`, for stderr ('' when there are none): what must still be
    set, then the importer's and the config's own notes."""
    missing = [name for name in found.needs if name not in kept]
    notes = [*found.notes, *change.warnings]
    if missing:
        notes.insert(
            0,
            f"{change.name} needs {', '.join(missing)}: set them in the environment, or keep "
            "them with `plugman mcp vars set NAME` (the entry holds references, never values)",
        )
    return "\n".join(f"warning: {note}" for note in notes)


def vars_listed(names: list[str], in_env: list[str], as_json: bool) -> str:
    """`mcp vars list`: the variables with a kept value (names only)."""
    if as_json:
        rows = [{"name": n, "environment_overrides": n in in_env} for n in names]
        return envelope("mcp vars list", variables=rows)
    if not names:
        return "no values kept (plugman mcp vars set NAME keeps one)"
    return "\n".join(f"{n}  (the environment's value wins)" if n in in_env else n for n in names)


def var_changed(command: str, name: str, changed: bool, as_json: bool) -> str:
    """`mcp vars set|unset NAME`: what changed (never the value)."""
    if as_json:
        return envelope(f"mcp vars {command}", name=name, changed=changed)
    if command == "set":
        return f"kept a value for ${{{name}}}"
    return f"forgot the value of ${{{name}}}" if changed else f"no value was kept for ${{{name}}}"


def connectors_synced(cache: dict[str, Any]) -> str:
    names = [c["name"] for c in cache["connectors"]]
    count = f"{len(names)} connector{'s' * (len(names) != 1)}"
    return f"synced {count} from {cache['source']}" + (": " + ", ".join(names) if names else "")


def diagnostic_dict(d: Diagnostic) -> dict[str, Any]:
    return {**d._asdict(), "file": display_path(d.file)}


def problems(diagnostics: list[Diagnostic]) -> str:
    """Problems in the files a command read, for stderr: `error: FILE:LINE:COL: message`, and
    under a file's errors what they leave out."""
    lines: list[str] = []
    for d in diagnostics:
        if d.code == "left-out" and lines:
            lines.append(f"  {d.message}")
            continue
        where = display_path(d.file) + (f":{d.line}:{d.column or 1}" if d.line else "")
        at = f" {d.path}:" if d.path else ""
        lines.append(f"{d.severity}: {where}:{at} {d.message}")
        if d.hint:
            lines.append(f"  hint: {d.hint}")
    return "\n".join(lines)

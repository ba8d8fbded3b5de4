"""Trust, `plugman mcp add|remove` and connectors results."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from plugman.output.common import display_path, envelope

if TYPE_CHECKING:
    from plugman.manifest.diagnostics import Diagnostic


def trusted(rows: list[dict[str, Any]]) -> str:
    """`plugman trust list`: each entry, its state and what approving it covers."""
    if not rows:
        return "nothing here needs approval (no project servers or hooks, no synced plugins)"
    lines = []
    for row in rows:
        lines.append(f"{row['state']:9} {row['kind']:6} {row['name']}  ({_source(row)})")
        lines += [f"{'':17}{line}" for line in covers(row)]
    if any(row["state"] == "pending" for row in rows):
        lines.append("approve after review: plugman trust approve NAME... (or --all)")
    return "\n".join(lines)


def trust_changed(rows: list[dict[str, Any]], verb: str) -> str:
    """What `trust approve` / `trust revoke` did, with what each approval covers."""
    if not rows:
        return f"nothing to {verb}"
    done = "approved" if verb == "approve" else "revoked"
    lines = []
    for row in rows:
        changed = row["previous"] != row["state"]
        what = done if changed else f"already {row['state']}:"
        lines.append(f"{what} {row['kind']} {row['name']}  ({_source(row)})")
        lines += [f"    {line}" for line in covers(row)]
    return "\n".join(lines)


def _source(row: dict[str, Any]) -> str:
    return f"plugin {row['plugin']}" if row["plugin"] else display_path(row["file"])


def covers(row: dict[str, Any]) -> list[str]:
    """What an approval covers, in words: a server's command and args or URL (and its env and
    headers, secrets already masked), what a hook runs (its name says its event and matcher)."""
    return _runs(row["covers"]["handler"] if row["kind"] == "hook" else row["covers"])


def _runs(entry: dict[str, Any]) -> list[str]:
    import shlex

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


def mcp_changed(command: str, change: Any, as_json: bool) -> str:
    """What `mcp add`, `add-json` or `remove` did (secret values masked)."""
    from plugman.config import redact

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
    where = "to" if change.action == "added" else "from"
    return (
        f"{change.action.capitalize()} {kind} MCP server {change.name} {where} the "
        f"{change.scope} scope ({display_path(change.file)})"
    )


def connectors_synced(cache: dict[str, Any]) -> str:
    names = [c["name"] for c in cache["connectors"]]
    count = f"{len(names)} connector{'s' * (len(names) != 1)}"
    return f"synced {count} from {cache['source']}" + (": " + ", ".join(names) if names else "")


def diagnostic_dict(d: Diagnostic) -> dict[str, Any]:
    return {**d._asdict(), "file": display_path(d.file)}


def problems(diagnostics: list[Diagnostic]) -> str:
    """Problems in the files a command read, for stderr: `error: FILE:LINE:COL: message`."""
    lines = []
    for d in diagnostics:
        where = display_path(d.file) + (f":{d.line}:{d.column or 1}" if d.line else "")
        at = f" {d.path}:" if d.path else ""
        lines.append(f"{d.severity}: {where}:{at} {d.message}")
        if d.hint:
            lines.append(f"  hint: {d.hint}")
    return "\n".join(lines)

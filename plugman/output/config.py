"""The resolved config, explain, trust and `plugman mcp` results."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from plugman.output import display_path, envelope

if TYPE_CHECKING:
    from plugman.diagnostics import Diagnostic


def envelope_doc(document: dict[str, Any]) -> str:
    """A document that carries its own `format` (the resolved config)."""
    return json.dumps(document, indent=2)


def resolved(document: dict[str, Any], explain: bool) -> str:
    lines = [f"MCP servers ({len(document['mcpServers'])}):"]
    for name, server in document["mcpServers"].items():
        where = server["origin"]
        target = server.get("url") or " ".join(
            [str(server.get("command")), *server.get("args", [])]
        )
        lines.append(f"  {name}  [{where['scope']}]  {target}")
        if explain:
            lines.append(f"      from {display_path(where['file'])}")
    events = document["hooks"]
    lines.append(f"hooks ({sum(len(groups) for groups in events.values())}):")
    for event, groups in events.items():
        scopes = ", ".join(sorted({g["origin"]["scope"] for g in groups}))
        lines.append(f"  {event}: {len(groups)} ({scopes})")
    lines.append(f"skills ({len(document['skills'])}): " + ", ".join(document["skills"]))
    notes = document["diagnostics"]
    if explain:
        lines.append(f"notes ({len(notes)}):")
        lines += [f"  {n['code']}: {n['message']}" for n in notes]
    elif notes:
        count = "1 entry" if len(notes) == 1 else f"{len(notes)} entries"
        lines.append(f"{count} dropped, shadowed or invalid; see --explain")
    return "\n".join(lines)


def explained(found: dict[str, Any]) -> str:
    lines = [f"{found['name']}:"]
    winner = found["winner"]
    if winner:
        lines.append(
            f"  wins: {winner['origin']['scope']} ({display_path(winner['origin']['file'])})"
        )
    lines += [
        f"  shadowed: {s['origin']['scope']} ({display_path(s['origin']['file'])})"
        for s in found["shadowed"]
    ]
    lines += [
        f"  dropped: {d['origin']['scope']} ({display_path(d['origin']['file'])}): "
        f"{d['reason']} — {d['detail']}"
        for d in found["dropped"]
    ]
    if len(lines) == 1:
        lines.append("  no scope defines it")
    return "\n".join(lines)


def trusted(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "the project supplies no MCP servers or hooks"
    return "\n".join(
        f"{r['state']:9} {r['kind']:7} {r['name']}  ({display_path(r['file'])})" for r in rows
    )


def mcp_changed(command: str, change: Any, as_json: bool) -> str:
    """What `mcp add`, `add-json` or `remove` did (secret values masked)."""
    from plugman import redact

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


def mcp_listed(rows: list[dict[str, Any]], broken: bool = False) -> str:
    if not rows:
        return (
            "no MCP servers found (some files could not be read)"
            if broken
            else ("no MCP servers configured")
        )
    keys = ("name", "scope", "status")
    widths = {key: max(len(str(row[key])) for row in rows) for key in keys}
    lines = []
    for row in rows:
        cells = "  ".join(f"{row[key]!s:{widths[key]}}" for key in keys)
        note = f"  ({row['detail']})" if row["detail"] else ""
        lines.append(f"{cells}  {row['target']}{note}")
    return "\n".join(lines)


def mcp_got(rows: list[dict[str, Any]]) -> str:
    lines = [f"{rows[0]['name']}:"]
    for row in rows:
        note = f" — {row['detail']}" if row["detail"] else ""
        lines.append(f"  {row['scope']} ({display_path(row['file'])}): {row['status']}{note}")
        lines += [f"    {line}" for line in json.dumps(row["entry"], indent=2).splitlines()]
    return "\n".join(lines)


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

"""Rendering results for people (text) and machines (JSON, SARIF, GitHub annotations).

The renderers return strings; `emit` is the one place that writes to the terminal.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from plugman import __version__

if TYPE_CHECKING:
    from plugman.diagnostics import Diagnostic
    from plugman.validate import Validation

FORMAT_VERSION = 1
FORMATS = ("text", "json", "sarif", "github")


def emit(text: str, *, err: bool = False) -> None:
    stream = sys.stderr if err else sys.stdout
    stream.write(text if text.endswith("\n") or not text else text + "\n")


def progress_listener() -> Callable[[str], None] | None:
    """Show progress messages on a terminal (stderr), and nowhere else."""
    if not sys.stderr.isatty():
        return None
    from rich.console import Console

    console = Console(stderr=True)
    return lambda message: console.print(f"[dim]… {message}[/dim]", highlight=False)


def envelope(command: str, **body: Any) -> str:
    """The versioned JSON document every `--json` output uses."""
    return json.dumps({"format": FORMAT_VERSION, "command": command, **body}, indent=2)


def display_path(file: str) -> str:
    """A path relative to the working directory when it is below it."""
    try:
        rel = os.path.relpath(file)
    except ValueError:
        return file
    return file if rel.startswith("..") else rel


def validation(result: Validation, fmt: str) -> str:
    return {"text": _text, "json": _json, "sarif": _sarif, "github": _github}[fmt](result)


def _where(d: Diagnostic) -> str:
    location = display_path(d.file)
    if d.line is not None:
        location += f":{d.line}:{d.column or 1}"
    return location


def _text(result: Validation) -> str:
    lines = []
    for d in result.diagnostics:
        at = f" {d.path}:" if d.path else ""
        lines.append(f"{_where(d)}: {d.severity} [{d.code}]{at} {d.message}")
        if d.hint:
            lines.append(f"    hint: {d.hint}")
    files = len(result.files)
    summary = f"{files} file{'s' * (files != 1)} checked: "
    summary += f"{result.errors} error{'s' * (result.errors != 1)}, "
    summary += f"{result.warnings} warning{'s' * (result.warnings != 1)}"
    lines.append(summary)
    return "\n".join(lines)


def _as_dict(d: Diagnostic) -> dict[str, Any]:
    return {**d._asdict(), "file": display_path(d.file)}


def _json(result: Validation) -> str:
    return envelope(
        "validate",
        ok=result.errors == 0,
        summary={"files": len(result.files), "errors": result.errors, "warnings": result.warnings},
        files=[display_path(f) for f in result.files],
        diagnostics=[_as_dict(d) for d in result.diagnostics],
    )


def _sarif(result: Validation) -> str:
    rules = sorted({d.code for d in result.diagnostics})
    results = []
    for d in result.diagnostics:
        region = {"startLine": d.line, "startColumn": d.column or 1} if d.line else {}
        text = f"{d.path}: {d.message}" if d.path else d.message
        location: dict[str, Any] = {"artifactLocation": {"uri": display_path(d.file)}}
        if region:
            location["region"] = region
        results.append(
            {
                "ruleId": d.code,
                "level": d.severity,
                "message": {"text": text + (f" ({d.hint})" if d.hint else "")},
                "locations": [{"physicalLocation": location}],
            }
        )
    driver = {
        "name": "plugman",
        "version": __version__,
        "informationUri": "https://plugman.dev",
        "rules": [{"id": rule} for rule in rules],
    }
    return json.dumps(
        {
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [{"tool": {"driver": driver}, "results": results}],
        },
        indent=2,
    )


def _escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def _github(result: Validation) -> str:
    lines = []
    for d in result.diagnostics:
        props = [f"file={_escape(display_path(d.file), prop=True)}"]
        if d.line:
            props += [f"line={d.line}", f"col={d.column or 1}"]
        props.append(f"title={_escape('plugman ' + d.code, prop=True)}")
        text = f"{d.path}: {d.message}" if d.path else d.message
        if d.hint:
            text += f" (hint: {d.hint})"
        lines.append(f"::{d.severity} {','.join(props)}::{_escape(text)}")
    lines.append(
        f"plugman: {result.errors} error(s), {result.warnings} warning(s) in "
        f"{len(result.files)} file(s)"
    )
    return "\n".join(lines)


def changes(command: str, done: list[Any], as_json: bool) -> str:
    """What an install, uninstall, enable or disable did."""
    if as_json:
        return envelope(command, changes=[c._asdict() for c in done])
    if not done:
        return "nothing to do"
    return "\n".join(f"{c.action} {c.id} {c.version} ({c.scope})" for c in done)


def installed(rows: list[dict[str, Any]], as_json: bool) -> str:
    if as_json:
        keys = (
            "id",
            "version",
            "scope",
            "enabled",
            "source",
            "content_hash",
            "installed_at",
            "components",
        )
        return envelope(
            "list",
            plugins=[
                {**{k: row.get(k) for k in keys}, "pin": _pin(row.get("source") or {})}
                for row in rows
            ],
        )
    if not rows:
        return "no plugins installed"
    width = max(len(row["id"]) for row in rows)
    lines = [f"{'plugin':{width}}  {'version':10} {'scope':8} {'enabled':8} content"]
    for row in rows:
        enabled = "yes" if row.get("enabled", True) else "no"
        lines.append(
            f"{row['id']:{width}}  {row['version']:10} {row['scope']:8} {enabled:8} "
            f"{row['content_hash'][:19]}"
        )
    return "\n".join(lines)


def _pin(source: dict[str, Any]) -> str | None:
    """What exactly was installed: the git commit or the archive's sha256."""
    pin = source.get("commit") or source.get("sha256")
    return str(pin) if pin else None


def markets(command: str, found: list[Any], as_json: bool, verb: str = "") -> str:
    if as_json:
        return envelope(
            command,
            marketplaces=[
                {
                    "name": m.name,
                    "kind": m.source.kind,
                    "source": m.source.location,
                    "ref": m.source.ref,
                    "root": str(m.root),
                    "commit": m.commit,
                }
                for m in found
            ],
        )
    if not found:
        return "no marketplaces"
    lines = [
        f"{verb + ' ' if verb else ''}{m.name}  {m.source.kind}  {m.source.location}"
        + (f"#{m.source.ref}" if m.source.ref else "")
        for m in found
    ]
    return "\n".join(lines)


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
        lines.append(f"{len(notes)} entries dropped, shadowed or invalid; see --explain")
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


def error(exc: Exception) -> str:
    """A user-facing error for stderr."""
    return f"error: {exc}"


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


def mcp_listed(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no MCP servers configured"
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

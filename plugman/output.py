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


def hooks_listed(hooks: list[dict[str, Any]], dropped: list[dict[str, Any]]) -> str:
    """`plugman hooks list`: one line per resolved hook, in the order it runs."""
    lines = [] if hooks else ["no hooks resolved"]
    for hook in hooks:
        where = hook["origin"]
        owner = where.get("plugin") or f"{where['scope']}, {display_path(where['file'])}"
        lines.append(
            f"{hook['event']} [{hook['matcher'] or '*'}] {hook['type']}: {hook['command']}"
            f"  ({owner})"
        )
    for item in dropped:
        lines.append(f"dropped {item['name']} ({item['origin']['scope']}): {item['detail']}")
    return "\n".join(lines)


def hook_run(run: dict[str, Any]) -> str:
    """`plugman hooks run`: what each hook did, the decision, and the context to pass on."""
    results = run["results"]
    lines = [f"{run['event']}: {len(results)} hook{'s' * (len(results) != 1)} ran"]
    for result in results:
        lines.append(f"  {_hook_outcome(result)}  {result['target']}")
        if result["note"]:
            lines.append(f"      {result['note']}")
    lines.append(f"decision: {run['decision'] or 'none'}")
    if run["reason"]:
        lines.append(f"reason: {run['reason']}")
    if not run["continue"]:
        lines.append(f"stop: {run['stop_reason'] or 'a hook stopped the session'}")
    lines += [f"message: {m}" for m in run["system_messages"]]
    if run["updated_input"] is not None:
        lines.append(f"updated input: {json.dumps(run['updated_input'])}")
    lines += [f"context: {c}" for c in run["additional_context"]]
    return "\n".join(lines)


def _hook_outcome(result: dict[str, Any]) -> str:
    if result["skipped"]:
        return "skipped"
    if result["timed_out"]:
        return f"timed out after {result['duration']:.1f}s"
    code = result["exit_code"] if result["status"] is None else f"HTTP {result['status']}"
    verdict = f", {result['decision']}" if result["decision"] else ""
    return f"{'exit ' if result['status'] is None else ''}{code}{verdict}"


def hook_block_reason(run: dict[str, Any]) -> str:
    """What an agent is told on stderr when the hooks block (exit 2)."""
    if not run["continue"]:
        return run["stop_reason"] or "a hook stopped the session (continue: false)"
    return run["reason"] or f"blocked by a {run['event']} hook"


def probed(results: list[Any], as_json: bool) -> str:
    """`plugman mcp probe`: one line per server (plugman.runtime.probe.ProbeResult)."""
    if as_json:
        return envelope("mcp probe", servers=[r.as_dict() for r in results])
    if not results:
        return "no MCP servers configured"
    rows = [_probe_row(r) for r in results]
    heads = ("server", "transport", "state", "tools", "time")
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(heads)]
    line = "  ".join(f"{h:{w}}" for h, w in zip(heads, widths, strict=True)) + "  detail"
    lines = [line]
    for result, row in zip(results, rows, strict=True):
        cells = "  ".join(f"{c:{w}}" for c, w in zip(row, widths, strict=True))
        lines.append(f"{cells}  {_probe_detail(result)}")
        if result.state == "failed" and result.stderr_log:
            lines.append(f"{'':{sum(widths) + 2 * len(widths)}}stderr: {result.stderr_log}")
        lines += [f"{'':{sum(widths) + 2 * len(widths)}}warning: {w}" for w in result.warnings]
    counts: dict[str, int] = {}
    for result in results:
        counts[result.state] = counts.get(result.state, 0) + 1
    summary = ", ".join(f"{n} {state}" for state, n in counts.items())
    lines.append(f"{len(results)} server{'s' * (len(results) != 1)}: {summary}")
    return "\n".join(lines)


def _probe_row(result: Any) -> tuple[str, ...]:
    tools = str(len(result.tools)) if result.state == "connected" else "-"
    shown = "" if result.duration_ms is None else f"{result.duration_ms / 1000:.2f} s"
    return (result.name, result.transport, result.state, tools, shown)


def _probe_detail(result: Any) -> str:
    if result.state != "connected":
        return str(result.reason or "")
    who = " ".join(p for p in (result.server_name, result.server_version) if p) or "?"
    parts = [who, f"protocol {result.protocol_version}"]
    if result.resources:
        parts.append(f"{len(result.resources)} resource{'s' * (len(result.resources) != 1)}")
    if result.prompts:
        parts.append(f"{len(result.prompts)} prompt{'s' * (len(result.prompts) != 1)}")
    return ", ".join(parts)


def tool_pool(pool: Any, results: list[Any], as_json: bool) -> str:
    """`plugman mcp tools`: the namespaced pool (plugman.runtime.pool.Pool), its collisions,
    its estimated token cost and the servers left out of it."""
    absent = [r for r in results if r.state != "connected"]
    if as_json:
        left_out = [{"name": r.name, "state": r.state, "reason": r.reason} for r in absent]
        return envelope("mcp tools", **pool.as_dict(), left_out=left_out)
    lines = [f"tools ({len(pool.entries)}):"]
    width = max((len(e.name) for e in pool.entries), default=0)
    for entry in pool.entries:
        lines.append(f"  {entry.name:{width}}  {_hints(entry.annotations)}".rstrip())
    if pool.collisions:
        lines.append(f"collisions ({len(pool.collisions)}):")
        for c in pool.collisions:
            winner = "a built-in tool" if c.winner is None else f"server {c.winner}"
            lines.append(f"  {c.name}: {c.tool} of {c.server} dropped, {winner} has the name")
    lines.append("estimated tokens (JSON of name, description and input schema / 4):")
    costs = [*pool.tokens.items(), ("total", pool.total_tokens)]
    width = max(len(server) for server, _ in costs)
    lines += [f"  {server:{width}}  {tokens:>6}" for server, tokens in costs]
    lines += [f"not in the pool: {r.name} ({r.state}: {r.reason})" for r in absent]
    return "\n".join(lines)


def _hints(annotations: dict[str, Any]) -> str:
    names = {
        "readOnlyHint": "read-only",
        "destructiveHint": "destructive",
        "idempotentHint": "idempotent",
        "openWorldHint": "open-world",
    }
    return ", ".join(label for key, label in names.items() if annotations.get(key) is True)

"""The resolved config, `config explain`, and `mcp list|get`, rendered from the typed
`Resolution` (schemas/resolved-config.schema.json for the document). Secret values are masked
unless `show_secrets`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from plugman.config import redact
from plugman.output.common import display_path, envelope

if TYPE_CHECKING:
    from plugman.config.contribute import Installed
    from plugman.config.merge import Dropped, Hook, Origin, Server
    from plugman.config.resolution import About, PluginAbout, Resolution
    from plugman.config.servers.listing import Status
    from plugman.manifest.diagnostics import Diagnostic

FORMAT = 1


def origin(value: Origin) -> dict[str, str]:
    found = {"scope": value.scope, "file": value.file}
    if value.plugin:
        found["plugin"] = value.plugin
    return found


def entry(value: Server, show_secrets: bool) -> dict[str, Any]:
    return value.entry if show_secrets else redact.entry(value.entry)


def server(value: Server, show_secrets: bool) -> dict[str, Any]:
    return {**entry(value, show_secrets), "origin": origin(value.origin)}


def handler(hook: Hook, show_secrets: bool) -> dict[str, Any]:
    return hook.handler if show_secrets else redact.hook(hook.handler)


def document(resolution: Resolution, show_secrets: bool = False) -> dict[str, Any]:
    """The resolved config as plugman's JSON document."""
    hooks: dict[str, list[dict[str, Any]]] = {}
    for hook in resolution.hooks:
        group: dict[str, Any] = {
            "hooks": [handler(hook, show_secrets)],
            "origin": origin(hook.origin),
        }
        if hook.matcher:
            group["matcher"] = hook.matcher
        hooks.setdefault(hook.event, []).append(group)
    return {
        "format": FORMAT,
        "mcpServers": {n: server(s, show_secrets) for n, s in resolution.servers.items()},
        "hooks": hooks,
        "skills": {
            n: {"path": s.path, "origin": origin(s.origin)} for n, s in resolution.skills.items()
        },
        "plugins": [_plugin(p) for p in resolution.plugins],
        "diagnostics": notes(resolution),
    }


def notes(resolution: Resolution) -> list[dict[str, Any]]:
    """What was dropped, what is shadowed, and the problems in the files read."""
    found = [_dropped(d) for d in resolution.dropped]
    for name, losers in resolution.shadowed.items():
        winner = resolution.servers[name].origin
        found += [
            {
                "severity": "info",
                "code": "shadowed",
                "file": loser.origin.file,
                "message": f"server {name!r} from {loser.origin.scope} "
                f"({loser.origin.file}) is shadowed by {winner.scope} ({winner.file})",
            }
            for loser in losers
        ]
    return found + [_finding(d) for d in resolution.diagnostics]


def _finding(d: Diagnostic) -> dict[str, Any]:
    """A problem in a file read, located (line and column when known) with its hint."""
    found: dict[str, Any] = {
        "severity": d.severity,
        "code": d.code,
        "message": d.message,
        "file": d.file,
        "path": d.path,
    }
    if d.line is not None:
        found |= {"line": d.line, "column": d.column or 1}
    return found | ({"hint": d.hint} if d.hint else {})


def _dropped(item: Dropped) -> dict[str, Any]:
    where = _at(item.origin)
    return {
        "severity": "info",
        "code": item.reason,
        "file": item.origin.file,
        "message": f"{item.kind} {item.name!r} from {where} dropped: {_why(item)}{item.detail}",
    }


def _why(item: Dropped) -> str:
    return f"{item.why}; " if item.why else ""


def resolved(resolution: Resolution, as_json: bool, explain: bool, show_secrets: bool) -> str:
    """`plugman config resolve`: the document, or a summary (with `explain`, every note)."""
    if as_json:
        # lazy: output.jsontext not loaded by plugman config resolve (text)
        from plugman.output import jsontext

        return jsontext.dumps(document(resolution, show_secrets))  # json.dumps(…, indent=2)
    servers = resolution.servers
    lines = [f"MCP servers ({len(servers)}):"]
    for name, value in servers.items():
        lines.append(f"  {name}  [{value.origin.scope}]  {_target(entry(value, show_secrets))}")
        if explain:
            lines.append(f"      from {display_path(value.origin.file)}")
    events: dict[str, list[Hook]] = {}
    for hook in resolution.hooks:
        events.setdefault(hook.event, []).append(hook)
    lines.append(f"hooks ({len(resolution.hooks)}):")
    for event, hooks in events.items():
        scopes = ", ".join(sorted({h.origin.scope for h in hooks}))
        lines.append(f"  {event}: {len(hooks)} ({scopes})")
    lines.append(f"skills ({len(resolution.skills)}): " + ", ".join(resolution.skills))
    found = notes(resolution)
    if explain:
        lines.append(f"notes ({len(found)}):")
        lines += [f"  {n['code']}: {_located(n)}{n['message']}" for n in found]
    elif found:
        count = "1 entry" if len(found) == 1 else f"{len(found)} entries"
        lines.append(f"{count} dropped, shadowed or invalid; see --explain")
    return "\n".join(lines)


def _located(note: dict[str, Any]) -> str:
    """`FILE:LINE:COL: PATH: ` for a problem in a file read ('' for a drop, which says where)."""
    if note["severity"] == "info":
        return ""
    where = display_path(note["file"]) + (
        f":{note['line']}:{note['column']}" if "line" in note else ""
    )
    return f"{where}: " + (f"{note['path']}: " if note.get("path") else "")


def _target(value: dict[str, Any]) -> str:
    if isinstance(value.get("url"), str):
        return str(value["url"])
    if "command" not in value:
        return "-"  # left out as it was read: no resolved entry
    return " ".join([str(value.get("command")), *[str(a) for a in value.get("args", [])]])


def explained(found: About | list[PluginAbout], as_json: bool, show_secrets: bool) -> str:
    """`plugman config explain NAME`: a server, or each plugin NAME names and its servers."""
    if isinstance(found, list):
        return _plugins_explained(found, as_json, show_secrets)
    if as_json:
        return envelope("config explain", **_about(found, show_secrets))
    return _server_explained(found)


def _about(about: About, show_secrets: bool) -> dict[str, Any]:
    return {
        "name": about.name,
        "winner": server(about.winner, show_secrets) if about.winner else None,
        "shadowed": [server(s, show_secrets) for s in about.shadowed],
        "dropped": [_gone(d) for d in about.dropped],
    }


def _gone(d: Dropped) -> dict[str, Any]:
    found = {"reason": d.reason, "detail": d.detail, "origin": origin(d.origin), "kind": d.kind}
    return found | ({"why": d.why} if d.why else {})


def _plugins_explained(found: list[PluginAbout], as_json: bool, show_secrets: bool) -> str:
    if as_json:
        rows = [
            {
                **_plugin(p.plugin),
                "servers": [_about(a, show_secrets) for a in p.servers],
                "hooks_dropped": [_gone(d) for d in p.hooks],
            }
            for p in found
        ]
        ids = {p.plugin.id for p in found}  # one plugin, or a name several marketplaces have
        name = found[0].plugin.id if len(ids) == 1 else found[0].plugin.id.partition("@")[0]
        return envelope("config explain", name=name, plugins=rows)
    lines = []
    for p in found:
        plugin, short = p.plugin, p.plugin.id.partition("@")[0]
        head = f"{plugin.id} is a plugin ({plugin.scope} scope)."
        if p.servers:
            head += (f" Its MCP servers are named plugin:{short}:SERVER; that name is what "
                     "mcp get, mcp run and config explain take.")  # fmt: skip
        lines.append(head)
        if not plugin.enabled:
            where = "" if plugin.scope == "user" else f" --scope {plugin.scope}"
            lines.append(
                f"  disabled: nothing of it is used (run: plugman enable {plugin.id}{where})"
            )
        elif not p.servers and not p.hooks:
            lines.append("  it brings no MCP server, and none of its hooks is left out")
        lines += [f"  {line}" for a in p.servers for line in _server_explained(a).splitlines()]
        lines += [f"  hook {d.name}: dropped: {d.reason} — {d.detail}" for d in p.hooks]
    return "\n".join(lines)


def _server_explained(about: About) -> str:
    lines = [f"{about.name}:"]
    if about.winner:
        lines.append(f"  wins: {_at(about.winner.origin)}")
    lines += [f"  shadowed: {_at(s.origin)}" for s in about.shadowed]
    lines += [
        f"  dropped: {_at(d.origin)}: {d.reason} — {_why(d)}{d.detail}" for d in about.dropped
    ]
    if len(lines) == 1:
        lines.append("  no scope defines it")
    return "\n".join(lines)


def _at(value: Origin) -> str:
    return (
        f"plugin {value.plugin}" if value.plugin else f"{value.scope} ({display_path(value.file)})"
    )


def status_row(row: Status, show_secrets: bool) -> dict[str, Any]:
    """One server entry of `mcp list` / `mcp get` as JSON."""
    shown = entry(row.server, show_secrets)
    return {
        "name": row.server.name,
        **origin(row.server.origin),
        "status": row.status,
        "detail": row.detail,
        "transport": str(shown.get("type", "stdio")),
        "target": _target(shown),
        "entry": shown,
    }


def mcp_listed(rows: list[Status], show_secrets: bool, broken: bool = False) -> str:
    if not rows:
        return (
            "no MCP servers found (some files could not be read)"
            if broken
            else "no MCP servers configured"
        )
    shown = [status_row(row, show_secrets) for row in rows]
    for row in shown:  # which plugin, where the scope is `plugin`
        row["scope"] = f"plugin {row['plugin']}" if row.get("plugin") else row["scope"]
    keys = ("name", "scope", "status")
    widths = {key: max(len(str(row[key])) for row in shown) for key in keys}
    lines = []
    for row in shown:
        cells = "  ".join(f"{row[key]!s:{widths[key]}}" for key in keys)
        note = f"  ({row['detail']})" if row["detail"] else ""
        lines.append(f"{cells}  {row['target']}{note}")
    return "\n".join(lines)


def mcp_got(rows: list[Status], show_secrets: bool) -> str:
    lines = [f"{rows[0].server.name}:"]
    for row in rows:
        note = f" — {row.detail}" if row.detail else ""
        lines.append(f"  {_at(row.server.origin)}: {row.status}{note}")
        if row.server.entry:  # an entry left out as it was read has none to show
            dumped = json.dumps(entry(row.server, show_secrets), indent=2)
            lines += [f"    {line}" for line in dumped.splitlines()]
    return "\n".join(lines)


def _plugin(plugin: Installed) -> dict[str, Any]:
    """An installed plugin's row; `blocked` (the managed rule that stops its delivery) only
    when one does."""
    row = plugin._asdict()
    if not plugin.blocked:
        del row["blocked"]
    return row

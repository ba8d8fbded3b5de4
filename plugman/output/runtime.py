"""Hook runs, probes and the tool pool."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from plugman.config import redact
from plugman.output.common import display_path, envelope

if TYPE_CHECKING:
    from plugman.config.resolution import Resolution
    from plugman.runtime.gateway.pool import Pool
    from plugman.runtime.gateway.probe import ProbeResult
    from plugman.runtime.hooks.outcome import HandlerResult, HookRun


def hooks_listed(resolution: Resolution, as_json: bool) -> str:
    """`plugman hooks list`: one line per resolved hook, in the order it runs, then the hooks
    resolution dropped (with why)."""
    dropped = [d for d in resolution.dropped if d.kind == "hook"]
    if as_json:
        hooks = [
            {
                "event": h.event,
                "matcher": h.matcher,
                "type": h.handler.get("type"),
                "command": _runs(h.handler),
                "handler": redact.entry(h.handler),
                "origin": h.origin._asdict(),
            }
            for h in resolution.hooks
        ]
        gone = [
            {"name": d.name, "reason": d.reason, "detail": d.detail, "origin": d.origin._asdict()}
            for d in dropped
        ]
        return envelope("hooks list", hooks=hooks, dropped=gone)
    lines = [] if resolution.hooks else ["no hooks resolved"]
    for hook in resolution.hooks:
        where = hook.origin
        owner = where.plugin or f"{where.scope}, {display_path(where.file)}"
        kind = hook.handler.get("type")
        lines.append(
            f"{hook.event} [{hook.matcher or '*'}] {kind}: {_runs(hook.handler)}  ({owner})"
        )
    lines += [f"dropped {d.name} ({d.origin.scope}): {d.detail}" for d in dropped]
    return "\n".join(lines)


def _runs(handler: dict[str, Any]) -> Any:
    return handler.get("url") or handler.get("command") or handler.get("prompt")


def hook_run(run: HookRun, as_json: bool) -> str:
    """`plugman hooks run`: what each hook did, the decision, and the context to pass on."""
    if as_json:
        return envelope("hooks run", **run.as_dict())
    results = run.results
    lines = [f"{run.event}: {len(results)} hook{'s' * (len(results) != 1)} ran"]
    for result in results:
        lines.append(f"  {_hook_outcome(result)}  {result.target}")
        if result.note:
            lines.append(f"      {result.note}")
    lines.append(f"decision: {run.decision or 'none'}")
    if run.reason:
        lines.append(f"reason: {run.reason}")
    if not run.continue_:
        lines.append(f"stop: {run.stop_reason or 'a hook stopped the session'}")
    lines += [f"message: {m}" for m in run.system_messages]
    if run.updated_input is not None:
        lines.append(f"updated input: {json.dumps(run.updated_input)}")
    lines += [f"context: {c}" for c in run.additional_context]
    return "\n".join(lines)


def _hook_outcome(result: HandlerResult) -> str:
    if result.skipped:
        return "skipped"
    if result.timed_out:
        return f"timed out after {result.duration:.1f}s"
    code = result.exit_code if result.status is None else f"HTTP {result.status}"
    verdict = f", {result.decision}" if result.decision else ""
    return f"{'exit ' if result.status is None else ''}{code}{verdict}"


def hook_block_reason(run: HookRun) -> str:
    """What an agent is told on stderr when the hooks block (exit 2)."""
    if not run.continue_:
        return run.stop_reason or "a hook stopped the session (continue: false)"
    return run.reason or f"blocked by a {run.event} hook"


def probed(results: list[ProbeResult], as_json: bool) -> str:
    """`plugman mcp probe`: one line per server."""
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


def _probe_row(result: ProbeResult) -> tuple[str, ...]:
    tools = str(len(result.tools)) if result.state == "connected" else "-"
    shown = "" if result.duration_ms is None else f"{result.duration_ms / 1000:.2f} s"
    return (result.name, result.transport, result.state, tools, shown)


def _probe_detail(result: ProbeResult) -> str:
    if result.state != "connected":
        return str(result.reason or "")
    who = " ".join(p for p in (result.server_name, result.server_version) if p) or "?"
    parts = [who, f"protocol {result.protocol_version}"]
    if result.resources:
        parts.append(f"{len(result.resources)} resource{'s' * (len(result.resources) != 1)}")
    if result.prompts:
        parts.append(f"{len(result.prompts)} prompt{'s' * (len(result.prompts) != 1)}")
    return ", ".join(parts)


def tool_pool(pool: Pool, results: list[ProbeResult], as_json: bool) -> str:
    """`plugman mcp tools`: the namespaced pool, its collisions, its estimated token cost and
    the servers left out of it."""
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

"""What a hook's exit code and output mean, and what several hooks decide together
(docs/claude-format.md#hook-exit-codes-and-output).

Exit 0: stdout is JSON when it starts with `{`, else plain text (context only for
UserPromptSubmit, UserPromptExpansion and SessionStart). Exit 2 blocks on blockable events, with
the JSON reason or else stderr; JSON `allow` cannot undo it. Other exits never block; their
valid JSON alone decides. A timed-out hook decides nothing. `continue: false` stops everything.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from plugman.config.merge import Origin
from plugman.core.jsonvalue import JSONObject, Payload

CAP = 10_000  # characters kept of any output string
CONTEXT_EVENTS = frozenset({"UserPromptSubmit", "UserPromptExpansion", "SessionStart"})
BLOCKABLE = frozenset(
    {
        "UserPromptSubmit",
        "UserPromptExpansion",
        "PreSkillShellCommand",
        "PreToolUse",
        "PostToolBatch",
        "SubagentStop",
        "TaskCreated",
        "TaskCompleted",
        "Stop",
        "TeammateIdle",
        "ConfigChange",
        "PreCompact",
        "Elicitation",
        "ElicitationResult",
    }
)
DECISION_EVENTS = frozenset(
    {
        "UserPromptSubmit",
        "UserPromptExpansion",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Stop",
        "SubagentStop",
        "ConfigChange",
        "PreCompact",
        "TaskCreated",
    }
)
FEEDBACK_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure"})  # exit 2: stderr to the agent
PERMISSION_ORDER = ("deny", "defer", "ask", "allow")  # PreToolUse: the first present wins
LEGACY = {"approve": "allow", "block": "deny"}  # deprecated top-level PreToolUse decisions
_CONSUMED = frozenset(
    {"hookEventName", "additionalContext", "permissionDecision", "permissionDecisionReason"}
)


def cap(text: str) -> str:
    if len(text) <= CAP:
        return text
    return text[:CAP] + f"… [{len(text) - CAP} more characters cut]"


def tail(text: str) -> str:
    return text if len(text) <= CAP else "…" + text[-CAP:]


@dataclass
class Raw:
    """How one handler ended, before any meaning is given to it."""

    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    duration: float = 0.0
    timed_out: bool = False
    status: int | None = None  # http handlers: the HTTP status
    skipped: str | None = None
    error: str | None = None  # could not start, connection failed, non-2xx


@dataclass
class HandlerResult:
    origin: Origin
    type: str
    target: str  # the command, or the URL
    exit_code: int | None
    status: int | None
    duration: float
    stdout: str
    stderr: str
    timed_out: bool
    skipped: str | None
    note: str | None = None
    decision: str | None = None
    reason: str | None = None
    stop: bool = False
    stop_reason: str | None = None
    context: list[str] = field(default_factory=list)
    system_message: str | None = None
    updated_input: Payload | None = None
    specific: JSONObject = field(default_factory=dict)


@dataclass
class HookRun:
    event: str
    decision: str | None  # PreToolUse: allow|deny|ask|defer; PermissionRequest: allow|deny; block
    blocked: bool
    reason: str | None
    additional_context: list[str]
    system_messages: list[str]
    updated_input: Payload | None
    continue_: bool
    stop_reason: str | None
    hook_specific: JSONObject
    results: list[HandlerResult]

    def as_dict(self) -> dict[str, Any]:
        found = {("continue" if k == "continue_" else k): v for k, v in asdict(self).items()}
        for row, result in zip(found["results"], self.results, strict=True):
            row["origin"] = result.origin._asdict()
        return found


def blockable(event: str, payload: Payload) -> bool:
    if event == "ConfigChange":
        return payload.get("source") != "policy_settings"
    return event in BLOCKABLE


def interpret(event: str, payload: Payload, raw: Raw, result: HandlerResult) -> None:
    """Fill `result`'s decision fields from the handler's exit code and output."""
    if raw.skipped or raw.timed_out or raw.error:
        result.note = raw.skipped or raw.error or "timed out: no decision"
        return
    ok = raw.exit_code in (0, None)
    data = _json_of(raw.stdout, result)
    if data is not None:
        _apply_json(event, data, result)
    elif ok and raw.stdout.strip() and event in CONTEXT_EVENTS:
        result.context.append(cap(raw.stdout.strip()))
    if raw.exit_code == 2 and blockable(event, payload):
        result.decision = "deny" if event == "PreToolUse" else "block"
        result.reason = result.reason or cap(raw.stderr.strip()) or "blocked by a hook (exit 2)"
    elif event == "WorktreeCreate" and not ok:
        result.decision = "block"
        result.reason = cap(raw.stderr.strip()) or f"exit {raw.exit_code}"
    elif raw.exit_code == 2 and event in FEEDBACK_EVENTS and raw.stderr.strip():
        result.context.append(cap(raw.stderr.strip()))  # too late to block: the agent is told
    elif not ok and data is None:
        first = (raw.stderr.strip().splitlines() or [""])[0]
        result.note = f"hook error (exit {raw.exit_code}, non-blocking): {first}".rstrip(": ")


def _json_of(stdout: str, result: HandlerResult) -> dict[str, Any] | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError as exc:
        result.note = f"stdout is not valid JSON: {exc}"
        return None
    return data if isinstance(data, dict) else None


def _text(value: Any) -> str | None:
    return cap(value) if isinstance(value, str) and value else None


def _apply_json(event: str, data: dict[str, Any], result: HandlerResult) -> None:
    if data.get("continue") is False:
        result.stop = True
        result.stop_reason = _text(data.get("stopReason"))
    result.system_message = _text(data.get("systemMessage"))
    top = data.get("decision")
    if event == "PreToolUse" and top in LEGACY:
        result.decision = LEGACY[top]
        result.reason = _text(data.get("reason"))
    elif event in DECISION_EVENTS and top == "block":
        result.decision = "block"
        result.reason = _text(data.get("reason"))
    specific = data.get("hookSpecificOutput")
    if isinstance(specific, dict):
        if specific.get("hookEventName") == event:
            _apply_specific(event, specific, result)
        else:
            result.note = f"hookSpecificOutput ignored: hookEventName is not {event!r}"


def _apply_specific(event: str, specific: dict[str, Any], result: HandlerResult) -> None:
    context = _text(specific.get("additionalContext"))
    if context:
        result.context.append(context)
    if event == "PreToolUse" and specific.get("permissionDecision") in PERMISSION_ORDER:
        result.decision = specific["permissionDecision"]
        result.reason = _text(specific.get("permissionDecisionReason")) or result.reason
    if isinstance(specific.get("updatedInput"), dict):
        result.updated_input = specific["updatedInput"]
    decision = specific.get("decision")
    if event == "PermissionRequest" and isinstance(decision, dict):
        if decision.get("behavior") in ("allow", "deny"):
            result.decision = decision["behavior"]
            result.reason = _text(decision.get("message"))
        if isinstance(decision.get("updatedInput"), dict):
            result.updated_input = decision["updatedInput"]
    result.specific = {k: v for k, v in specific.items() if k not in _CONSUMED}


def combine(event: str, results: list[HandlerResult]) -> HookRun:
    """Every handler's say, together: deny > defer > ask > allow; any block blocks."""
    decision = _overall([r.decision for r in results if r.decision])
    reasons = [r.reason for r in results if r.decision == decision and r.reason]
    stops = [r for r in results if r.stop]
    blocked = decision in ("deny", "block")
    inputs = [r.updated_input for r in results if r.updated_input is not None]
    specific: dict[str, Any] = {}
    for result in results:
        for key, value in result.specific.items():
            specific.setdefault(key, value)
    return HookRun(
        event=event,
        decision=decision,
        blocked=blocked,
        reason="\n".join(reasons) or None,
        additional_context=[c for r in results for c in r.context],
        system_messages=[r.system_message for r in results if r.system_message],
        updated_input=None if blocked or not inputs else inputs[0],
        continue_=not stops,
        stop_reason=next((r.stop_reason for r in stops if r.stop_reason), None),
        hook_specific=specific,
        results=results,
    )


def _overall(decisions: list[str]) -> str | None:
    for candidate in (*PERMISSION_ORDER, "block"):
        if candidate in decisions:
            return candidate
    return None

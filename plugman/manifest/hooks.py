"""hooks.json files and inline hook maps: events, matchers and handlers."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from plugman.manifest import schema
from plugman.manifest.diagnostics import KeyPath, Sink
from plugman.manifest.model import HookHandler
from plugman.manifest.reader import Report, read_json

NO_MATCHER = frozenset(
    {
        "UserPromptSubmit",
        "PostToolBatch",
        "MessageDisplay",
        "TaskCreated",
        "TaskCompleted",
        "Stop",
        "TeammateIdle",
        "CwdChanged",
        "WorktreeCreate",
        "WorktreeRemove",
    }
)
TOOL_EVENTS = frozenset(
    {"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied"}
)
PLAIN_MATCHER = re.compile(r"^(?:\*|[A-Za-z0-9_\- ,|]*)$")
LONG_TIMEOUT = 1000  # seconds; larger values are almost always milliseconds by mistake


def load_file(file: Path, report: Report) -> list[HookHandler]:
    """The handlers of a hooks.json file (`{"hooks": {Event: [...]}}`)."""
    doc, sink = read_json(file, report)
    if doc is None:
        return []
    schema.validate(doc.value, "hooks.schema.json", sink)
    if not isinstance(doc.value, dict):
        return []
    return handlers(doc.value.get("hooks"), sink, ("hooks",))


def handlers(events: Any, sink: Sink, path: KeyPath) -> list[HookHandler]:
    """Check an event map (already schema-checked) and flatten it into handlers."""
    if not isinstance(events, dict):
        return []
    found: list[HookHandler] = []
    for event, groups in events.items():
        if not isinstance(groups, list):
            continue
        for index, group in enumerate(groups):
            if isinstance(group, dict):
                found.extend(_group(event, group, sink, (*path, event, index)))
    return found


def _group(event: str, group: dict[str, Any], sink: Sink, path: KeyPath) -> list[HookHandler]:
    matcher = group.get("matcher")
    matcher = matcher if isinstance(matcher, str) else None
    if matcher:
        _check_matcher(event, matcher, sink, (*path, "matcher"))
    items = group.get("hooks")
    if not isinstance(items, list):
        return []
    found = []
    for index, entry in enumerate(items):
        if isinstance(entry, dict):
            if not isinstance(entry.get("holdsTools", False), bool):
                sink.warning(
                    "hook-ignored",
                    "holdsTools must be true or false: Claude Code ignores this hook, and so "
                    "does plugman",
                    (*path, "hooks", index, "holdsTools"),
                    "write holdsTools: true or false, or remove it",
                )
                continue
            _check_handler(event, entry, sink, (*path, "hooks", index))
            kind = entry.get("type")
            found.append(HookHandler(event, matcher, kind if isinstance(kind, str) else "", entry))
    return found


def _check_matcher(event: str, matcher: str, sink: Sink, path: KeyPath) -> None:
    if event in NO_MATCHER and matcher != "*":
        sink.warning(
            "matcher-ignored",
            f"{event} hooks have no matcher; it is ignored",
            path,
            "remove the matcher",
        )
    elif not PLAIN_MATCHER.match(matcher):
        problem = js_regex_problem(matcher)
        if problem:
            sink.error(
                "bad-matcher",
                f"matcher is not a valid JavaScript regular expression: {problem}",
                path,
                "agents test matchers with JavaScript's RegExp",
            )


# Python spellings JavaScript rejects, and JavaScript's named groups, which Python spells (?P<…>
# (compiled when a matcher is first a regex)
_PYTHON_ONLY = r"\(\?P[<=>]|\(\?[aiLmsux]+\)"
_JS_NAMED_GROUP = r"\(\?<(?![=!])"


def js_regex_problem(pattern: str) -> str | None:
    """Why JavaScript's RegExp would reject `pattern` (checked with Python's close dialect)."""
    python_only = re.search(_PYTHON_ONLY, pattern)
    if python_only:
        return f"{python_only.group()!r} is Python syntax"
    try:
        re.compile(re.sub(_JS_NAMED_GROUP, "(?P<", pattern))
    except re.error as exc:
        return str(exc)
    return None


def _check_handler(event: str, entry: dict[str, Any], sink: Sink, path: KeyPath) -> None:
    timeout = entry.get("timeout")
    if (
        isinstance(timeout, int | float)
        and not isinstance(timeout, bool)
        and timeout >= LONG_TIMEOUT
    ):
        seconds = float(timeout) if timeout < 1e300 else math.inf  # float() overflows on 1e400
        sink.warning(
            "timeout-in-ms",
            f"timeout is {timeout} seconds ({seconds / 60:.0f} minutes)",
            (*path, "timeout"),
            f"hook timeouts are in seconds; did you mean {seconds / 1000:g}?",
        )
    if "if" in entry and event not in TOOL_EVENTS:
        sink.warning(
            "if-never-runs",
            f"a hook with 'if' never runs on {event}",
            (*path, "if"),
            "'if' only applies to tool events such as PreToolUse; remove it",
        )

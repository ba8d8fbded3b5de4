"""Which hooks an event reaches: matchers and `if` permission rules
(docs/claude-format.md#hook-matchers, #hook-if-rules-and-timeouts).

The matcher is tested against one field of the event's input; the fields are:

| event | field |
|---|---|
| PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest, PermissionDenied | tool_name |
| SessionStart, ConfigChange | source |
| Setup, PreCompact, PostCompact | trigger |
| UserPromptExpansion | command_name |
| PreSkillShellCommand | tool_name |
| Notification | notification_type |
| SubagentStart, SubagentStop | agent_type |
| StopFailure | error_type (else error) |
| InstructionsLoaded | load_reason |
| DirectoryAdded | source (else trigger) |
| FileChanged | the file name (basename of file_path) |
| Elicitation, ElicitationResult | mcp_server_name |
| SessionEnd | reason |

Events without matcher support (hook_files.NO_MATCHER) and events plugman does not know ignore
the matcher. FileChanged and StopFailure take literal `|` lists only, never a regex.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import PurePath
from typing import Any

from plugman.core.jsonvalue import Payload
from plugman.manifest.hooks import NO_MATCHER, PLAIN_MATCHER, TOOL_EVENTS

MATCH_FIELDS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(TOOL_EVENTS, ("tool_name",)),
    "SessionStart": ("source",),
    "ConfigChange": ("source",),
    "Setup": ("trigger",),
    "PreCompact": ("trigger",),
    "PostCompact": ("trigger",),
    "UserPromptExpansion": ("command_name",),
    "PreSkillShellCommand": ("tool_name",),
    "Notification": ("notification_type",),
    "SubagentStart": ("agent_type",),
    "SubagentStop": ("agent_type",),
    "StopFailure": ("error_type", "error"),
    "InstructionsLoaded": ("load_reason",),
    "DirectoryAdded": ("source", "trigger"),
    "FileChanged": ("file_path",),
    "Elicitation": ("mcp_server_name",),
    "ElicitationResult": ("mcp_server_name",),
    "SessionEnd": ("reason",),
}
LITERAL_ONLY = frozenset({"FileChanged", "StopFailure"})
# The tool input an `if` rule's pattern is tested against.
PRIMARY_INPUT = {
    "Bash": "command",
    "Edit": "file_path",
    "Write": "file_path",
    "Read": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
    "Glob": "pattern",
    "Grep": "pattern",
    "WebFetch": "url",
    "WebSearch": "query",
}
_JS_NAMED_GROUP = re.compile(r"\(\?<(?![=!])")
_RULE = re.compile(r"^\s*([^\s()]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)


def matcher_value(event: str, payload: Payload) -> str | None:
    """The input field an event's matcher is tested against (None when absent)."""
    for field in MATCH_FIELDS.get(event, ()):
        value = payload.get(field)
        if isinstance(value, str):
            return PurePath(value).name if event == "FileChanged" else value
    return None


def matches(event: str, matcher: str | None, payload: Payload) -> bool:
    """Whether a hook group's matcher selects this event (docs/claude-format.md#hook-matchers)."""
    if matcher in (None, "", "*") or event in NO_MATCHER or event not in MATCH_FIELDS:
        return True
    assert matcher is not None
    value = matcher_value(event, payload)
    if value is None:
        return False
    if event in LITERAL_ONLY:
        return value in _names(matcher, "|")
    if PLAIN_MATCHER.match(matcher):
        return value in _names(matcher, "|,")
    found = _regex(matcher)
    return found is not None and found.search(value) is not None


def _names(matcher: str, separators: str) -> set[str]:
    parts = re.split(f"[{re.escape(separators)}]", matcher)
    return {part.strip() for part in parts if part.strip()}


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str] | None:
    """A JavaScript matcher in Python's dialect (named groups respelled); None when invalid."""
    try:
        return re.compile(_JS_NAMED_GROUP.sub("(?P<", pattern))
    except re.error:
        return None


def _rule(event: str, rule: Any) -> tuple[str, str | None] | None:
    """An `if` rule's tool and pattern; None when it never admits (not a tool event, unreadable)."""
    if event not in TOOL_EVENTS or not isinstance(rule, str):
        return None
    parsed = _RULE.match(rule)
    return (parsed.group(1), parsed.group(2)) if parsed else None


def if_matches(event: str, rule: Any, payload: Payload) -> bool:
    """Whether a handler's `if` permission rule (`Bash(git *)`, `Edit`, …) admits this call.

    Tool events only: elsewhere a hook with `if` never runs. An unreadable rule never matches.
    """
    parsed = _rule(event, rule)
    if parsed is None:
        return False
    tool, pattern = parsed
    name = payload.get("tool_name")
    if not isinstance(name, str) or not _glob(tool, name):
        return False
    if pattern is None or pattern.strip() in ("", "*"):
        return True
    subject = _primary_input(name, payload)
    return subject is not None and _rule_pattern(pattern.strip(), subject, payload)


def _primary_input(tool: str, payload: Payload) -> str | None:
    tool_input = payload.get("tool_input")
    field = PRIMARY_INPUT.get(tool)
    if not field or not isinstance(tool_input, dict):
        return None
    value = tool_input.get(field)
    return value if isinstance(value, str) else None


def _rule_pattern(pattern: str, subject: str, payload: Payload) -> bool:
    """`git *` globs; the legacy `git commit:*` is a prefix. Paths also match relative to cwd."""
    if pattern.endswith(":*"):
        prefix = pattern[:-2]
        return subject == prefix or subject.startswith(prefix + " ")
    if _glob(pattern, subject):
        return True
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and subject.startswith(cwd.rstrip("/") + "/"):
        return _glob(pattern, subject[len(cwd.rstrip("/")) + 1 :])
    return False


def _glob(pattern: str, text: str) -> bool:
    return _glob_regex(pattern).fullmatch(text) is not None


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """`*` (and `**`) match anything; a trailing ` *` also matches the bare word (`git`)."""
    optional_tail = pattern.endswith(" *")
    body = pattern[:-2] if optional_tail else pattern
    text = ".*".join(re.escape(part) for part in re.split(r"\*+", body))
    return re.compile(text + ("(?: .*)?" if optional_tail else ""), re.DOTALL)


# Precompiled forms for a launch plan (plugman.runtime.launch.plans), which the launcher's fast
# path (plugman.cli.fast_launch) tests with no import of this module: same rules, as data.
Compiled = bool | dict[str, Any]


def compiled_matcher(event: str, matcher: str | None) -> Compiled:
    """`matches` as data: True (every event), False (none), or the fields tested with the
    `names` it takes or the `regex` (Python's dialect) it searches for."""
    if matcher in (None, "", "*") or event in NO_MATCHER or event not in MATCH_FIELDS:
        return True
    assert matcher is not None
    found: dict[str, Any] = {
        "fields": list(MATCH_FIELDS[event]),
        "basename": event == "FileChanged",
    }
    if event in LITERAL_ONLY:
        return {**found, "names": sorted(_names(matcher, "|"))}
    if PLAIN_MATCHER.match(matcher):
        return {**found, "names": sorted(_names(matcher, "|,"))}
    regex = _regex(matcher)
    return False if regex is None else {**found, "regex": regex.pattern}


def compiled_if(event: str, rule: Any) -> Compiled:
    """`if_matches` as data: False (never admits), or the tool's glob as a regex, the pattern
    (`prefix` or `glob` regex; none: any call) and the primary inputs."""
    parsed = _rule(event, rule)
    if parsed is None:
        return False
    tool, pattern = parsed
    found: dict[str, Any] = {"tool": _glob_regex(tool).pattern, "inputs": PRIMARY_INPUT}
    if pattern is None or pattern.strip() in ("", "*"):
        return {**found, "pattern": None}
    if pattern.strip().endswith(":*"):
        return {**found, "pattern": {"prefix": pattern.strip()[:-2]}}
    return {**found, "pattern": {"glob": _glob_regex(pattern.strip()).pattern}}

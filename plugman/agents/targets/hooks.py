"""Hooks as an agent spells them: Claude Code's matcher groups by event (what the resolved
config holds) → the parts of the agent's hooks file, by its `HookSpelling` record.

Every entry keeps the id of the Claude group it came from (`hook_id` of Claude's event and
group), so the export record's owners and an uninstall find it whatever the agent calls it.

A translation never widens what runs. An agent with a launcher (`HookSpelling.launcher`) gets
a handler that needs approval (the project's own, an unconsented plugin's: the group's `MARK`
says so) as `plugman hooks exec AGENT EVENT HOOK-ID`, which resolves again at each call, so an
approved hook whose script changed since (a `git pull`, no plugman command in between) waits
for approval again instead of running. Every agent but Claude Code (`launches_plugins`) also
gets a plugin's handler, and any handler with a field it has no place for (`if`, `args`,
`shell`, `async`), that way: no machine path, no option value in the file, Claude's matcher and
`if` tested at run time. Claude Code keeps every field of its handler around the launcher
(`wrapped`: `if`, `async`, `once`, `statusMessage`... are its own), and its user-scope and
consented hooks as given. The agent keeps Claude's matcher (tool names in its own spelling) as
a cheap pre-filter, never narrower than Claude's. A handler the launcher cannot deliver either
(`asyncRewake`, `once`, `onFailure`, a field plugman does not know) is left out with one line
in `unsupported`, as is an event the agent lacks or a handler type it does not run; only a
cosmetic field (`statusMessage`) is dropped from a handler that is still written, with a note.
"""

from __future__ import annotations

import math
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from plugman.agents.targets.model import Place, hook_id
from plugman.agents.targets.spec import Entry, HookSpelling
from plugman.core.state import Scope
from plugman.manifest.edit import Part
from plugman.runtime.hooks.match import compiled_matcher
from plugman.runtime.hooks.run import timeout_of
from plugman.runtime.launch.hook import COSMETIC, DELIVERED, LAUNCH_MARGIN
from plugman.runtime.launch.shplan import DISPATCHER

MARK = "plugman:hook"  # {"id": HOOK-ID, "plugin": bool, "approval": bool}; never in a file

Groups = dict[str, list[Entry]]


def parts(
    spec: HookSpelling, agent: str, given: Groups, place: Place | None, notes: list[str]
) -> dict[str, list[Part]]:
    """The parts by file role: the hooks (one listed part per agent event) and what
    `spec.trust` adds when the files are known (`place`)."""
    events: dict[str, dict[str, Entry]] = {}
    for event, groups in given.items():
        name = event if spec.events is None else spec.events.get(event)
        for group in groups:
            gid = hook_id(event, group)
            if name is None:
                notes.append(f"{event} hook {said(group)}: {agent} has no {event} event; left out")
                continue
            scope = place.scope if place is not None else "project"
            for i, written in enumerate(entries(spec, agent, event, group, scope, notes)):
                events.setdefault(name, {})[gid if i == 0 else f"{gid}#{i}"] = written
    found = [Part((*spec.key, name), entries, listed=True) for name, entries in events.items()]
    if not found:
        return {}
    if spec.top:
        found.append(Part((), dict(spec.top)))
    result = {spec.role: found}
    if spec.trust is not None and place is not None:
        for role, more in spec.trust(place, found).items():
            result.setdefault(role, []).extend(more)
    return result


def entries(
    spec: HookSpelling, agent: str, event: str, group: Entry, scope: Scope, notes: list[str]
) -> list[Entry]:
    """The group as the agent writes it: one group, or (`flat`) one entry per handler; `event`
    is Claude's name of it."""
    mark = group.get(MARK)
    handlers = []
    for given in group.get("hooks", []):
        if spec.launcher and isinstance(mark, dict) and launched(spec, given, mark):
            fast = direct(spec, event, group.get("matcher"), given, mark)
            command = launcher(scope, spec.launcher, event, str(mark["id"]), fast)
            found = through(spec, agent, event, given, command, notes)
        else:
            found = handler(spec, agent, event, given, notes)
        if found:
            handlers.append(found)
    if not handlers:
        return []
    matcher = group.get("matcher")
    if isinstance(matcher, str):
        matcher = tools(matcher, spec.tools)
    for key in sorted(set(group) - {"matcher", "hooks", MARK}):
        notes.append(
            f"{event} hook {said(group)}: field {key!r} has no {agent} equivalent; left out"
        )
    head: Entry = {"matcher": matcher} if matcher else {}
    if spec.flat:
        return [{**h, **head} for h in handlers]
    both = {**head, "hooks": handlers}
    return [{k: both[k] for k in [*group, "matcher"] if k in both}]  # in the group's order


def launched(spec: HookSpelling, given: Any, mark: dict[str, Any]) -> bool:
    """Whether the handler goes through the launcher: a command that needs approval (checked
    at each call), a plugin's (`spec.launches_plugins`), or one with a field the agent has no
    place for."""
    if not isinstance(given, dict):
        return False
    if mark.get("approval") and given.get("type", "command") == "command":
        return True
    keep = set(spec.handler) if spec.handler is not None else set(given)
    plugin = spec.launches_plugins and bool(mark.get("plugin"))
    return plugin or bool(set(given) - keep - COSMETIC)


def direct(spec: HookSpelling, event: str, matcher: Any, given: Any, mark: dict[str, Any]) -> bool:
    """Whether the launcher would only pass the event through (runtime.launch.shplan): an agent
    sending Claude's own event JSON, a plugin's handler needing no approval, no `if`, in the
    foreground, selecting every call of its event."""
    if not spec.direct or not isinstance(given, dict) or not mark.get("plugin"):
        return False
    if mark.get("approval") or "if" in given or given.get("async"):
        return False
    return compiled_matcher(event, matcher if isinstance(matcher, str) else None) is True


def launcher(scope: Scope, agent: str, event: str, ref: str, fast: bool = False) -> str:
    """The launcher's command line, spelled as `export_entries.gateway_entry` spells plugman:
    `plugman` on PATH in a project file (a teammate's clone), this interpreter elsewhere. The
    direct form (`fast`) is the `plugman-hook` dispatcher installed beside `plugman`: on PATH in
    a project file, by its path beside this interpreter elsewhere (where it is not there, the
    launcher itself)."""
    words = f"{agent} {event} {shlex.quote(ref)}"
    if fast and scope == "project":
        return f"{DISPATCHER} {words}"
    beside = Path(sys.executable).parent / DISPATCHER
    if fast and beside.is_file():
        return f"{shlex.quote(str(beside))} {words}"
    head = "plugman" if scope == "project" else f"{shlex.quote(sys.executable)} -m plugman"
    return f"{head} hooks exec {words}"


def through(
    spec: HookSpelling,
    agent: str,
    event: str,
    given: dict[str, Any],
    command: str,
    notes: list[str],
) -> Entry | None:
    """The launcher's handler: `command`, and a timeout a little past the handler's own (the
    launcher enforces that one); None, with one note, when the launcher cannot deliver it."""
    if spec.handler is None:  # the agent takes every field (Claude Code)
        return wrapped(given, command, event)
    if not usable(spec, agent, event, given, notes):
        return None
    seconds = math.ceil(timeout_of(given, event)) + LAUNCH_MARGIN
    fields: dict[str, Any] = {"type": "command", "command": command, "timeout": seconds}
    shown = given.get("statusMessage")
    if shown is not None and spec.handler is not None and "statusMessage" in spec.handler:
        fields["statusMessage"] = shown
    elif shown is not None:
        notes.append(
            f"{event} hook {said(given)}: field 'statusMessage' has no {agent} equivalent; left out"
        )
    keep = spec.handler if spec.handler is not None else tuple(fields)
    scale = spec.timeout_scale
    return {
        spec.renames.get(key, key): fields[key] * scale if key == "timeout" else fields[key]
        for key in keep
        if key in fields
    }


def wrapped(given: dict[str, Any], command: str, event: str) -> Entry:
    """The handler for an agent that takes every field, with the launcher as its command: what
    decides how the command runs (`args`, `shell`) is the launcher's to apply, every other field
    stays for the agent to honour around it (`if`, `async`, `once`, `asyncRewake`,
    `statusMessage`), and the timeout is a little past the handler's own."""
    seconds = math.ceil(timeout_of(given, event)) + LAUNCH_MARGIN
    kept = {k: v for k, v in given.items() if k not in ("args", "shell")}
    return {**kept, "type": "command", "command": command, "timeout": seconds}


def usable(
    spec: HookSpelling, agent: str, event: str, given: dict[str, Any], notes: list[str]
) -> bool:
    """False, with one note naming what cannot be delivered, for a handler the launcher cannot
    run exactly as Claude Code does."""
    kind = given.get("type", "command")
    if kind != "command" or (spec.types is not None and kind not in spec.types):
        notes.append(f"{event} hook {said(given)}: {agent} runs no {kind!r} hooks; left out")
        return False
    beyond = sorted(set(given) - DELIVERED - COSMETIC)
    if beyond:
        fields = ", ".join(repr(k) for k in beyond)
        notes.append(
            f"{event} hook {said(given)}: left out of {agent}: {fields} cannot be delivered "
            f"there ({REASONS.get(beyond[0], 'plugman does not know what it does')}), and "
            "without it the hook would run differently"
        )
        return False
    return True


REASONS = {
    "asyncRewake": "no agent but Claude Code wakes the model when a background hook exits 2",
    "rewakeMessage": "it belongs to asyncRewake, which only Claude Code delivers",
    "rewakeSummary": "it belongs to asyncRewake, which only Claude Code delivers",
    "once": "running once per session needs Claude Code's session",
    "onFailure": "the agent decides what a failing hook means",
}


def handler(
    spec: HookSpelling, agent: str, event: str, given: Any, notes: list[str]
) -> Entry | None:
    """The handler as given, in the agent's spelling; None (with one note) when it has a field
    the agent cannot take that changes what runs (only cosmetic ones are dropped)."""
    if not isinstance(given, dict):
        return None
    kind = given.get("type", "command")
    if spec.types is not None and kind not in spec.types:
        notes.append(f"{event} hook {said(given)}: {agent} runs no {kind!r} hooks; left out")
        return None
    keep = spec.handler if spec.handler is not None else tuple(given)
    lost = sorted(set(given) - set(keep) - COSMETIC)
    if lost:
        fields = ", ".join(repr(k) for k in lost)
        notes.append(
            f"{event} hook {said(given)}: left out: {agent} has no equivalent of {fields}, "
            "and without it the hook would run differently"
        )
        return None
    for key in sorted(set(given) - set(keep)):
        notes.append(
            f"{event} hook {said(given)}: field {key!r} has no {agent} equivalent; left out"
        )
    found: Entry = {}
    for key in keep:
        if key not in given:
            continue
        value = given[key]
        if key == "command" and isinstance(value, str):
            for old, new in spec.text.items():
                value = value.replace(old, new)
        elif key == "timeout" and isinstance(value, int | float) and spec.timeout_scale != 1:
            value = value * spec.timeout_scale
        found[spec.renames.get(key, key)] = value
    return found


def tools(matcher: str, renames: dict[str, str] | Any) -> str:
    """The matcher with each tool name the agent spells differently renamed (whole words, as
    `gemini hooks migrate` does)."""
    for old, new in renames.items():
        matcher = re.sub(rf"\b{re.escape(old)}\b", new, matcher)
    return matcher


def said(value: Entry) -> str:
    """A hook named in a note: its command (or url), quoted."""
    handlers = value.get("hooks")
    first = handlers[0] if isinstance(handlers, list) and handlers else value
    if not isinstance(first, dict):
        return "(empty)"
    text = first.get("command") or first.get("url") or first.get("type")
    return repr(str(text)) if text else "(empty)"

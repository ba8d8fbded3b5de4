"""Hooks as an agent spells them: Claude Code's matcher groups by event (what the resolved
config holds) → the parts of the agent's hooks file, by its `Hooks` record.

Every entry keeps the id of the Claude group it came from (`hook_id` of Claude's event and
group), so the export record's owners and an uninstall find it whatever the agent calls it.
What the agent cannot take is left out with one line per hook in `unsupported`: an event it
lacks, a handler type it does not run, a field it has no place for.
"""

from __future__ import annotations

import re
from typing import Any

from plugman.agents.targets.model import Place, hook_id
from plugman.agents.targets.spec import Entry, Hooks
from plugman.manifest.edit import Part

Groups = dict[str, list[Entry]]


def parts(
    spec: Hooks, agent: str, given: Groups, place: Place | None, notes: list[str]
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
            for i, written in enumerate(entries(spec, agent, event, name, group, notes)):
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
    spec: Hooks, agent: str, event: str, name: str, group: Entry, notes: list[str]
) -> list[Entry]:
    """The group as the agent writes it: one group, or (`flat`) one entry per handler."""
    handlers = [
        h for h in (handler(spec, agent, event, h, notes) for h in group.get("hooks", [])) if h
    ]
    if not handlers:
        return []
    matcher = group.get("matcher")
    if isinstance(matcher, str):
        matcher = tools(matcher, spec.tools)
    for key in sorted(set(group) - {"matcher", "hooks"}):
        notes.append(
            f"{event} hook {said(group)}: field {key!r} has no {agent} equivalent; left out"
        )
    head: Entry = {"matcher": matcher} if matcher else {}
    if spec.flat:
        return [{**h, **head} for h in handlers]
    both = {**head, "hooks": handlers}
    return [{k: both[k] for k in [*group, "matcher"] if k in both}]  # in the group's order


def handler(spec: Hooks, agent: str, event: str, given: Any, notes: list[str]) -> Entry | None:
    if not isinstance(given, dict):
        return None
    kind = given.get("type", "command")
    if spec.types is not None and kind not in spec.types:
        notes.append(f"{event} hook {said(given)}: {agent} runs no {kind!r} hooks; left out")
        return None
    keep = spec.handler if spec.handler is not None else tuple(given)
    for key in given:
        if key not in keep:
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

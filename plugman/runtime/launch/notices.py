"""Update notices in the agent: a tiny cache of what `plugman outdated` found, and the one line
an agent's SessionStart hook prints from it (`plugman hooks notify AGENT`).

Opt-in: `plugman agents add AGENT --notify-updates` (the link's `notify_updates = true` in the
scope's `[agents]` table), or for every linked agent at once `[notices] updates = true` in the
user's plugman.toml (`false` turns them all off; set, it wins over each link's own). The
deployment then adds one SessionStart hook (`group`) to each linked agent whose hooks have that
event, written and recorded like every other entry, so unlinking takes out exactly it.

The cache, `<state>/update-notice.json`, is written by `plugman outdated` (`save`), and pruned by
`update`, `sync` and `uninstall` (`prune`: a plugin no longer installed with the content it was
checked with drops out). It holds the check's time and one row per plugin with an update: its
id, scope, project folder (project and local scopes) and the content hash it was checked with.

The notice (`notice`) answers from that file only: no network, no plugman module beyond what
finds the project, one JSON read. It says nothing when nothing is outdated, when there is no
cache (never checked) or the cache cannot be read; a check older than `STALE_DAYS` says "may
have updates" and names `plugman outdated`. Its form is the agent's own SessionStart output
(`Form`, named by its `AgentSpec.notice`): the JSON Claude Code, Codex and Gemini CLI read
(`systemMessage` shown to the user, `additionalContext` to the model), Copilot CLI's and
Cursor's context key, else plain text.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from plugman.core.fs import atomic_write

if TYPE_CHECKING:
    from plugman.core.paths import Paths

FILE = "update-notice.json"
STALE_DAYS = 7
TIMEOUT = 10  # seconds an agent gives the notice hook (it takes well under 0.1)
SHOWN = 3  # plugin names in the line; the rest counted
EVENT = "SessionStart"
TABLE, KEY = "notices", "updates"  # `[notices] updates = true|false` in the user's plugman.toml
LINK_KEY = "notify_updates"  # `[agents] gemini = { notify_updates = true }`


class Row(NamedTuple):
    """A plugin `plugman outdated` found an update for."""

    id: str
    scope: str
    content_hash: str | None  # what was installed when checked
    project: str | None = None  # the project folder, for the project and local scopes


def path(paths: Paths) -> Path:
    return paths.state_dir / FILE


def save(paths: Paths, rows: Iterable[Row], now: float | None = None) -> None:
    """Record a check made now: `rows` replace this project's and the user's rows; other
    projects' rows stay."""
    here = str(paths.project_dir)
    kept = [r for r in _rows(_load(path(paths))) if r.scope != "user" and r.project != here]
    fresh = [r._replace(project=None if r.scope == "user" else here) for r in rows]
    body = {"checked": time.time() if now is None else now, "updates": _dump([*kept, *fresh])}
    atomic_write(path(paths), json.dumps(body, indent=1).encode() + b"\n", private=True)


def prune(paths: Paths) -> None:
    """Drop the rows of this project and the user whose plugin is no longer installed with the
    content it was checked with (updated, synced to another version, uninstalled)."""
    # lazy: core.state not loaded by plugman hooks notify (+1 ms)
    from plugman.core.state import SCOPES, InstallRecord

    file = path(paths)
    loaded = _load(file)
    if loaded is None:
        return
    here = str(paths.project_dir)
    installed: dict[tuple[str, str], str] = {
        (scope, plugin_id): entry.content_hash
        for scope in SCOPES
        for plugin_id, entry in InstallRecord.load(paths, scope).plugins.items()
    }
    rows = _rows(loaded)
    kept = [
        r
        for r in rows
        if (r.scope != "user" and r.project != here)
        or installed.get((r.scope, r.id), "") == r.content_hash
    ]
    if kept != rows:
        body = {**loaded, "updates": _dump(kept)}
        atomic_write(file, json.dumps(body, indent=1).encode() + b"\n", private=True)


def line(paths: Paths, now: float | None = None) -> str | None:
    """The notice for this project, or None: nothing to say (or nothing readable)."""
    loaded = _load(path(paths))
    if loaded is None:
        return None
    checked = loaded.get("checked")
    if not isinstance(checked, int | float) or not isinstance(loaded.get("updates"), list):
        return None  # not a cache plugman wrote
    days = int(((time.time() if now is None else now) - checked) // 86400)
    if days >= STALE_DAYS:
        return (
            f"plugman: plugins may have updates (last checked {days} days ago): "
            "run `plugman outdated`"
        )
    here = str(paths.project_dir)
    ids = sorted({r.id for r in _rows(loaded) if r.scope == "user" or r.project == here})
    if not ids:
        return None
    named = ", ".join(ids[:SHOWN]) + (f", +{len(ids) - SHOWN} more" if len(ids) > SHOWN else "")
    noun = "plugin has an update" if len(ids) == 1 else "plugins have updates"
    return f"plugman: {len(ids)} {noun} ({named}): run `plugman update`"


def _claude(text: str) -> str:
    found = {"hookEventName": EVENT, "additionalContext": text}
    return json.dumps({"systemMessage": text, "hookSpecificOutput": found})


def _copilot(text: str) -> str:
    return json.dumps({"additionalContext": text})


def _cursor(text: str) -> str:
    return json.dumps({"additional_context": text})


def _plain(text: str) -> str:
    return text


# The SessionStart output forms an agent may read (its `AgentSpec.notice`): Claude's JSON
# (`systemMessage` to the user, `hookSpecificOutput.additionalContext` to the model), a top-level
# `additionalContext` (Copilot CLI) or `additional_context` (Cursor), else plain stdout.
Form = Literal["claude", "additionalContext", "additional_context", "plain"]
FORMS: dict[str, Callable[[str], str]] = {
    "claude": _claude,
    "additionalContext": _copilot,
    "additional_context": _cursor,
    "plain": _plain,
}


def notice(paths: Paths, form: str, now: float | None = None) -> str:
    """What the hook prints in the agent's `form` ("" when nothing to say; an unknown form is
    plain text)."""
    text = line(paths, now)
    return "" if text is None else render(text, form)


def render(text: str, form: str) -> str:
    """The notice `text` in the agent's `form` (an unknown form is plain text)."""
    return FORMS.get(form, _plain)(text) + "\n"


def group(agent: str, scope: str) -> dict[str, Any]:
    """The SessionStart matcher group that runs the notice, spelled as the hook launcher is
    (`agents.targets.hooks.launcher`): `plugman` on PATH in a committed project file, this
    interpreter elsewhere (so it runs whatever PATH the agent has); the agent passes its own
    environment, PLUGMAN_HOME too, to its hooks."""
    head = "plugman" if scope == "project" else f"{shlex.quote(sys.executable)} -m plugman"
    command = f"{head} hooks notify {shlex.quote(agent)}"
    return {"hooks": [{"type": "command", "command": command, "timeout": TIMEOUT}]}


def wanted(link_value: bool, user_setting: Any) -> bool:
    """Whether a link gets the notice: the user's `[notices] updates` when it is a boolean,
    else the link's own `notify_updates`."""
    return user_setting if isinstance(user_setting, bool) else link_value


def _load(file: Path) -> dict[str, Any] | None:
    try:
        found = json.loads(file.read_bytes())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _rows(loaded: dict[str, Any] | None) -> list[Row]:
    given = loaded.get("updates") if loaded else None
    found = []
    for item in given if isinstance(given, list) else []:
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            hashed, project = item.get("content_hash"), item.get("project")
            found.append(
                Row(
                    item["id"],
                    str(item.get("scope", "user")),
                    hashed if isinstance(hashed, str) else None,
                    project if isinstance(project, str) else None,
                )
            )
    return found


def _dump(rows: list[Row]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r._asdict().items() if v is not None} for r in rows]

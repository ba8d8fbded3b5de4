"""Codex's files, and the trust entries its hooks need.

Codex 0.169 runs a hook from `hooks.json` (user: `$CODEX_HOME/hooks.json`, project:
`.codex/hooks.json`) only when the user's `config.toml` trusts it:
`[hooks.state."<file>:<event_snake>:<group>:<handler>"] trusted_hash = "sha256:…"`, keyed by
the hook's position and holding the hash of its normalized content. Codex reads that state from
the user's `config.toml` only (never from a project), so both scopes write it there.

Why plugman may write it: every hook an export writes is one the user already approved in
plugman. Hooks of a plugin come from a plugin the user installed; the user's own hooks are in
their own `plugman.toml`; a project's hooks (and those of plugins its declaration brings) are
exported only once approved with `plugman trust approve` (pending ones are never exported).
Writing the trust entry records that approval where Codex looks for it, for exactly the content
approved: the hash covers the command, matcher, timeout and event, so a hook edited afterwards
is "modified" in Codex and does not run until reviewed in `/hooks`.

The hash (found by reading codex-rs `hooks/src/engine/discovery.rs` and checked against the
`currentHash` that `codex app-server`'s `hooks/list` reports): sha256 of the compact JSON, keys
sorted, of `{"event_name": <snake>, "matcher": <m>, "hooks": [<handler>]}` with the handler
`{"type": "command", "command", "timeout": <s, default 600, at least 1>, "async": <false>,
"statusMessage"}` (absent fields left out; no matcher for events that take none).

The position is the index of plugman's group among the event's groups in the file as it will
be: plugman appends its groups after those already there, so the index counts the groups of
the file that plugman is not writing. A group the user moves or adds above plugman's after the
export shifts the position: Codex then lists the hook as untrusted until it is exported again
(or reviewed in `/hooks`); it never trusts a different hook, since the hash must match.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from plugman.agents.targets.model import Location, Place
from plugman.manifest.edit import Part

NO_MATCHER = ("UserPromptSubmit", "Stop", "Interrupt")  # Codex ignores their matcher
DEFAULT_TIMEOUT = 600


def home(place: Place) -> Path:
    return Path(place.env.get("CODEX_HOME") or place.home / ".codex")


def files(place: Place) -> dict[str, Location]:
    """`config.toml` (servers) and `hooks.json` (hooks) per scope; the trust entries of a
    project's hooks go in the user's `config.toml` (role `trust`)."""
    if place.scope == "user":
        return {
            "mcp": Location(home(place) / "config.toml"),
            "hooks": Location(home(place) / "hooks.json", fmt="json"),
        }
    if place.scope == "project":
        folder = place.project / ".codex"
        return {
            "mcp": Location(folder / "config.toml"),
            "hooks": Location(folder / "hooks.json", fmt="json"),
            "trust": Location(home(place) / "config.toml"),
        }
    return {}


def trust(place: Place, parts: list[Part]) -> dict[str, list[Part]]:
    """One `hooks.state` entry per handler plugman writes, in the user's `config.toml`."""
    where = files(place)
    if "hooks" not in where:
        return {}
    hooks_file = where["hooks"].path
    existing = _events(hooks_file)
    state: dict[str, Any] = {}
    for part in parts:
        if not part.listed or len(part.container) < 2:
            continue
        event = part.container[-1]
        mine = list(part.entries.values())
        before = [g for g in existing.get(event, []) if g not in mine]
        for offset, group in enumerate(mine):
            for index, handler in enumerate(group.get("hooks", [])):
                key = f"{hooks_file}:{snake(event)}:{len(before) + offset}:{index}"
                state[key] = {"trusted_hash": hook_hash(event, group.get("matcher"), handler)}
    if not state:
        return {}
    return {"mcp" if place.scope == "user" else "trust": [Part(("hooks", "state"), state)]}


def hook_hash(event: str, matcher: str | None, handler: dict[str, Any]) -> str:
    """The `currentHash` Codex computes for one command hook."""
    normalized: dict[str, Any] = {"type": "command", "command": handler.get("command", "")}
    normalized["timeout"] = max(1, int(handler.get("timeout", DEFAULT_TIMEOUT)))
    normalized["async"] = bool(handler.get("async", False))
    if handler.get("statusMessage") is not None:
        normalized["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": snake(event), "hooks": [normalized]}
    if matcher is not None and event not in NO_MATCHER:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def _events(path: Path) -> dict[str, list[Any]]:
    """The file's groups by event (none when it is missing or unreadable: the export reads
    and checks it again before writing)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        return {}
    return {k: v for k, v in hooks.items() if isinstance(v, list)}

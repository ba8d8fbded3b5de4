"""Sensitive plugin options for the plugins Claude Code loads natively: in Claude's own secure
storage, where `claude plugin configure` puts them, never in a settings or project file.

Claude Code 2.1.328 reads a plugin's option values as `pluginConfigs[<id>].options` of the
user's settings.json (non-sensitive: `claude_plugin.plan` writes those) merged with
`pluginSecrets[<id>]` of its secure storage (sensitive). On Linux that storage is the file
`secure_storage` (`~/.claude/.credentials.json`, 0600, also holding Claude's own
login), so a value there is as private as Claude's own credentials and is read by nobody but
Claude. plugman owns only the `pluginSecrets` entries of the Claude ids it deploys, and only the
keys it wrote: `<state>/claude-secrets.json` names them per link (file, ids, keys: no value),
so the next deployment takes out exactly those. The file is written through the transaction
(its journal copy is 0600 and gone at commit), a new one 0600, and removed again only when
plugman created it and nothing is left in it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plugman.agents.claude_plugin import config_dir
from plugman.core.folders import Folders
from plugman.core.session import Session
from plugman.core.state import read_state

FORMAT = 1
KEY = "pluginSecrets"


def secure_storage(home: Path, env: Mapping[str, str]) -> Path:
    """Claude's secure storage on Linux (no keychain there; macOS uses the keychain instead):
    `.credentials.json`, 0600, in `CLAUDE_SECURESTORAGE_CONFIG_DIR` (empty: `~/.claude`), else in
    its config folder. Claude reads a plugin's sensitive options from its `pluginSecrets[<id>]`
    and refuses to read the file through a symbolic link."""
    given = env.get("CLAUDE_SECURESTORAGE_CONFIG_DIR")
    if given is not None:
        return (Path(given) if given else home / ".claude") / ".credentials.json"
    return config_dir(home, env) / ".credentials.json"


def record_path(state_dir: Path) -> Path:
    return state_dir / "claude-secrets.json"


def sync(
    work: Session, folders: Folders, link_key: str, file: Path, wanted: Mapping[str, dict[str, str]]
) -> list[str]:
    """Make `file`'s `pluginSecrets` hold `wanted` (Claude id -> KEY -> value) for this link,
    and none of what this link put there before and no longer wants. Notes for what it left."""
    path = record_path(work.paths.state_dir)
    record = read_state(path, "move it away; plugman then writes Claude's secrets afresh") or {}
    links: dict[str, Any] = record.get("links", {})
    before = links.get(link_key, {})
    notes: list[str] = []
    files = {Path(before["file"])} if before.get("file") else set()
    files.add(file)
    kept: dict[str, Any] = {}
    for place in sorted(files):
        mine = wanted if place == file else {}
        owned = before.get("ids", {}) if str(place) == before.get("file") else {}
        created = bool(before.get("created")) if str(place) == before.get("file") else False
        done = _apply(work, folders, place, owned, mine, created, notes)
        if done is not None and place == file and mine:
            kept = {"file": str(place), "ids": {i: sorted(v) for i, v in mine.items()}}
            kept["created"] = done
    if kept:
        links[link_key] = kept
    else:
        links.pop(link_key, None)
    body = {"format": FORMAT, "links": dict(sorted(links.items()))} if links else None
    if body != (record or None):
        data = None if body is None else (json.dumps(body, indent=2) + "\n").encode()
        work.tx.write(path, data)
    return notes


def _apply(
    work: Session,
    folders: Folders,
    file: Path,
    owned: Mapping[str, list[str]],
    wanted: Mapping[str, dict[str, str]],
    created: bool,
    notes: list[str],
) -> bool | None:
    """Write `wanted` into `file`, taking out the `owned` keys it no longer wants. Whether
    plugman created the file (None: the file is not a JSON object, left as it is)."""
    if not owned and not wanted:
        return created
    exists = file.exists()
    try:
        doc: Any = json.loads(file.read_text(encoding="utf-8")) if exists else {}
    except (OSError, ValueError):
        doc = None
    if not isinstance(doc, dict) or not isinstance(doc.get(KEY, {}), dict):
        notes.append(
            f"{file} is not a JSON object Claude Code can read: plugin secrets not written"
        )
        return None
    secrets: dict[str, Any] = dict(doc.get(KEY, {}))
    for claude_id, keys in owned.items():
        entry = secrets.get(claude_id)
        if isinstance(entry, dict):
            left = {
                k: v for k, v in entry.items() if k not in keys or k in wanted.get(claude_id, {})
            }
            secrets[claude_id] = left
    for claude_id, values in wanted.items():
        entry = secrets.get(claude_id)
        secrets[claude_id] = {**(entry if isinstance(entry, dict) else {}), **values}
    secrets = {k: v for k, v in secrets.items() if v != {}}
    changed = {**doc, KEY: secrets} if secrets else {k: v for k, v in doc.items() if k != KEY}
    created = created or not exists
    if changed == doc and exists:
        return created
    if not changed and created:
        work.tx.write(file, None, prune_to=folders.stop(file))
        return created
    folders.note(file)
    work.tx.write(file, (json.dumps(changed, indent=2) + "\n").encode(), private=True)
    return created

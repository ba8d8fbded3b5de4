"""What plugman's export record (`<state>/exports.json`) says plugman wrote into an agent's
file, read only: the record is owned, written and read in full by plugman.agents.export_record.

Resolution needs one fact from it, which `.mcp.json` entries are plugman's own export (not the
project's servers), and `config` sits below `agents`: so the record's location, the digest an
entry is kept as, and that one query live here, and `agents.export_record` uses them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from plugman.core.paths import Paths
from plugman.core.state import read_state

FORMAT = 2  # 1: entries kept in clear (read, and sealed at the next write)


def path(paths: Paths) -> Path:
    return paths.state_dir / "exports.json"


def digest(value: Any) -> str:
    """The form an entry plugman wrote is kept in: the sha256 of its canonical JSON."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def read(paths: Paths) -> dict[str, Any]:
    """The record's JSON as stored (empty when there is none)."""
    found: dict[str, Any] = read_state(path(paths), "run 'plugman doctor'", FORMAT) or {}
    return found


def owned(paths: Paths, file: Path, container: tuple[str, ...]) -> dict[str, str]:
    """The entries (id → digest of the value as written) plugman put in `container` of `file`."""
    found: dict[str, str] = {}
    if not path(paths).exists():
        return found
    data = read(paths)
    sealed = data.get("format") == FORMAT
    for files in data.get("exports", {}).values():
        written = files.get(str(file))
        for part in written["parts"] if written else []:
            if tuple(part["container"]) == container and not part["listed"]:
                entries = part["entries"]
                found.update(entries if sealed else {i: digest(v) for i, v in entries.items()})
    return found

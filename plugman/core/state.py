"""What plugman has installed: one JSON record per scope (and project), under the state dir.

A record lists each installed plugin (source, pin, version, content hash, time, enabled) and
what plugman created in the scope's declaration file, so uninstall can undo exactly that.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any, Literal, get_args

from plugman.core.errors import PlugmanError
from plugman.core.paths import Paths

FORMAT = 1
# The scopes plugman writes, lowest precedence first, and every layer a resolved entry can come
# from, highest first (docs/claude-format.md#scopes-and-precedence). The one place they are spelled.
Scope = Literal["user", "project", "local"]
Layer = Literal["managed", "local", "project", "user", "plugin", "claude.ai"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
PRECEDENCE: tuple[Layer, ...] = ("managed", "local", "project", "user", "plugin", "claude.ai")


def as_scope(text: str) -> Scope | None:
    """`text` as a scope plugman writes (a word read from a state file), or None."""
    return next((scope for scope in SCOPES if scope == text), None)


def timestamp() -> str:
    """Now, as every state file records a time (UTC, to the second)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def record_path(paths: Paths, scope: Scope) -> Path:
    folder = paths.state_dir / "installed"
    if scope == "user":
        return folder / "user.json"
    key = hashlib.sha256(str(paths.project_dir).encode()).hexdigest()[:16]
    return folder / f"{scope}-{key}.json"


class Record:
    """The installed plugins of one scope."""

    def __init__(self, path: Path, scope: Scope, project: Path | None, data: dict[str, Any]):
        self.path = path
        self.scope = scope
        self.project = project
        self.data = data

    @classmethod
    def load(cls, paths: Paths, scope: Scope) -> Record:
        path = record_path(paths, scope)
        project = None if scope == "user" else paths.project_dir
        data = read_record(path) or {"format": FORMAT, "scope": scope, "plugins": {}, "owned": {}}
        if project is not None:
            data["project"] = str(project)
        return cls(path, scope, project, data)

    @property
    def plugins(self) -> dict[str, dict[str, Any]]:
        plugins: dict[str, dict[str, Any]] = self.data.setdefault("plugins", {})
        return plugins

    @property
    def owned(self) -> dict[str, Any]:
        """What plugman created in declaration files: {file: {"file": bool, "tables": {..}}}."""
        owned: dict[str, Any] = self.data.setdefault("owned", {})
        return owned

    def to_bytes(self) -> bytes | None:
        """The file's new content; None (delete it) when nothing is installed in the scope."""
        if not self.plugins and not self.owned:
            return None
        return (json.dumps(self.data, indent=2, sort_keys=True) + "\n").encode()


def read_state(path: Path, hint: str, newest: int = FORMAT) -> dict[str, Any] | None:
    """A JSON state file plugman wrote (None when absent); unreadable or newer than `newest`
    is an error."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise PlugmanError(f"unreadable: {exc}", hint=hint, where=str(path)) from None
    if not isinstance(data, dict) or not isinstance(data.get("format", 0), int):
        raise PlugmanError("not a plugman state file", hint=hint, where=str(path))
    if data.get("format", 0) > newest:
        raise PlugmanError(
            f"written by a newer plugman (format {data['format']})",
            hint="upgrade plugman",
            where=str(path),
        )
    return data


def read_record(path: Path) -> dict[str, Any] | None:
    return read_state(path, "run 'plugman doctor', or move the file away and reinstall")


def all_records(paths: Paths) -> list[dict[str, Any]]:
    """Every record of every scope and every project."""
    folder = paths.state_dir / "installed"
    if not folder.is_dir():
        return []
    return [read_record(path) or {} for path in sorted(folder.glob("*.json"))]


def referenced_hashes(paths: Paths) -> set[str]:
    """Every content hash any record (any scope, any project) refers to: the store's roots."""
    return {
        p["content_hash"] for data in all_records(paths) for p in data.get("plugins", {}).values()
    }


def installed_ids(paths: Paths) -> set[str]:
    """Every plugin id installed in any scope of any project."""
    return {plugin_id for data in all_records(paths) for plugin_id in data.get("plugins", {})}

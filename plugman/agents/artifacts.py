"""Whole files and folders plugman deploys into agents' folders (skills, commands, subagents),
and `<state>/deployments.json`, the record of them.

An artifact is a folder (a skill) or one file (a command, a subagent) with its bytes. Each file
is written through the command's transaction, and the record keeps every file's sha256, the
plugin it came from and the links (agent, scope, project) that want it: a folder several agents
read (`.agents/skills`) is written once and stays while one of them still wants it.

plugman never touches what it did not write: a path that exists and is not in the record is
taken (the caller namespaces or refuses), and an artifact the user has changed since is theirs
from then on (left as it is, forgotten, and said so). The record also keeps the folders
plugman created (`.agents/`, `.agents/skills/`, …): removing an artifact removes those it leaves
empty, and no folder plugman did not create.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, NamedTuple

from plugman.core.fs import read_bytes
from plugman.core.paths import Paths
from plugman.core.session import Session
from plugman.core.state import read_state

FORMAT = 1


class Artifact(NamedTuple):
    path: Path  # the folder or file it becomes
    files: dict[str, bytes]  # relative path → bytes; "" is the file at `path` itself
    owner: str  # the plugin it comes from


def record_path(paths: Paths) -> Path:
    return paths.state_dir / "deployments.json"


def load(paths: Paths) -> dict[str, Any]:
    data = read_state(record_path(paths), "move it away; plugman then deploys to agents afresh")
    return {"artifacts": {}, "folders": [], **(data or {})}


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _file(root: Path, rel: str) -> Path:
    return root / rel if rel else root


def _current(path: Path, files: dict[str, str]) -> dict[str, str | None]:
    """The digests of the recorded files as they are on disk now (None: gone)."""
    found: dict[str, str | None] = {}
    for rel in files:
        data = read_bytes(_file(path, rel))
        found[rel] = None if data is None else digest(data)
    return found


class Ledger:
    """The record, read once per refresh, and the changes one refresh makes to it."""

    def __init__(self, work: Session):
        self.work = work
        found = load(work.paths)
        self.items: dict[str, dict[str, Any]] = found["artifacts"]
        self.folders: set[str] = set(found["folders"])  # the folders plugman created
        self.before = self._body()
        self.notes: list[str] = []

    def _body(self) -> str:
        folders = sorted(f for f in self.folders if Path(f).is_dir())
        body = {"format": FORMAT, "artifacts": dict(sorted(self.items.items()))}
        return json.dumps({**body, "folders": folders} if folders else body, indent=2) + "\n"

    def taken(self, path: Path) -> bool:
        """Whether `path` holds something plugman did not write."""
        return (path.exists() or path.is_symlink()) and str(path) not in self.items

    def apply(self, wanted: list[tuple[str, Artifact]], managed: set[str]) -> None:
        """Make the artifacts of the links in `managed` what `wanted` says: (link, artifact)."""
        desired: dict[str, tuple[Artifact, set[str]]] = {}
        for link, artifact in wanted:
            key = str(artifact.path)
            if key in desired and desired[key][0].files != artifact.files:
                self.notes.append(f"{artifact.path}: two different artifacts; the first is kept")
            desired.setdefault(key, (artifact, set()))[1].add(link)
        for key, entry in list(self.items.items()):
            left = set(entry["links"]) - managed
            if key not in desired and set(entry["links"]) & managed:
                if left:
                    entry["links"] = sorted(left)
                else:
                    self._remove(Path(key), entry)
        for key, (artifact, links) in desired.items():
            known = self.items.get(key)
            if known is None:
                if self.taken(artifact.path):
                    self.notes.append(f"{artifact.path} exists and is not plugman's; left as it is")
                    continue
                self._write(artifact, {})
            elif self._changed(artifact.path, known):
                continue
            elif {rel: digest(b) for rel, b in artifact.files.items()} != _current(
                artifact.path, known["files"]
            ):
                self._write(artifact, known["files"])
            others = set(self.items[key]["links"]) - managed if key in self.items else set()
            self.items[key]["links"] = sorted(others | links)

    def save(self) -> None:
        body = self._body()
        if body != self.before:
            data = body.encode() if self.items or '"folders"' in body else None
            self.work.tx.write(record_path(self.work.paths), data)

    def _changed(self, path: Path, entry: dict[str, Any]) -> bool:
        """True (and forgotten, with a note) when the user changed what plugman wrote."""
        now = _current(path, entry["files"])
        if now == entry["files"] or all(v is None for v in now.values()):  # as written, or gone
            return False
        del self.items[str(path)]
        self.notes.append(
            f"{path} was changed since plugman wrote it; it is yours now and left as it is"
        )
        return True

    def _write(self, artifact: Artifact, old: dict[str, str]) -> None:
        tx = self.work.tx
        for rel in sorted(set(old) - set(artifact.files)):
            tx.write(_file(artifact.path, rel), None, prune_to=self._stop(artifact.path))
        for rel, data in sorted(artifact.files.items()):
            file = _file(artifact.path, rel)
            missing = file.parent
            while not missing.exists():
                self.folders.add(str(missing))
                missing = missing.parent
            tx.write(file, data)
        self.items[str(artifact.path)] = {
            "files": {rel: digest(data) for rel, data in artifact.files.items()},
            "owner": artifact.owner,
            "links": [],
        }

    def _stop(self, file: Path) -> Path:
        """Where pruning after deleting `file` stops: the first folder above it that plugman
        did not create (those it did go when empty)."""
        stop = file.parent
        while str(stop) in self.folders:
            stop = stop.parent
        return stop

    def _remove(self, path: Path, entry: dict[str, Any]) -> None:
        del self.items[str(path)]
        now = _current(path, entry["files"])
        if all(v is None for v in now.values()):
            return  # gone already
        if now != entry["files"]:
            self.notes.append(f"{path} was changed since plugman wrote it; left as it is")
            return
        for rel in sorted(entry["files"]):
            self.work.tx.write(_file(path, rel), None, prune_to=self._stop(_file(path, rel)))

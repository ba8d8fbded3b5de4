"""Whole files and folders plugman deploys into agents' folders (skills, commands, subagents),
and `<state>/deployments.json`, the record of them.

An artifact is a folder (a skill) or one file (a command, a subagent) with its bytes. Each file
is written through the command's transaction, and the record keeps every file's sha256, the
plugin it came from and the links (agent, scope, project) that want it: a folder several agents
read (`.agents/skills`) is written once and stays while one of them still wants it.

The copies inside a git clone are listed in a plugman block of its `.git/info/exclude`
(`plugman.agents.git_exclude`), kept in step with the record.

plugman never touches what it did not write: a path that exists and is not in the record is
taken (the caller namespaces or refuses), and an artifact the user has changed since is theirs
from then on (left as it is, forgotten, and said so). Removing an artifact removes the folders
plugman created that it leaves empty (`plugman.core.folders`), and no other.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import NamedTuple

from plugman.agents import git_exclude
from plugman.core.errors import PlugmanError
from plugman.core.folders import Folders
from plugman.core.fs import read_bytes
from plugman.core.paths import Paths
from plugman.core.session import Session
from plugman.core.state import read_state

FORMAT = 1
# What a deployment says, after the artifact's path, of one it leaves to the user: kept as a
# standing warning (`agents.warnings`), which `plugman audit` reads back.
CHANGED_NOTE = " was changed since plugman wrote it; it is yours now and left as it is"
TAKEN_NOTE = " exists and is not plugman's; left as it is"


class Artifact(NamedTuple):
    path: Path  # the folder or file it becomes
    files: dict[str, bytes]  # relative path → bytes; "" is the file at `path` itself
    owner: str  # the plugin it comes from
    kind: str  # skills | commands | agents | plugin (a whole plugin, for Claude Code)
    link: Path | None = None  # a symbolic link to this instead of files


class Deployed(NamedTuple):
    """An artifact as the record holds it (its keys in this order; `owner` and `kind` left out
    when an older record lacks them)."""

    files: dict[str, str]  # relative path → its digest ("link:<target>" for a link)
    owner: str | None  # the plugin it comes from
    kind: str | None  # skills | commands | agents | plugin
    links: tuple[str, ...]  # the links (agent, scope, project) that want it

    def to_json(self) -> dict[str, object]:
        found = {key: value for key, value in self._asdict().items() if value is not None}
        return found | {"links": list(self.links)}

    @classmethod
    def from_json(cls, data: object) -> Deployed | None:
        """The entry as `to_json` wrote it; None for any other shape."""
        if not isinstance(data, dict):
            return None
        files, owner, kind, links = (data.get(key) for key in cls._fields)
        if not (
            isinstance(files, dict)
            and all(isinstance(v, str) for v in files.values())
            and isinstance(links, list)
            and all(isinstance(link, str) for link in links)
            and isinstance(owner, (str, type(None)))
            and isinstance(kind, (str, type(None)))
        ):
            return None
        return cls(files, owner, kind, tuple(links))


HINT = "move it away; plugman then deploys to agents afresh"


def record_path(paths: Paths) -> Path:
    return paths.state_dir / "deployments.json"


def load(paths: Paths) -> dict[str, Deployed]:
    """The record's artifacts by path; a value of the wrong shape is an error naming it."""
    data = read_state(record_path(paths), HINT) or {}
    table = data.get("artifacts", {})
    found = (
        {str(key): Deployed.from_json(value) for key, value in table.items()}
        if isinstance(table, dict)
        else None
    )
    if found is None or any(entry is None for entry in found.values()):
        raise PlugmanError(
            "not a plugman state file: an artifact entry has the wrong type",
            hint=HINT,
            where=str(record_path(paths)),
        )
    return {key: entry for key, entry in found.items() if entry is not None}


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _file(root: Path, rel: str) -> Path:
    return root / rel if rel else root


def _digests(artifact: Artifact) -> dict[str, str]:
    if artifact.link is not None:
        return {"": f"link:{artifact.link}"}
    return {rel: digest(data) for rel, data in artifact.files.items()}


def _current(path: Path, files: dict[str, str]) -> dict[str, str | None]:
    """The digests of the recorded files as they are on disk now (None: gone)."""
    if any(d.startswith("link:") for d in files.values()):
        if path.is_symlink():
            return {"": f"link:{path.readlink()}"}
        return {"": "replaced" if path.exists() else None}
    found: dict[str, str | None] = {}
    for rel in files:
        data = read_bytes(_file(path, rel))
        found[rel] = None if data is None else digest(data)
    return found


def drift(path: Path, entry: Deployed) -> str | None:
    """How a recorded artifact differs from what plugman wrote: `gone`, `changed`, or None."""
    now = _current(path, entry.files)
    if now == entry.files:
        return None
    return "gone" if all(v is None for v in now.values()) else "changed"


class Ledger:
    """The record, read once per refresh, and the changes one refresh makes to it."""

    def __init__(self, work: Session, folders: Folders):
        self.work = work
        self.folders = folders
        self.items = load(work.paths)
        self.before = self._body()
        self.notes: list[str] = []
        # Files plugman edits that hold what only this machine means (Claude Code's
        # `.claude/settings.local.json` naming a marketplace of this machine's project path):
        # kept out of git with the copies, for as long as this refresh edits them.
        self.local: set[str] = set()

    def _body(self) -> bytes | None:
        if not self.items:
            return None
        items = sorted(self.items.items())
        body = {"format": FORMAT, "artifacts": {key: entry.to_json() for key, entry in items}}
        return (json.dumps(body, indent=2) + "\n").encode()

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
            left = set(entry.links) - managed
            if key not in desired and set(entry.links) & managed:
                if left:
                    self.items[key] = entry._replace(links=tuple(sorted(left)))
                else:
                    self._remove(Path(key), entry)
        for key, (artifact, links) in desired.items():
            known = self.items.get(key)
            if known is None:
                if self.taken(artifact.path):
                    self.notes.append(f"{artifact.path}{TAKEN_NOTE}")
                    continue
                self._write(artifact, {})
            elif self._changed(artifact.path, known):
                continue
            elif _digests(artifact) != _current(artifact.path, known.files):
                self._write(artifact, known.files)
            others = set(self.items[key].links) - managed if key in self.items else set()
            self.items[key] = self.items[key]._replace(links=tuple(sorted(others | links)))

    def save(self) -> None:
        """Write the record, and the clone's exclude block listing the copies in it and the
        machine-local files edited (`plugman.agents.git_exclude`), in the same transaction."""
        body = self._body()
        if body != self.before:
            self.work.tx.write(record_path(self.work.paths), body)
        excluded = git_exclude.wanted(self.work.paths.project_dir, {*self.items, *self.local})
        if excluded is not None:
            self.work.tx.write(*excluded)

    def _changed(self, path: Path, entry: Deployed) -> bool:
        """True (and forgotten, with a note) when the user changed what plugman wrote."""
        now = _current(path, entry.files)
        if now == entry.files or all(v is None for v in now.values()):  # as written, or gone
            return False
        del self.items[str(path)]
        self.notes.append(f"{path}{CHANGED_NOTE}")
        return True

    def _write(self, artifact: Artifact, old: dict[str, str]) -> None:
        tx = self.work.tx
        if artifact.link is not None:
            self.folders.note(artifact.path)
            tx.link(artifact.path, artifact.link)
            self._record(artifact)
            return
        for rel in sorted(set(old) - set(artifact.files)):
            file = _file(artifact.path, rel)
            tx.write(file, None, prune_to=self.folders.stop(file))
        for rel, data in sorted(artifact.files.items()):
            file = _file(artifact.path, rel)
            self.folders.note(file)
            tx.write(file, data)
        self._record(artifact)

    def _record(self, artifact: Artifact) -> None:
        self.items[str(artifact.path)] = Deployed(
            _digests(artifact), artifact.owner, artifact.kind, ()
        )

    def _remove(self, path: Path, entry: Deployed) -> None:
        del self.items[str(path)]
        now = _current(path, entry.files)
        if all(v is None for v in now.values()):
            return  # gone already
        if now != entry.files:
            self.notes.append(f"{path} was changed since plugman wrote it; left as it is")
            return
        if path.is_symlink():
            self.work.tx.link(path, None, prune_to=self.folders.stop(path))
            return
        for rel in sorted(entry.files):
            file = _file(path, rel)
            self.work.tx.write(file, None, prune_to=self.folders.stop(file))

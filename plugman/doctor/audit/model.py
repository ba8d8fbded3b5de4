"""The values of `plugman audit`: what a check is `Given`, the `Finding`s it returns, the
`Check` row of the table and the `Audit` result; and `Lock`, plugman.lock's pins with the line
each is written on (where a finding about a project plugin points)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

from plugman.config import origins
from plugman.core.paths import Paths
from plugman.core.state import Scope, record_path
from plugman.plugins.supply_chain import lockfile
from plugman.plugins.supply_chain.lockfile import LockEntry


class Finding(NamedTuple):
    check: str  # the `Check.id` that found it
    message: str  # what is wrong, naming what (plugin, agent, server) and where
    fix: str  # what to run (or do) to fix it
    file: str  # the file it is about (absolute)
    line: int | None = None


class Given(NamedTuple):
    paths: Paths
    env: Mapping[str, str]
    scopes: tuple[Scope, ...]  # the scopes audited


class Check(NamedTuple):
    id: str
    title: str  # what it checks, in a few words
    run: Callable[[Given], list[Finding]]


class Audit(NamedTuple):
    project: Path
    scopes: tuple[Scope, ...]
    checks: tuple[Check, ...]
    findings: list[Finding]


class Lock(NamedTuple):
    """plugman.lock's pins (when the project scope is audited) and where each is written."""

    file: str
    pins: dict[str, LockEntry]  # id → pin
    lines: dict[str, int]  # id → the line its entry starts on

    @classmethod
    def read(cls, given: Given) -> Lock:
        file = given.paths.project_lock
        linked = origins.link_on_path(given.paths.project_dir, file) is not None
        if "project" not in given.scopes or linked or not file.is_file():
            return cls(str(file), {}, {})  # a linked lock is not read (plugman.config.origins)
        pins = lockfile.by_id(lockfile.read(file))
        lines = {key: pin.line for key, pin in pins.items() if pin.line is not None}
        return cls(str(file), pins, lines)

    def at(self, given: Given, plugin_id: str, scope: Scope) -> tuple[str, int | None]:
        """Where a plugin of `scope` is pinned: its lock line, else its install record."""
        if scope == "project" and plugin_id in self.lines:
            return self.file, self.lines[plugin_id]
        return str(record_path(given.paths, scope)), None


def short(content_hash: object) -> str:
    """A content hash's first 12 hex digits, as findings name it."""
    return str(content_hash).removeprefix("sha256:")[:12]

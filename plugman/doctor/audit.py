"""`plugman audit`: an offline gate for CI. It checks that what a project runs is what it pins,
and says each finding with the command that fixes it; it never fetches, installs or writes.

The checks are data: one `Check` row each in `CHECKS` (its id, which is the SARIF rule id, what
it checks, and the function that does it, which takes the `Given` and returns `Finding`s):

- `store`: every plugin an install record or plugman.lock pins is in the store, and its tree
  still hashes to the pinned content hash (a tree altered or deleted on disk, a lock pin not
  installed or installed with other content);
- `drift`: the agent files plugman deployed (servers and hooks written into agents' files,
  `config.export_record`; skills, commands, subagents and Claude Code plugin links,
  `agents.artifacts`) are as plugman wrote them, told by the same detectors `plugman doctor`
  uses (`doctor.differences`, `artifacts.drift`), one finding per file;
- `hidden-text`: no installed plugin or lock entry was let in with hidden text
  (`hidden_text = "allowed"`, from `install --allow-hidden-text`);
- `unpinned-server`: every MCP server, a plugin's or the user's own, as `config resolve` reads
  them, launches a downloaded package at one exact version (`doctor.audit_pins`).

Every finding is an error (the command exits 1): a CI gate that lets a finding through unless
someone reads the log gates nothing. A check that cannot read a file it needs (a broken state
file) says so as a finding of its own check, with the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

from plugman.agents import artifacts, links
from plugman.config import export_record
from plugman.config.contribute import missing_copy
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.fs import read_bytes, tree_hash
from plugman.core.paths import Paths
from plugman.core.state import SCOPES, InstallRecord, Scope, as_scope, record_path
from plugman.core.store import Store
from plugman.doctor import audit_pins, differences
from plugman.plugins import lockfile

PROJECT_FILES = ("plugman.toml", "plugman.lock", ".mcp.json")  # what makes a project to audit


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


def audit(paths: Paths, env: Mapping[str, str], scope: Scope | None = None) -> Audit:
    """Every check over `scope` (every scope when None); a usage error without a project
    (unless only the user scope is asked for)."""
    if scope != "user" and not any((paths.project_dir / f).exists() for f in PROJECT_FILES):
        raise UsageError(
            f"no project to audit in {paths.project_dir}: it has no plugman.toml, plugman.lock "
            "or .mcp.json",
            hint="run it in the project's folder or pass --project PATH (to audit only your "
            "user scope: plugman audit --scope user)",
        )
    given = Given(paths, env, (scope,) if scope else SCOPES)
    found: list[Finding] = []
    for check in CHECKS:
        try:
            found += check.run(given)
        except PlugmanError as exc:  # a broken file the check needs: the check did not run
            where = exc.where or str(paths.state_dir)
            fix = exc.hint or "fix or move away the file, then run plugman audit again"
            found.append(Finding(check.id, f"could not check: {exc.message}", fix, where))
    return Audit(paths.project_dir, given.scopes, CHECKS, found)


class _Lock(NamedTuple):
    """plugman.lock's pins (when the project scope is audited) and where each is written."""

    file: str
    pins: dict[str, dict[str, object]]  # id → pin
    lines: dict[str, int]  # id → the line of its `id = "…"`

    @classmethod
    def read(cls, given: Given) -> _Lock:
        file = given.paths.project_lock
        if "project" not in given.scopes or not file.is_file():
            return cls(str(file), {}, {})
        pins = {str(p["id"]): p for p in lockfile.read(file)}
        text = (read_bytes(file) or b"").decode("utf-8", "replace").splitlines()
        lines = {
            m.group(1): number
            for number, line in enumerate(text, 1)
            if (m := re.match(r'\s*id\s*=\s*"([^"]+)"', line))
        }
        return cls(str(file), pins, lines)

    def at(self, given: Given, plugin_id: str, scope: Scope) -> tuple[str, int | None]:
        """Where a plugin of `scope` is pinned: its lock line, else its install record."""
        if scope == "project" and plugin_id in self.lines:
            return self.file, self.lines[plugin_id]
        return str(record_path(given.paths, scope)), None


def _short(content_hash: object) -> str:
    return str(content_hash).removeprefix("sha256:")[:12]


def store(given: Given) -> list[Finding]:
    """Every pinned tree in the store, hashing to its pin."""
    trees = Store(given.paths.store_dir)
    lock = _Lock.read(given)
    states: dict[str, str | None] = {}

    def state(content_hash: str) -> str | None:
        if content_hash not in states:
            folder = trees.path(content_hash)
            states[content_hash] = (
                "missing"
                if not folder.is_dir()
                else ("modified" if tree_hash(folder) != content_hash else None)
            )
        return states[content_hash]

    found = []
    installed: dict[str, str] = {}
    for scope in given.scopes:
        for plugin_id, entry in InstallRecord.load(given.paths, scope).plugins.items():
            if scope == "project":
                installed[plugin_id] = entry.content_hash
            how = state(entry.content_hash)
            if how:
                message, fix = missing_copy(plugin_id, scope, how)
                where = trees.path(entry.content_hash)
                file, line = lock.at(given, plugin_id, scope)
                found.append(Finding("store", f"{message}: {where}", fix, file, line))
    for plugin_id, pin in lock.pins.items():
        locked = str(pin.get("content_hash"))
        line = lock.lines.get(plugin_id)
        if plugin_id not in installed:
            message = f"plugman.lock pins {plugin_id} ({_short(locked)}), which is not installed"
            fix = "install what the lock pins: plugman sync --frozen"
        elif installed[plugin_id] != locked:
            message = (
                f"{plugin_id} is installed with other content ({_short(installed[plugin_id])}) "
                f"than plugman.lock pins ({_short(locked)})"
            )
            fix = "install what the lock pins: plugman sync --frozen (or pin what is installed: "
            fix += "plugman lock)"
        else:
            continue
        found.append(Finding("store", message, fix, lock.file, line))
    return found


def drift(given: Given) -> list[Finding]:
    """The agent files plugman deployed, each as plugman wrote it."""
    paths = given.paths
    linked = {(link.agent, link.scope) for link in links.every(paths)}
    found = []
    for key, files in export_record.load(paths).items():
        read = export_record.parse(key)
        scope = as_scope(read.scope)
        if scope is None or not _here(given, scope, read.project):
            continue
        again = f"plugman agents add {read.agent} --scope {scope}"
        if read.target is not None and (read.agent, scope) not in linked:
            again = f"plugman export --target {read.target} --scope {scope} --write"
        for file, written in sorted(files.items()):
            changed = differences(paths, Path(file), written)
            if not changed:
                continue
            said = ", ".join(f"{d.entry} {d.state}" if d.entry else d.state for d in changed)
            edited = any(d.state == "edited" for d in changed)
            fix = f"{'delete the entries edited by hand, then ' if edited else ''}run: {again}"
            message = f"{read.agent}'s file ({scope} scope) differs from what plugman wrote: {said}"
            found.append(Finding("drift", message, fix, file))
    for path, entry in sorted(artifacts.load(paths).items()):
        how = artifacts.drift(Path(path), entry)
        mine = [export_record.parse(link) for link in entry["links"]]
        mine = [k for k in mine if (s := as_scope(k.scope)) and _here(given, s, k.project)]
        if how is None or not mine:
            continue
        agents = ", ".join(sorted({k.agent for k in mine}))
        where, agent = mine[0].scope, mine[0].agent
        what = _KINDS.get(entry.get("kind", ""), "file")
        message = f"{agents}'s {what} {how} since plugman deployed it ({where} scope)"
        again = f"run: plugman agents add {agent} --scope {where}"
        fix = f"move it away (it is yours now), then {again}" if how == "changed" else again
        found.append(Finding("drift", message, fix, _changed_file(Path(path), entry["files"])))
    return found


_KINDS = {"skills": "skill", "commands": "command", "agents": "subagent", "plugin": "plugin link"}


def _changed_file(path: Path, files: dict[str, str]) -> str:
    """The first file of a deployed artifact that is not as plugman wrote it (the artifact
    itself when it is one file, a link or gone)."""
    for rel, wanted in sorted(files.items()):
        data = read_bytes(path / rel) if rel and not wanted.startswith("link:") else None
        if data is not None and artifacts.digest(data) != wanted:
            return str(path / rel)
    return str(path)


def _here(given: Given, scope: Scope, project: str) -> bool:
    """Whether a record key of `scope` (and `project`) is one this audit covers."""
    return scope in given.scopes and (scope == "user" or project == str(given.paths.project_dir))


def hidden_text(given: Given) -> list[Finding]:
    """No plugin let in with hidden text (`install --allow-hidden-text`)."""
    lock = _Lock.read(given)
    trees = Store(given.paths.store_dir)
    allowed: dict[tuple[Scope, str], str] = {}  # (scope, plugin id) → its content hash
    for scope in given.scopes:
        for plugin_id, entry in InstallRecord.load(given.paths, scope).plugins.items():
            if entry.hidden_text == "allowed":
                allowed[scope, plugin_id] = entry.content_hash
    for plugin_id, pin in lock.pins.items():
        if pin.get("hidden_text") == "allowed":
            allowed.setdefault(("project", plugin_id), str(pin.get("content_hash")))
    found = []
    for (scope, plugin_id), content_hash in allowed.items():
        name = plugin_id.partition("@")[0]
        message = (
            f"{plugin_id} ({scope} scope) was let in with hidden text (install "
            "--allow-hidden-text): characters a reviewer does not see"
        )
        fix = (
            f"see where: plugman validate {trees.path(content_hash)}; then install content "
            f"without it (plugman update {name} --scope {scope}) or remove it (plugman "
            f"uninstall {name} --scope {scope})"
        )
        found.append(Finding("hidden-text", message, fix, *lock.at(given, plugin_id, scope)))
    return found


def unpinned_servers(given: Given) -> list[Finding]:
    """Every MCP server launched at one exact version of what it downloads."""
    from plugman.config.resolution import resolve

    only = given.scopes[0] if len(given.scopes) == 1 else None
    resolution = resolve(given.paths, given.env, references=True, only=only)
    scope_of = {plugin.id: plugin.scope for plugin in resolution.plugins}
    lock = _Lock.read(given)
    found = []
    managed = resolution.layers.managed if only is None else None
    for server in [*(managed or ()), *resolution.layers.servers]:
        origin = server.origin
        scope = scope_of.get(origin.plugin) if origin.plugin else as_scope(origin.scope)
        if (scope is None and origin.scope != "managed") or (scope and scope not in given.scopes):
            continue
        launch = audit_pins.unpinned(server.entry)
        if launch is None:
            continue
        pinned = launch.launch.replace(launch.package, launch.pin, 1)
        text = f"launches `{launch.launch}` without a pinned version (each start runs "
        text += f"whatever {launch.package} is that day)"
        if origin.plugin and scope:
            name = origin.plugin.partition("@")[0]
            message = f"MCP server {server.name!r} of plugin {origin.plugin} ({scope} scope) {text}"
            fix = (
                f"the plugin must pin it ({launch.pin}): once its source does, run: plugman "
                f"update {name} --scope {scope} (installed from a folder or URL: install it "
                f"again), or disable it: plugman disable {name} --scope {scope}"
            )
            file, line = lock.at(given, origin.plugin, scope)
        else:
            whose = f"{scope} scope" if scope else "managed by your administrator"
            message = f"MCP server {server.name!r} ({whose}) {text}"
            fix = f"pin it where it is declared ({origin.file}): `{pinned}`"
            file, line = origin.file, _line_of(Path(origin.file), server.name)
        found.append(Finding("unpinned-server", message, fix, file, line))
    return found


def _line_of(file: Path, name: str) -> int | None:
    """The line declaring server `name` in a JSON or TOML file, when one plainly does."""
    text = (read_bytes(file) or b"").decode("utf-8", "replace").splitlines()
    keys = (f'"{name}"', f"{name} =", f".{name}]", f'."{name}"]')
    return next((n for n, line in enumerate(text, 1) if any(k in line for k in keys)), None)


# The checks, in the order they run and are reported. The signature check (issue 26 point 1:
# every signed plugin verifies and its signer matches the lock's `signer`) is one more row here:
# Check("signature", "signatures verify and match the lock's signers", signatures).
CHECKS: tuple[Check, ...] = (
    Check("store", "the store holds every pinned plugin tree, unchanged", store),
    Check("drift", "the agent files plugman deployed are as it wrote them", drift),
    Check("hidden-text", "no plugin was let in with hidden text", hidden_text),
    Check("unpinned-server", "MCP servers launch pinned package versions", unpinned_servers),
)

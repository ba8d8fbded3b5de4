"""`plugman doctor`: what is wrong with this installation, and what to do about each problem.

It reads; it never repairs (a journal a killed command left is rolled back before any command
reads, doctor included: `core.transaction.hot`). It checks the journal (a command changing
things now), every state file, the configuration of every scope (plugman.toml files, .mcp.json,
managed settings), every known marketplace (its folder gone, its catalog unreadable), every
install record and the store copy it points to, the project's entries pending approval, and
every agent file plugman exported to (missing, unreadable, edited by hand, or out of date).
`doctor.agents` adds the agent side: entries and links naming store folders that are gone, and
(`diagnose`, with `doctor.agents.said`) what the linked agents' own CLIs say they failed to load.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from plugman.agents import artifacts, export_record, handedits, readback, warnings
from plugman.agents.export import export
from plugman.agents.export_record import Sealed, current
from plugman.agents.readback import Report
from plugman.config import trust
from plugman.config.contribute import missing_copy
from plugman.config.resolution import resolve
from plugman.core import secrets
from plugman.core.errors import PlugmanError
from plugman.core.fs import tree_hash
from plugman.core.paths import Paths
from plugman.core.state import FORMAT, SCOPES, InstallRecord, Scope, as_scope, read_state
from plugman.core.store import Store
from plugman.doctor import agents
from plugman.doctor.problem import ERROR, WARNING, Problem
from plugman.manifest import edit
from plugman.manifest.diagnostics import Diagnostic
from plugman.plugins.catalog import marketplaces, registry

if TYPE_CHECKING:
    from plugman.config.trust import Entry


class Diagnosis(NamedTuple):
    problems: list[Problem]
    agents: list[Report]  # what each agent's CLI was asked and said; [] when not asked


def diagnose(paths: Paths, env: Mapping[str, str], ask: bool = True) -> Diagnosis:
    """`plugman doctor`: every check, and with `ask` what the linked agents say they loaded."""
    try:
        reports = readback.ask(paths, env) if ask else []
    except PlugmanError:  # a broken record it needs: `check` reports that file, with its place
        reports = []
    own = agents.claude_installs(paths, env)
    found = check(paths, env) + agents.waiting(paths, env) + agents.said(reports, own)
    return Diagnosis(found, reports)


def check(paths: Paths, env: Mapping[str, str]) -> list[Problem]:
    found = _journal(paths) + _state_files(paths)
    probes = (
        _config,
        _marketplaces,
        _installed,
        _pending,
        _exports,
        _deployed,
        _secrets,
        _gone,
        _two_copies,
        _shadowed,
    )
    for probe in probes:
        try:
            found += probe(paths, env)
        except PlugmanError as exc:  # a broken file the probe needs: said once, with its place
            found.append(Problem(ERROR, exc.where or "plugman", exc.message, exc.hint or ""))
    return _once(found)


def _deployed(paths: Paths, env: Mapping[str, str]) -> list[Problem]:
    return agents.deployed(paths)


def _shadowed(paths: Paths, env: Mapping[str, str]) -> list[Problem]:
    """An installed extension's agent never used: a built-in's (or an earlier extension's)
    name hides it (`extensions.shadowed`)."""
    from plugman import extensions  # lazy: loads the installed extensions, only this check

    return [
        Problem(WARNING, f"extension {s.extension}", s.message, s.hint)
        for s in extensions.shadowed()
    ]


def _two_copies(paths: Paths, env: Mapping[str, str]) -> list[Problem]:
    return agents.two_copies(paths, env)


def _gone(paths: Paths, env: Mapping[str, str]) -> list[Problem]:
    return agents.gone(paths, env)


def _secrets(paths: Paths, env: Mapping[str, str]) -> list[Problem]:
    """The secrets file (sensitive plugin options, tokens) readable by others."""
    loose = secrets.loose(paths)
    where = str(secrets.file_path(paths))
    return [Problem(ERROR, where, loose, f"run: chmod 600 {where}")] if loose else []


def _once(found: list[Problem]) -> list[Problem]:
    """Each problem once: a broken file is reported by the check for it, not again by every
    probe that tripped over it."""
    first: dict[tuple[str, str], Problem] = {}
    for problem in found:
        first.setdefault((problem.where, problem.message), problem)
    return list(first.values())


def _state_files(paths: Paths) -> list[Problem]:
    """Every state file plugman keeps, read as the commands read it."""

    installed = "move it away (plugman forgets what it installed there), then reinstall"
    files = [(p, installed, FORMAT) for p in sorted((paths.state_dir / "installed").glob("*.json"))]
    files += [
        (
            registry.registry_path(paths),
            "move it away, then add your marketplaces again",
            FORMAT,
        ),
        (trust.trust_path(paths), "move it away, then approve the project's entries again", FORMAT),
        (
            export_record.path(paths),
            "move it away (plugman forgets what it exported; take those entries out of the "
            "agent files by hand), then export again",
            export_record.FORMAT,
        ),
        (
            warnings.path(paths),
            "move it away (plugman tells the agents' warnings again on the next change)",
            warnings.FORMAT,
        ),
        (
            artifacts.record_path(paths),
            "move it away (plugman forgets the files it deployed; remove them by hand), then "
            "run: plugman agents add AGENT to deploy again",
            artifacts.FORMAT,
        ),
    ]
    found = []
    for file, hint, newest in files:
        try:
            read_state(file, hint, newest)
        except PlugmanError as exc:
            found.append(Problem(ERROR, exc.where or str(file), exc.message, exc.hint or hint))
    return found


def _config(paths: Paths, env: Mapping[str, str]) -> list[Problem]:
    """The configuration every scope is read from (plugman.toml files, .mcp.json, managed
    settings, installed plugins): what config resolve would drop or warn about."""
    return [
        Problem(
            d.severity,
            _location(d),
            f"{d.path}: {d.message}" if d.path else d.message,
            d.hint or "fix the file",
        )
        for d in resolve(paths, env).diagnostics
    ]


def _location(d: Diagnostic) -> str:
    return d.file if d.line is None else f"{d.file}:{d.line}:{d.column or 1}"


def _journal(paths: Paths) -> list[Problem]:
    if not paths.journal_dir.is_dir() or not any(paths.journal_dir.iterdir()):
        return []
    return [
        Problem(
            ERROR,
            str(paths.journal_dir),
            "a command is changing things now (its journal is open)",
            "wait for it to finish, then run plugman doctor again",
        )
    ]


def _marketplaces(paths: Paths, env: Mapping[str, str]) -> list[Problem]:
    """Each known marketplace whose catalog cannot be read (its folder moved, a broken
    marketplace.json): its plugins can be neither updated nor installed again."""
    try:
        known = registry.known(paths)
    except PlugmanError:  # a broken config file: `_config` reports it, with its place
        return []
    found = []
    for market in known.values():
        try:
            marketplaces.read(market)
        except PlugmanError as exc:
            found.append(Problem(ERROR, exc.where or str(market.root), exc.message, exc.hint or ""))
    return found


def _installed(paths: Paths, env: Mapping[str, str]) -> list[Problem]:
    store = Store(paths.store_dir)
    found = []
    for scope in SCOPES:
        record = InstallRecord.load(paths, scope)
        for plugin_id, entry in record.plugins.items():
            copy = store.path(entry.content_hash)
            state = "missing" if not copy.is_dir() else None
            if state is None and tree_hash(copy) != entry.content_hash:
                state = "modified"
            if state:
                message, hint = missing_copy(plugin_id, scope, state)
                found.append(Problem(ERROR, str(copy), message, hint))
    return found


def _pending(paths: Paths, env: Mapping[str, str]) -> list[Problem]:
    return [
        Problem(
            WARNING,
            row.entry.origin.file,
            f"{_whose(row.entry)} {row.entry.kind} {row.entry.name!r} is pending approval, "
            "so it is not used",
            "review it (plugman trust list), then: plugman trust approve "
            f"{row.entry.origin.plugin or row.entry.name}",
        )
        for row in trust.listing(paths)
        if row.state == "pending"
    ]


def _whose(entry: Entry) -> str:
    return f"plugin {entry.origin.plugin}'s" if entry.origin.plugin else "project"


def _exports(paths: Paths, env: Mapping[str, str]) -> list[Problem]:
    found = []
    for key, files in export_record.load(paths).items():
        read = export_record.parse(key)
        target, scope = read.target, as_scope(read.scope)
        command = f"plugman export --target {target} --scope {read.scope}"
        again, forget = f"{command} --write", f"{command} --remove"
        if target is None:  # Claude's native plugins: written by a claude-code link's deployment
            again, forget = f"plugman agents add {read.agent} --scope {read.scope}", ""
        here = [
            p for f, w in files.items() for p in _exported_file(paths, Path(f), w, again, forget)
        ]
        found += here
        if target is None or scope is None or here:
            continue
        if scope == "user" or key == export_record.key(target, scope, paths):
            found += _stale(paths, env, target, scope, command)
    return found


def same_content(file: Path, before: str | None, after: str | None) -> bool:
    """Whether an export's new text for `file` holds what the file holds now, read as its format
    reads it (tables reordered, blank lines: the same settings; an agent reads no layout)."""
    if before is None or after is None or before == after:
        return before == after
    fmt = {".toml": "toml", ".yaml": "yaml", ".yml": "yaml"}.get(file.suffix, "json")
    try:
        load = edit.module(fmt).load
        return bool(_plain(load(before, str(file))) == _plain(load(after, str(file))))
    except (PlugmanError, ValueError):
        return False


def _plain(value: object) -> object:
    """A parsed document as plain values (tomlkit's items compare by layout too)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


class Difference(NamedTuple):
    """How one of plugman's entries in an agent file differs from what it wrote."""

    entry: str  # plugman's id of the entry (an edited list item: with where it is now); ""
    state: str  # removed | edited (an entry); gone | unreadable: … (the whole file)


def differences(paths: Paths, file: Path, written: Sealed) -> list[Difference]:
    """plugman's share of `file` against what it wrote (`plugman doctor`, `plugman audit`)."""
    if not file.exists():
        return [Difference("", "gone")]
    try:
        data = edit.module(written.fmt).load(file.read_text(encoding="utf-8"), str(file))
    except (PlugmanError, UnicodeDecodeError) as exc:
        return [Difference("", f"unreadable: {exc}")]

    edited = handedits.edited(paths, str(file), written)  # a list item: found by what it names
    found = []
    for part in written.parts:
        container = edit.at(data, part.container)
        for entry_id, wanted in part.entries.items():
            now = _now(container, entry_id, wanted, part.listed)
            if now == "missing" and entry_id in edited:
                now, entry_id = "edited", f"{entry_id} ({edited[entry_id]})"
            if now != "ok":
                found.append(Difference(entry_id, "removed" if now == "missing" else now))
    return found


def _exported_file(
    paths: Paths, file: Path, written: Sealed, again: str, forget: str
) -> list[Problem]:
    found = []
    for entry_id, state in differences(paths, file, written):
        if state == "gone":
            found.append(
                Problem(
                    ERROR,
                    str(file),
                    "plugman exported here, but the file is gone",
                    f"write it again: {again}" + (f" (or forget it: {forget})" if forget else ""),
                )
            )
        elif state.startswith("unreadable"):
            found.append(Problem(ERROR, str(file), state, "fix the file by hand"))
        elif state == "removed":
            found.append(
                Problem(
                    ERROR, str(file), f"{entry_id!r} was removed by hand", f"restore it: {again}"
                )
            )
        else:
            found.append(
                Problem(
                    WARNING,
                    str(file),
                    f"{entry_id!r} was edited by hand; plugman will leave it as it is",
                    f"it is yours now (uninstalling its plugin asks first); to have plugman's "
                    f"again, delete it, then: {again}",
                )
            )
    return found


def _now(container: object, entry_id: str, wanted: str, listed: bool) -> str:
    """ok, missing or edited: the entry against the digest of its value as written."""
    if current(container, entry_id, wanted, listed) is not None:
        return "ok"
    if listed or not isinstance(container, dict) or entry_id not in container:
        return "missing"
    return "edited"


def _stale(
    paths: Paths, env: Mapping[str, str], target: str, scope: Scope, command: str
) -> list[Problem]:
    outcome = export(paths, env, target, scope, remove=False, dry_run=True)
    changed = [c for c in outcome.changes if not same_content(c.path, c.before, c.after)]
    if not changed:
        return []
    files = ", ".join(str(c.path) for c in changed)
    return [
        Problem(
            WARNING,
            files,
            "out of date with the resolved config",
            f"see what changed: {command} --dry-run; then: {command} --write",
        )
    ]

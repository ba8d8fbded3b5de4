"""`plugman export`: write the resolved config into an agent's own files, and take it out.

plugman owns only the entries it writes (see `plugman.manifest.edit`); `agents.export_record`
remembers them, so `--remove`, a re-export and uninstalling a contributing plugin take out
exactly those.

Each scope's file gets that scope's entries only: user gets the user plugman.toml's servers and
hooks and those of plugins installed in the user scope; project gets the project's (approved)
entries and the project-scope plugins'; local the local ones. They are resolved as that scope
alone (policy, approval, endpoint dedupe and plugin-vs-manual precedence apply), and across
scopes the agent applies the same precedence as plugman (local > project > user), so no entry
is written twice and a user file never depends on the project it was exported from. claude.ai
connectors and managed servers and hooks are never written: agents get them from their own
account and managed settings (a note says so). Entries that already live in the file being
written (the project's own `.mcp.json` servers, for Claude Code) are not written again.

A project file is committed, so an entry holding a literal secret (`redact.literals`: a
credential-like env or header value, or URL credentials, that is not a `${VAR}` reference) is
left out of it with a note saying what, where and what to do; the rest is written. A new file
outside the project scope is created 0600; a project file gets the umask's mode.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from plugman import extensions
from plugman.agents import export_entries, export_record, shared_files
from plugman.agents.export_record import Exports, Sealed, Written
from plugman.agents.shared_files import Settled, Share
from plugman.agents.targets import Place, Target
from plugman.agents.targets import target as render_target
from plugman.config import declarations, origins
from plugman.core.errors import UsageError
from plugman.core.folders import Folders
from plugman.core.fs import present, read_bytes
from plugman.core.paths import Paths
from plugman.core.session import session
from plugman.core.state import Scope
from plugman.manifest import edit
from plugman.manifest.edit import EditError, Part

if TYPE_CHECKING:
    from plugman.core.session import Session


class FileChange(NamedTuple):
    path: Path
    before: str | None
    after: str | None  # None: the file is deleted
    prune_to: Path | None = None  # a deletion also removes the empty folders plugman made


class Outcome(NamedTuple):
    target: str
    scope: Scope
    changes: list[FileChange]
    notes: list[str]
    entries: dict[str, list[str]]  # file → the ids plugman owns there now
    secrets: tuple[str, ...] = ()  # secret values in the changes, for output to mask


def home_of(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def export(
    paths: Paths, env: Mapping[str, str], name: str, scope: Scope, *, remove: bool, dry_run: bool
) -> Outcome:
    """Write (or with `remove`, take out) `name`'s export at `scope`; `dry_run` writes nothing.
    `plugman export --remove` goes through `handedits.remove_export`, which refuses first."""
    spec = extensions.target(name)
    if scope not in spec.scopes_of():
        raise UsageError(
            f"{name} has no {scope}-scope config file",
            hint=f"use --scope {' or --scope '.join(spec.scopes_of())}",
        )
    target = render_target(spec)
    place = Place(scope, home_of(env), paths.project_dir, env)
    if dry_run:
        return plan(paths, target, place, export_record.load(paths), remove)
    with session(paths) as work:
        exports = export_record.load(paths)
        outcome = plan(paths, target, place, exports, remove)
        folders = Folders(paths)
        write(work, outcome, folders)
        folders.save(work.tx)
        work.tx.stage(export_record.path(paths), export_record.dump(exports))
    return outcome


def write(work: Session, outcome: Outcome, folders: Folders) -> None:
    """Write an outcome's changes in the session's transaction (a new file outside the project
    scope is created 0600; a new project file is committed, so it gets the umask's mode). A
    deletion takes along the folders plugman created that it leaves empty (`folders`)."""
    private = outcome.scope != "project"
    for change in outcome.changes:
        if change.after is None:
            stop = folders.stop(change.path, change.prune_to)
            work.tx.write(change.path, None, prune_to=stop)
        else:
            folders.note(change.path)
            work.tx.write(change.path, _bytes(change.after), private=private)


class How(NamedTuple):
    """How a deployment differs from a plain export."""

    gateway: bool = False  # one server, the gateway, in place of every server and tool hook
    native: frozenset[str] = frozenset()  # plugins the agent loads itself: none of their entries
    given: tuple[dict[str, list[Part]], dict[str, str]] | None = None  # parts and owners, as is
    notice: bool = (
        False  # the update notice's SessionStart hook too (plugman.runtime.launch.notices)
    )


PLAIN = How()


def plan(
    paths: Paths,
    target: Target,
    place: Place,
    exports: Exports,
    remove: bool,
    how: How = PLAIN,
) -> Outcome:
    """The changes for one export; `exports` is updated to match."""
    key = export_record.key(target.name, place.scope, paths)
    old = exports.pop(key, {})
    new: dict[str, Written] = {}
    changes: list[FileChange] = []
    notes: list[str] = []
    hidden: set[str] = set()
    wanted: dict[str, list[Part]] = {}
    owners: dict[str, str] = {}
    if how.given is not None and not remove:
        wanted, owners = how.given
    elif not remove:
        wanted, owners, notes = export_entries.render(
            paths,
            target,
            place,
            scoped=True,
            gateway=how.gateway,
            native=how.native,
            notice=how.notice,
        )
    for loc in target.files(place).values():
        declarations.check_project_file(paths, loc.path)  # no writing out through a project link
    located = {
        str(_real(loc.path)): [
            p._replace(container=loc.prefix + p.container) for p in wanted.get(role, [])
        ]
        for role, loc in target.files(place).items()
    }
    fmts = {str(_real(loc.path)): loc.fmt for loc in target.files(place).values() if loc.fmt}
    theirs = _not_users(paths, [loc.path for loc in target.files(place).values()])
    kept: dict[str, Sealed] = {}
    for file in sorted(set(located) | set(old)):
        if file in theirs:  # a personal file git tracks: the project's; plugman leaves it alone
            notes.append(f"{theirs[file]}; plugman does not write into it")
            if file in old:
                kept[file] = old[file]  # what plugman wrote there before stays on record
            continue
        parts = located.get(file, [])
        recorded = _shares(exports, file) | ({key: old[file]} if file in old else {})
        fmt = fmts.get(file) or (old[file].fmt if file in old else target.fmt)
        share = Share(parts, owners) if parts else None
        before = _read(Path(file))
        settled = shared_files.settle(file, before, fmt, recorded, {key: share})
        notes += [
            f"{file}: {i!r} is already there and not plugman's; left as it is"
            for i in settled.differ.get(key, [])
        ]
        _keep_others(exports, file, settled, key)
        if key in settled.shares:
            new[file] = settled.shares[key]
        hidden |= _secrets(*settled.priors.values(), *settled.shares.values())
        if settled.after != before:
            prune = _prune_stop(*settled.priors.values())
            changes.append(FileChange(Path(file), before, settled.after, prune))
    if new or kept:
        exports[key] = kept | {file: export_record.seal(w) for file, w in new.items()}
    entries = {file: [i for p in w.parts for i in p.entries] for file, w in new.items()}
    return Outcome(target.name, place.scope, changes, notes, entries, tuple(sorted(hidden)))


def _shares(exports: Exports, file: str) -> dict[str, Sealed]:
    """Every record key's share of `file`."""
    return {k: files[file] for k, files in exports.items() if file in files}


def _keep_others(exports: Exports, file: str, settled: Settled, *mine: str) -> None:
    """The other keys' shares of `file` as `settled` rewrote them (their entries the same,
    their blocks where they now stand)."""
    for k, files in exports.items():
        if k in mine or file not in files:
            continue
        if k in settled.shares:
            files[file] = export_record.seal(settled.shares[k])
        else:
            del files[file]


def _secrets(*shares: Written) -> set[str]:
    values = [v for w in shares for p in w.parts for v in p.entries.values()]
    return {s for v in values for s in export_record.secrets(v)}


def native(
    paths: Paths, env: Mapping[str, str], name: str, show_secrets: bool = False
) -> tuple[str, list[str]]:
    """The main file of `name`'s export as a new document (`config resolve --target`)."""
    target = render_target(extensions.target(name))
    place = Place("user", home_of(env), paths.project_dir, env)
    wanted, _owners, notes = export_entries.render(paths, target, place, show_secrets)
    return edit.render(target.fmt, wanted.get("mcp", [])), notes


def forget(work: Session, plugin_ids: set[str]) -> None:
    """Take the entries `plugin_ids` contributed out of every exported file (uninstall)."""
    paths = work.paths
    if not plugin_ids or not present(export_record.path(paths)):
        return
    exports = export_record.load(paths)
    folders = Folders(paths)
    changed = False
    for file in sorted({f for files in exports.values() for f in files}):
        recorded = _shares(exports, file)
        gone = {
            k: {i for i, owner in s.owners.items() if owner in plugin_ids}
            for k, s in recorded.items()
        }
        before = _read(Path(file))
        if before is None or not any(gone.values()):
            continue
        priors = {k: export_record.unseal(s, before, file) for k, s in recorded.items() if gone[k]}
        wanted: dict[str, Share | None] = {
            k: Share(
                [p._replace(entries={i: v for i, v in p.entries.items() if i not in gone[k]})
                 for p in w.parts],
                w.owners,
            )
            for k, w in priors.items()
        }  # fmt: skip
        fmt = next(iter(recorded.values())).fmt
        settled = shared_files.settle(file, before, fmt, recorded, wanted)
        _keep_others(exports, file, settled)
        if settled.after is None:
            stop = folders.stop(Path(file), _prune_stop(*settled.priors.values()))
            work.tx.write(Path(file), None, prune_to=stop)
        elif settled.after != before:
            work.tx.write(Path(file), _bytes(settled.after))
        changed = True
    if changed:
        folders.save(work.tx)
        work.tx.stage(export_record.path(paths), export_record.dump(exports))


def _read(path: Path) -> str | None:
    data = read_bytes(path)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise EditError(
            "not UTF-8 text", where=str(path), hint="fix the file; plugman left it as it is"
        ) from None


def _not_users(paths: Paths, files: list[Path]) -> dict[str, str]:
    """Of `files`, the project's personal ones (Claude's `.claude/settings.local.json`) that
    are not the user's (`origins.personal`: git tracks them, another user owns them), with
    why: plugman never merges into one (what it says, Claude Code honours)."""
    personal = origins.personal_files(paths)
    found = {}
    for file in files:
        if origins.plain(file) in personal and file.exists():
            verdict = origins.of(paths, file)
            if not verdict.consents:
                found[str(_real(file))] = verdict.why
    return found


def _real(path: Path) -> Path:
    """Where a write really goes: a symlinked config (dotfiles) is edited through its link."""
    return path.resolve() if path.is_symlink() else path


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8")


def _prune_stop(*shares: Written) -> Path | None:
    created = next((w.created for w in shares if w.created), None)
    return Path(created).parent if created else None

"""plugman.toml declaration files (user, project, local), edited with tomlkit.

Only the entries plugman adds are touched, so a user's comments and layout survive. What plugman
created (a whole file, or a table) is remembered in the scope's record, so removing the last
entry returns the file to its previous bytes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plugman.core.errors import InputError, PlugmanError
from plugman.core.fs import current, present, staged
from plugman.core.owned import Owned, TomlOwned
from plugman.core.paths import Paths
from plugman.core.state import SCOPES, Scope
from plugman.manifest.diagnostics import ERROR, WARNING, Diagnostic

if TYPE_CHECKING:
    from tomlkit import TOMLDocument

    from plugman.core.state import InstallRecord
    from plugman.core.transaction import Transaction
    from plugman.manifest.diagnostics import Diagnostic

# In a `.plugman/` plugman creates: everything there (local.toml) stays out of git, as Claude
# Code keeps `.claude/settings.local.json` out, and as uv does for `.venv`.
GITIGNORE = (
    b"# created by plugman: local.toml holds this machine's settings; keep it out of git\n*\n"
)


def path_for(paths: Paths, scope: Scope) -> Path:
    return {
        "user": paths.user_config,
        "project": paths.project_config,
        "local": paths.local_config,
    }[scope]


def home_of(paths: Paths, scope: Scope) -> Path:
    """The folder a scope's declaration lives in, which plugman never removes."""
    return paths.config_dir if scope == "user" else paths.project_dir


def declared(paths: Paths, scope: Scope, table: str) -> dict[str, Any]:
    """One table of a scope's plugman.toml, never read through a project link."""
    target = path_for(paths, scope)
    check_project_file(paths, target)
    return entries(target, table)


def set_entry(
    tx: Transaction, paths: Paths, record: InstallRecord, table: str, key: str, value: Any
) -> Path:
    """Write `[table] key = value` into the record's scope file in `tx`, with every guard: never
    through a project link, what plugman creates noted in the record, a new `.plugman/` with its
    `.gitignore`. The file written."""
    return set_entries(tx, paths, record, table, {key: value})


def set_entries(
    tx: Transaction, paths: Paths, record: InstallRecord, table: str, values: dict[str, Any]
) -> Path:
    """`set_entry` for several keys of one table, the file read and written once."""
    target = path_for(paths, record.scope)
    check_project_file(paths, target)
    write(tx, paths, target, add(target, table, values, record.owned))
    return target


def drop_entry(tx: Transaction, paths: Paths, record: InstallRecord, table: str, key: str) -> Path:
    """Take `[table] key` out of the record's scope file in `tx` (when it is there), with the
    guards of `set_entry`; what plugman created goes with it, up to the scope's home."""
    target = path_for(paths, record.scope)
    check_project_file(paths, target)
    if key in entries(target, table):
        data = remove(target, table, key, record.owned)
        write(tx, paths, target, data, home_of(paths, record.scope))
    return target


def write(
    tx: Transaction, paths: Paths, path: Path, data: bytes | None, prune_to: Path | None = None
) -> None:
    """Write (None: delete) a declaration file in `tx`. Creating the local scope's `.plugman/`
    also creates its `.gitignore`; deleting local.toml deletes that `.gitignore` too when it is
    all that is left, so the folder goes and no trace remains."""
    ignore = path.parent / ".gitignore"
    if path != paths.local_config:
        tx.stage(path, data, prune_to=prune_to)
    elif data is None:
        there = set(path.parent.iterdir()) if path.parent.is_dir() else set()
        there |= {p for p in staged if p.parent == path.parent}
        left = {p.name for p in there if p.is_dir() or present(p)}
        if left == {path.name, ignore.name} and current(ignore) == GITIGNORE:
            tx.stage(ignore, None)
        tx.stage(path, None, prune_to=prune_to)
    else:
        new = not path.parent.exists() and not present(ignore)
        tx.stage(path, data, prune_to=prune_to)
        if new:
            tx.stage(ignore, GITIGNORE)


def load(path: Path) -> TOMLDocument:
    """The file as tomlkit reads it, to edit with its layout kept (tomlkit is imported here:
    commands that only read declarations never load it)."""
    # lazy: tomlkit, tomlkit.exceptions not loaded by plugman list (+48 ms)
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    text = _text(path)
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise InputError(f"{path} is not valid TOML: {exc}", hint=FIX) from None


FIX = "fix the file; plugman leaves it as it is"


def _text(path: Path) -> str:
    """The file's text; an `InputError` (exit 2) for bytes that are not UTF-8 or a merge git
    left unresolved (at its line)."""
    data = current(path) or b""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not valid TOML: {exc}", hint=FIX) from None
    if "<<<<<<<" in text or ">>>>>>>" in text:
        # lazy: manifest.tomlloc not loaded by plugman list (+2 ms)
        from plugman.manifest import tomlloc

        line = tomlloc.conflict_line(text)
        if line is not None:
            raise tomlloc.merge_conflict(str(path), line)
    return text


def read(path: Path) -> dict[str, Any]:
    """The file's plain values, to read, empty when it is missing. tomli (compiled; else the
    stdlib's tomllib, the same parser uncompiled) reads 700 servers' worth in 7 ms; tomlkit,
    which `load` uses to keep a file's layout for an edit, takes 20 times as long."""
    text = _text(path)
    if not text:  # missing or empty: nothing to parse, and no parser to import
        return {}
    parser = toml_parser()
    try:
        found: dict[str, Any] = parser.loads(text)
    except parser.TOMLDecodeError as exc:
        raise InputError(f"{path} is not valid TOML: {exc}", hint=FIX) from None
    return found


def read_located(path: Path, hint: str) -> tuple[dict[str, Any], str]:
    """A project file plugman acts on (plugman.toml for sync, plugman.lock) and its text;
    `{}` when missing. A merge left unresolved, text that is not UTF-8 or not TOML is an
    `InputError` at its line (exit 2), nothing read from it."""
    # lazy: manifest.tomlloc not loaded by plugman list (+2 ms)
    from plugman.manifest import tomlloc

    data = current(path)
    try:
        text = (data or b"").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text: {exc}", where=str(path), hint=hint) from None
    line = tomlloc.conflict_line(text)
    if line is not None:
        raise tomlloc.merge_conflict(str(path), line)
    parser = toml_parser()
    try:
        found: dict[str, Any] = parser.loads(text)
    except parser.TOMLDecodeError as exc:
        message = str(exc).splitlines()[0]
        at = _AT.search(message)
        where = f"{path}:{at.group(1)}" if at else str(path)
        problem = f"not valid TOML: {_AT.sub('', message)}"
        raise InputError(problem, where=where, hint=hint) from None
    return found, text


SYNCED = ("format", "plugins", "marketplaces")  # what sync and lock act on in plugman.toml


def checked(path: Path) -> dict[str, Any]:
    """The project's plugman.toml as sync and lock act on it: its `plugins` and
    `marketplaces` tables checked against the published schema (a plugin's version that is
    not a string, a marketplace without a source, a key plugman does not know there), each
    finding an `InputError` at its line and key path, exit 2."""
    # lazy: manifest.schema not loaded by plugman list (+3 ms)
    from plugman.manifest import schema, tomlloc

    hint = f"fix {path.name} (plugman leaves it as it is), then run the command again"
    data, text = read_located(path, hint)
    rules = schema.load("plugman-toml.schema.json")
    base = "plugman-toml.schema.json"
    found = [
        (f.path, f.message)
        for key in SYNCED
        if key in data
        for f in schema.check(data[key], rules["properties"][key], base, (key,))
    ]
    if found:
        raise tomlloc.refused(str(path), tomlloc.locator(text), found, hint)
    return data


FIX = "fix the file"
_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


def broken(path: Path, exc: Exception) -> list[Diagnostic]:
    """What `read`'s error means to a command that reads every scope: the problem, located,
    and what is left out (everything the file declares; the rest is read without it)."""
    message = str(exc).splitlines()[0].removeprefix(f"{path} is ")  # the file is its place
    message = message or f"cannot be read ({type(exc).__name__})"
    at = _AT.search(message)
    line, column = (int(at.group(1)), int(at.group(2))) if at else (None, None)
    left = "left out: everything in this file (its MCP servers and hooks, and the plugins and "
    left += "marketplaces it declares for sync); the rest is read without it"
    return [
        Diagnostic(ERROR, "toml-syntax", _AT.sub("", message), str(path), "", line, column, FIX),
        Diagnostic(WARNING, "left-out", left, str(path)),
    ]


def problems(paths: Paths) -> list[Diagnostic]:
    """The declaration files (user, project, local) that cannot be read, as `broken` says."""
    found: list[Diagnostic] = []
    for scope in SCOPES:
        file = path_for(paths, scope)
        if present(file):
            try:
                read(file)
            except Exception as exc:  # as config.scopes reads it: a PlugmanError, or worse
                found += broken(file, exc)
    return found


def entries(path: Path, table: str) -> dict[str, Any]:
    """The plain values of one table (e.g. `plugins`), empty when absent."""
    found = read(path).get(table)
    return found if isinstance(found, dict) else {}


def add(path: Path, table: str, values: dict[str, Any], owned: Owned) -> bytes:
    """The file's bytes with `[table] key = value` set for each of `values`; notes in `owned`
    what it creates."""
    text = (current(path) or b"").decode("utf-8")
    mine = owned.toml(str(path), not present(path))
    import tomlkit  # ~10 ms: only a command that writes a declaration loads it

    doc = load(path)
    if table not in doc:
        mine.tables[table] = text[len(text.rstrip("\n")) :]  # the ending to restore later
        doc.add(table, tomlkit.table())
    elif not isinstance(doc[table], dict):
        raise InputError(
            f"{table!r} is {type(doc[table]).__name__.lower()}, not a table",
            where=str(path),
            hint=f"make it a [{table}] table (or remove it); plugman leaves the file as it is",
        )
    for key, value in values.items():
        doc[table][key] = value
    return tomlkit.dumps(doc).encode()


def remove(path: Path, table: str, key: str, owned: Owned) -> bytes | None:
    """The file's bytes without `[table] key`; None when plugman made the file and it is empty."""
    mine = owned.toml(str(path), False) if owned.get(str(path)) else TomlOwned(False, {})
    import tomlkit  # ~10 ms: only a command that writes a declaration loads it

    doc = load(path)
    section = doc.get(table)
    if isinstance(section, tomlkit.items.Table) and key in section:
        del section[key]
    text = tomlkit.dumps(doc)
    if table in mine.tables and isinstance(section, tomlkit.items.Table) and not section:
        del doc[table]
        text = tomlkit.dumps(doc).rstrip("\n") + mine.tables.pop(table)
    if not mine.tables:
        owned.drop(str(path))
        if mine.file and not text.strip():
            return None
    return text.encode()


def check_project_file(paths: Paths, target: Path) -> None:
    """Refuse a project file (plugman.toml, plugman.lock, .plugman/local.toml, .claude/...)
    reached through a symbolic link (`origins.link_on_path`, the rule resolve keeps): a cloned
    repository could make `.plugman` or `plugman.toml` a link to any file or folder on this
    machine, and plugman would read and write there."""
    # lazy: config.origins not loaded by plugman list (<1 ms)
    from plugman.config import origins

    link = origins.link_on_path(paths.project_dir, target)
    if link is not None:
        raise PlugmanError(
            f"{origins.of(paths, target).why}; plugman does not read or write the project's "
            "files through links",
            where=str(target),
            hint=f"replace {link.name} with a real file or folder, or remove it",
        )


def project_checked(paths: Paths) -> dict[str, Any]:
    """The project's plugman.toml as sync and lock act on it (`checked`), never read through a
    link on its path (`check_project_file`)."""
    check_project_file(paths, paths.project_config)
    return checked(paths.project_config)


def project_entries(paths: Paths, table: str) -> dict[str, Any]:
    """One table of the project's plugman.toml (`declared` for the project scope)."""
    return declared(paths, "project", table)


def toml_parser() -> Any:
    """tomli where it is installed (a compiled build of the stdlib's parser), else tomllib."""
    try:
        # lazy: the parser is chosen on the first read of a plugman.toml
        import tomli

        return tomli
    except ImportError:  # pragma: no cover - tomli is a dependency; a platform without a wheel
        # lazy: the fallback, imported only where tomli is missing
        import tomllib

        return tomllib

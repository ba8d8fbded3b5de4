"""Known marketplaces: adding, listing, refreshing and removing catalogs.

The registry (`<state>/marketplaces.json`) maps each marketplace name to its source. A local
folder is read in place; a git repository or a marketplace.json URL is fetched into
`<cache>/marketplaces/<name>/`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, NamedTuple

import tomlkit

from plugman.config import declarations
from plugman.core import progress
from plugman.core.errors import PlugmanError
from plugman.core.paths import Paths
from plugman.core.session import Session, session
from plugman.core.state import SCOPES, Record, read_state, timestamp
from plugman.core.transaction import Transaction
from plugman.manifest import acceptance
from plugman.manifest import marketplace as catalog
from plugman.manifest.model import Marketplace, MarketplaceEntry, PluginSource
from plugman.manifest.names import RESERVED_MARKETPLACES, impersonates, unsafe_reason
from plugman.manifest.reader import Report

FORMAT = 1
GITHUB = re.compile(r"^(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)(?:@(?P<ref>[^\s@]+))?$")
GITHUB_URL = "https://github.com"
GIT_PREFIXES = ("file://", "ssh://", "git@", "git://")
DRIVE = re.compile(r"^[a-z]:[\\/]")  # a Windows path, C:\ or C:/


class Source(NamedTuple):
    kind: str  # directory | git | url
    location: str  # an absolute folder, a git URL or a marketplace.json URL
    ref: str | None = None


class Known(NamedTuple):
    name: str
    source: Source
    root: Path  # the folder holding .claude-plugin/marketplace.json
    commit: str | None


def classify(text: str, cwd: Path) -> Source:
    """What kind of marketplace source `text` is (a folder, a git repository, a URL)."""
    local = (cwd / Path(text).expanduser()) if not text.startswith(("http", "git@")) else None
    if local is not None and local.exists():
        folder = catalog.root_of(local) if local.is_file() else local
        return Source("directory", str(folder.resolve()))
    base, _, ref = text.partition("#")
    if base.startswith(("http://", "https://")) and base.endswith(".json"):
        return Source("url", base)
    if base.startswith(GIT_PREFIXES) or base.endswith(".git") or base.startswith("https://"):
        return Source("git", base, ref or None)
    github = GITHUB.match(text)
    if github:
        url = f"{os.environ.get('PLUGMAN_GITHUB_URL', GITHUB_URL)}/{github['repo']}"
        return Source("git", url if url.endswith(".git") else url + ".git", github["ref"])
    raise PlugmanError(
        f"{text!r} is not a marketplace source plugman understands",
        hint="use a folder, a git URL (https://, ssh://, file://, with an optional #ref), "
        "owner/repo[@ref], or an https:// URL of a marketplace.json",
    )


def registry_path(paths: Paths) -> Path:
    return paths.state_dir / "marketplaces.json"


def registry(paths: Paths) -> dict[str, dict[str, Any]]:
    data = read_state(registry_path(paths), "move it away and add your marketplaces again")
    found: dict[str, dict[str, Any]] = (data or {}).get("marketplaces", {})
    return found


def known(paths: Paths) -> dict[str, Known]:
    """Every registered marketplace, by name."""
    return {name: _known(name, entry) for name, entry in sorted(registry(paths).items())}


def _known(name: str, entry: dict[str, Any]) -> Known:
    source = Source(entry["kind"], entry["location"], entry.get("ref"))
    return Known(name, source, Path(entry["root"]), entry.get("commit"))


def write_registry(paths: Paths, entries: dict[str, dict[str, Any]], tx: Transaction) -> None:
    body = {"format": FORMAT, "marketplaces": dict(sorted(entries.items()))}
    data = None if not entries else (json.dumps(body, indent=2) + "\n").encode()
    tx.write(registry_path(paths), data)


class Catalog(NamedTuple):
    market: Marketplace  # without the skipped entries
    skipped: dict[str, str]  # entry name (or plugins[N]) → why it is skipped
    warnings: list[str]


def load(market: Known, *, warn: bool = False) -> Marketplace:
    """The catalog of a known marketplace, as Claude Code reads it; with `warn`, what it skips
    and tolerates is said (when it is added or updated)."""
    found = read(market)
    for message in found.warnings if warn else ():
        progress.warn(message)
    return found.market


def read(market: Known) -> Catalog:
    """Read a catalog: an entry with an error is skipped (plugman.manifest.acceptance);
    PlugmanError when the catalog itself cannot be used."""
    report = Report()
    file = market.root / ".claude-plugin" / "marketplace.json"
    loaded, _sink = catalog.load(file, report, official=official(market.source))
    found = acceptance.sort(report.diagnostics, {str(file)}, entries=True)
    if loaded is None or found.fatal:
        detail = (
            acceptance.where(found.fatal[0], market.root) if found.fatal else "it cannot be read"
        )
        name = market.name or (loaded.name if loaded else market.source.location)
        raise PlugmanError(
            f"marketplace {name!r} is invalid: {detail}",
            hint=f"run: plugman validate {market.root}",
        )
    shown = market.name or loaded.name
    warnings = [
        f"marketplace {shown!r}: {acceptance.where(f, market.root)}" for f in found.tolerated
    ]
    skipped: dict[str, str] = {}
    bad = {acceptance.entry_index(f): f for f in reversed(found.skipped)}
    for index, finding in sorted(bad.items(), key=lambda item: item[0] or 0):
        name = _entry_name(loaded, index)
        skipped[name] = acceptance.where(finding, market.root)
        entry = f"plugin {name!r}" if name else f"entry plugins[{index}]"
        warnings.append(f"marketplace {shown!r}: {entry} is skipped: {skipped[name]}")
    kept = tuple(e for e in loaded.plugins if e.position not in bad)
    return Catalog(loaded._replace(plugins=kept), skipped, warnings)


def _entry_name(market: Marketplace, index: int | None) -> str:
    listed = market.manifest.get("plugins")
    item = listed[index] if isinstance(listed, list) and index is not None else None
    name = item.get("name") if isinstance(item, dict) else None
    return name if isinstance(name, str) else ""


def fetch(source: Source, staging: Path) -> tuple[Path, str | None]:
    """Bring a marketplace into `staging` (git, url) or find it in place (directory)."""
    if source.kind == "directory":
        return Path(source.location), None
    if source.kind == "git":
        from plugman.plugins.sources import fetch as fetch_tree

        where = PluginSource("url", source.location, source.ref)
        fetched = fetch_tree(where, staging / "m", progress=progress.say)
        return fetched.root, fetched.pin
    target = staging / "m" / ".claude-plugin" / "marketplace.json"
    target.parent.mkdir(parents=True)
    from plugman.plugins.sources.download import download

    progress.say(f"downloading {source.location}")
    download(source.location, target)
    return staging / "m", None


def check_name(name: str, source: Source) -> None:
    """Refuse a marketplace name that is unsafe, passes for another, or is reserved for
    Anthropic's marketplaces while `source` is not one of theirs (as Claude Code does)."""
    reason = unsafe_reason(name) or lookalike(name)
    if reason:
        raise PlugmanError(
            f"marketplace name {name!r} {reason}; plugman will not use it",
            hint="ask the marketplace's owner to fix its name, or pass --name",
        )
    if (name in RESERVED_MARKETPLACES or impersonates(name)) and not official(source):
        raise PlugmanError(
            f"the name {name!r} is reserved for official Anthropic marketplaces and can only "
            "be used with GitHub sources from the 'anthropics' organization",
            hint="add the marketplace from github.com/anthropics, or give this copy another "
            "name with --name",
        )


def lookalike(name: str) -> str | None:
    """Why a marketplace or plugin name could pass for another one: a non-ASCII character
    (Cyrillic U+0456, fullwidth U+FF47 or the hyphen U+2010 look like 'i', 'g' and '-')."""
    odd = next((char for char in name if not char.isascii()), None)
    if odd is None:
        return None
    if 0xD800 <= ord(odd) <= 0xDFFF:
        return f"contains the lone surrogate U+{ord(odd):04X}, which is not valid text"
    return (
        f"contains the non-ASCII character {odd!r} (U+{ord(odd):04X}), which can pass for "
        "another letter"
    )


def official(source: Source) -> bool:
    """Whether a marketplace is one of Anthropic's own, as Claude Code decides it: fetched with
    git from GitHub's `anthropics` organization (`PLUGMAN_GITHUB_URL` stands for GitHub)."""
    if source.kind != "git":
        return False
    hosts = {os.environ.get("PLUGMAN_GITHUB_URL", GITHUB_URL), GITHUB_URL}
    prefixes = [f"{host.rstrip('/')}/anthropics/".lower() for host in hosts]
    prefixes.append("git@github.com:anthropics/")
    return source.location.lower().startswith(tuple(prefixes))


def remote(source: Source) -> bool:
    """A marketplace fetched from another machine (a URL, or a git URL that is not local)."""
    if source.kind == "url":
        return True
    return source.kind == "git" and not source.location.lower().startswith(("file:", "/"))


def local_plugin_source(source: PluginSource) -> bool:
    """A plugin source naming this machine's files: a file:// URL or an absolute path (a
    relative `path` source stays inside its marketplace, which is checked when it is copied)."""
    if source.kind not in ("url", "git-subdir", "archive"):
        return False
    location = source.location.strip().lower()
    return location.startswith(("file:", "/", "~", "\\")) or bool(DRIVE.match(location))


def add(paths: Paths, text: str, name: str | None = None, scope: str = "user") -> Known:
    """Register a marketplace (fetching it unless it is a local folder); for the project or
    local scope, also name it in that scope's plugman.toml."""
    source = classify(text, paths.project_dir)
    check_policy(paths, source)  # before any I/O
    with session(paths) as work:
        return add_in(work, source, name, scope)


def add_in(work: Session, source: Source, name: str | None, scope: str = "user") -> Known:
    """`add`, as part of the caller's transaction."""
    paths = work.paths
    staging = work.store.stage()
    root, commit = fetch(source, staging)
    found = read(Known(name or "", source, root, commit))
    final = name or found.market.name
    check_name(final, source)
    for message in found.warnings:
        progress.warn(message)
    entries = registry(paths)
    _check_free(final, entries.get(final), source)
    if source.kind != "directory":
        cache = paths.marketplaces_dir / final
        work.tx.replace_dir(cache, root)
        root = cache
    entries[final] = _entry(source, root, commit)
    write_registry(paths, entries, work.tx)
    if scope != "user":
        record = Record.load(paths, scope)
        if declare(work, record, final, source):
            work.tx.write(record.path, record.to_bytes())
    return Known(final, source, root, commit)


def _check_free(name: str, registered: dict[str, Any] | None, source: Source) -> None:
    """Refuse to replace a registered marketplace of the same name from another source."""
    if registered is None:
        return
    old = _known(name, registered).source
    if (old.kind, old.location, old.ref) != (source.kind, source.location, source.ref):
        raise PlugmanError(
            f"a marketplace named {name!r} is already registered, from {old.location}",
            hint=f"remove it first (plugman marketplace remove {name}), or give this one "
            "another name with --name",
        )


def declare(work: Session, record: Record, name: str, source: Source) -> bool:
    """Name a marketplace in the scope's plugman.toml (unless it is there); whether it wrote."""
    if name in declarations.declared(work.paths, record.scope, "marketplaces"):
        return False
    value = tomlkit.inline_table()
    value["source"] = portable(source, work.paths.project_dir)
    if source.ref:
        value["ref"] = source.ref
    declarations.set_entry(work.tx, work.paths, record, "marketplaces", name, value)
    return True


def undeclare(work: Session, record: Record, name: str) -> None:
    """Remove a marketplace from the scope's plugman.toml."""
    declarations.drop_entry(work.tx, work.paths, record, "marketplaces", name)


def remove(paths: Paths, name: str, *, force: bool = False) -> Known:
    """Forget a marketplace; refused while installed plugins come from it (unless `force`)."""
    with session(paths) as work:
        markets = known(paths)
        if name not in markets:
            raise PlugmanError(
                f"marketplace {name!r} is not known", hint="run: plugman marketplace list"
            )
        users = [
            f"{key} ({scope})"
            for scope in SCOPES
            for key, value in Record.load(paths, scope).plugins.items()
            if value["marketplace"] == name
        ]
        if users and not force:
            raise PlugmanError(
                f"plugins from {name!r} are installed: {', '.join(users)}",
                hint="uninstall them first, or pass --force",
            )
        entries = registry(paths)
        del entries[name]
        if markets[name].source.kind != "directory":
            work.tx.replace_dir(paths.marketplaces_dir / name, None)
        write_registry(paths, entries, work.tx)
        for scope in ("project", "local"):
            record = Record.load(paths, scope)
            undeclare(work, record, name)
            declared = record.data.get("declared_marketplaces", [])
            if name in declared:
                declared.remove(name)
            work.tx.write(record.path, record.to_bytes())
    return markets[name]


def update(paths: Paths, names: list[str]) -> list[Known]:
    """Fetch the named (default: all) marketplaces again."""
    updated = []
    with session(paths) as work:
        entries = registry(paths)
        for name in names or list(entries):
            if name not in entries:
                raise PlugmanError(
                    f"marketplace {name!r} is not known", hint="run: plugman marketplace list"
                )
            market = _known(name, entries[name])
            check_policy(paths, market.source)
            root, commit = fetch(market.source, work.store.stage())
            load(market._replace(root=root), warn=True)
            if market.source.kind != "directory":
                work.tx.replace_dir(market.root, root)
            entries[name] = _entry(market.source, market.root, commit)
            updated.append(market._replace(commit=commit))
        write_registry(paths, entries, work.tx)
    return updated


def check_policy(paths: Paths, source: Source) -> None:
    """Refuse a marketplace source the managed policy does not allow."""
    from plugman.config.policy import marketplace_refusal
    from plugman.config.scopes import managed_policy

    reason = marketplace_refusal(source.kind, source.location, source.ref, managed_policy(paths))
    if reason:
        raise PlugmanError(
            f"marketplace {source.location!r} is {reason} (managed policy)",
            hint="ask your administrator, or use an allowed marketplace",
        )


def portable(source: Source, project: Path) -> str:
    """How a project's plugman.toml names this source: folders inside the project relatively."""
    if source.kind == "directory" and Path(source.location).is_relative_to(project):
        return "./" + Path(source.location).relative_to(project).as_posix()
    return source.location


def _entry(source: Source, root: Path, commit: str | None) -> dict[str, Any]:
    return {
        "kind": source.kind,
        "location": source.location,
        "ref": source.ref,
        "root": str(root),
        "commit": commit,
        "updated": timestamp(),
    }


def find(paths: Paths, name: str, marketplace: str | None) -> tuple[Known, MarketplaceEntry]:
    """The catalog entry of plugin `name` (in `marketplace`, or the only one that lists it)."""
    markets = known(paths)
    if marketplace is not None:
        if marketplace not in markets:
            raise PlugmanError(
                f"marketplace {marketplace!r} is not known",
                hint="run: plugman marketplace list, or plugman marketplace add",
            )
        markets = {marketplace: markets[marketplace]}
    catalogs = [(m, read(m)) for m in markets.values()]
    hits = [(m, e) for m, found in catalogs for e in found.market.plugins if e.name == name]
    if not hits:
        skipped = [
            f"{m.name}: {found.skipped[name]}" for m, found in catalogs if name in found.skipped
        ]
        if skipped:
            raise PlugmanError(
                f"plugin {name!r} cannot be installed: its marketplace entry is invalid "
                f"({'; '.join(skipped)})",
                hint="ask the marketplace's owner to fix the entry",
            )
        where = f"marketplace {marketplace!r}" if marketplace else "any known marketplace"
        raise PlugmanError(
            f"plugin {name!r} not found in {where}", hint=f"run: plugman search {name}"
        )
    if len(hits) > 1:
        names = ", ".join(f"{name}@{m.name}" for m, _e in hits)
        raise PlugmanError(
            f"plugin {name!r} is in several marketplaces: {names}",
            hint="say which one: plugman install NAME@MARKETPLACE",
        )
    return hits[0]

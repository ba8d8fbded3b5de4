"""Known marketplaces: adding, refreshing and removing them, and reading their catalogs as
Claude Code reads them (a bad entry skipped, see plugman.manifest.acceptance). Where each one
comes from is `plugman.plugins.catalog.registry`."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from plugman import extensions
from plugman.config import declarations
from plugman.core import progress
from plugman.core.errors import PlugmanError
from plugman.core.paths import Paths
from plugman.core.session import Session, session
from plugman.core.state import SCOPES, InstallRecord, Scope
from plugman.manifest import acceptance
from plugman.manifest import marketplace as catalog
from plugman.manifest.model import Marketplace, MarketplaceEntry, PluginSource
from plugman.manifest.reader import Report
from plugman.plugins.catalog.failed import Failed
from plugman.plugins.catalog.registry import (
    Known,
    MarketplaceSource,
    Registered,
    check_name,
    check_policy,
    classify,
    entry_for,
    known,
    official,
    portable,
    registry,
    write_registry,
)
from plugman.plugins.sources import fetch as fetch_tree


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
    if market.source.kind == "directory" and not market.root.is_dir():
        raise PlugmanError(
            f"marketplace {market.name!r}: its folder {market.root} is gone (moved or deleted)",
            hint=f"add it from where it is now (plugman marketplace add FOLDER), or remove it "
            f"(plugman marketplace remove {market.name})",
        )
    loaded, _sink = catalog.load(
        file, report, official=official(market.source), source_keys=extensions.source_locations
    )
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


def fetch(
    source: MarketplaceSource, staging: Path, name: str | None = None
) -> tuple[Path, str | None]:
    """Bring a marketplace into `staging` (git, url) or find it in place (directory); a url
    one with its headers helper's headers, else the host's netrc entry (core.http_auth)."""
    if source.kind == "directory":
        return Path(source.location), None
    if source.kind == "git":
        where = PluginSource("url", source.location, source.ref)
        fetched = fetch_tree(where, staging / "m", progress=progress.say)
        return fetched.root, fetched.pin
    target = staging / "m" / ".claude-plugin" / "marketplace.json"
    target.parent.mkdir(parents=True)
    # lazy: core.http_auth takes ~7 ms to import, only this path needs it
    from plugman.core import http_auth
    from plugman.core.download import download

    progress.say(f"downloading {source.location}")
    download(source.location, target, auth=http_auth.for_url(source.location, source.helper, name))
    return staging / "m", None


def add(
    paths: Paths,
    text: str,
    name: str | None = None,
    scope: Scope = "user",
    helper: str | None = None,
) -> Known:
    """Register a marketplace (fetching it unless it is a local folder); for the project or
    local scope, also name it in that scope's plugman.toml. `helper`: a url marketplace's
    headers helper."""
    source = classify(text, paths.project_dir, helper)
    check_policy(paths, source)  # before any I/O
    if name is not None:
        check_name(name, source, given=True)
    with session(paths) as work:
        return add_in(work, source, name, scope)


def add_in(
    work: Session,
    source: MarketplaceSource,
    name: str | None,
    scope: Scope = "user",
    origin: str = "user",
) -> Known:
    """`add`, as part of the caller's transaction; `origin`: who asked for it (the user, or a
    project's or the managed settings' declaration, which sync registers)."""
    paths = work.paths
    staging = work.store.stage()
    root, commit = fetch(source, staging, name)
    found = read(Known(name or "", source, root, commit))
    final = name or found.market.name
    check_name(final, source, given=name is not None)
    for message in found.warnings:
        progress.warn(message)
    entries = registry(paths)
    _check_free(final, entries.get(final), source)
    if source.kind != "directory":
        cache = paths.marketplaces_dir / final
        work.tx.replace_dir(cache, root)
        root = cache
    entries[final] = entry_for(source, root, commit, origin)
    write_registry(paths, entries, work.tx)
    if scope != "user":
        record = InstallRecord.load(paths, scope)
        if declare(work, record, final, source):
            work.tx.write(record.path, record.to_bytes())
    return Known(final, source, root, commit)


def _check_free(name: str, registered: Registered | None, source: MarketplaceSource) -> None:
    """Refuse to replace a registered marketplace of the same name from another source."""
    if registered is None:
        return
    old = registered.source
    if (old.kind, old.location, old.ref) != (source.kind, source.location, source.ref):
        raise PlugmanError(
            f"a marketplace named {name!r} is already registered, from {old.location}",
            hint=f"remove it first (plugman marketplace remove {name}), or give this one "
            "another name with --name",
        )


def declare(work: Session, record: InstallRecord, name: str, source: MarketplaceSource) -> bool:
    """Name a marketplace in the scope's plugman.toml (unless it is there); whether it wrote."""
    if name in declarations.declared(work.paths, record.scope, "marketplaces"):
        return False
    import tomlkit  # an edit that keeps the file's layout (~10 ms to import: only here)

    value = tomlkit.inline_table()
    value["source"] = portable(source, work.paths.project_dir)
    if source.ref:
        value["ref"] = source.ref
    if source.helper:
        value["headersHelper"] = source.helper
    declarations.set_entry(work.tx, work.paths, record, "marketplaces", name, value)
    return True


def undeclare(work: Session, record: InstallRecord, name: str) -> None:
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
            for key, value in InstallRecord.load(paths, scope).plugins.items()
            if value.marketplace == name
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
            record = InstallRecord.load(paths, scope)
            undeclare(work, record, name)
            if name in record.declared_marketplaces:
                record.declared_marketplaces.remove(name)
            work.tx.write(record.path, record.to_bytes())
    return markets[name]


def update(paths: Paths, names: list[str], failed: list[Failed] | None = None) -> list[Known]:
    """Fetch the named (default: all) marketplaces again. A named one that fails refuses the
    command; updating all, one that is blocked, broken or unreachable goes into `failed` (when
    given) and the rest are updated."""
    # lazy: config.policy_plugins takes ~4 ms to import, only this path needs it
    from plugman.config.policy_plugins import UNKNOWN

    updated = []
    with session(paths) as work:
        entries = registry(paths)
        for name in names or list(entries):
            if name not in entries:
                raise PlugmanError(
                    f"marketplace {name!r} is not known", hint="run: plugman marketplace list"
                )
            market = entries[name].known(name)
            try:
                check_policy(paths, market.source)
                root, commit = fetch(market.source, work.store.stage(), name)
                load(market._replace(root=root), warn=True)
            except PlugmanError as exc:
                if names or failed is None:
                    raise
                failed.append(Failed.of(name, None, exc))
                continue
            if market.source.kind != "directory":
                work.tx.replace_dir(market.root, root)
            was = entries[name].origin  # who had it registered stays so
            entries[name] = entry_for(
                market.source, market.root, commit, UNKNOWN if was is None else was
            )
            updated.append(market._replace(commit=commit))
        write_registry(paths, entries, work.tx)
    return updated


def _readable(market: Known, named: str | None) -> Catalog | None:
    """A catalog to search; one that has become unreadable is skipped with a warning unless
    the spec names it, so one broken marketplace does not block installs from the others."""
    try:
        return read(market)
    except PlugmanError as exc:
        if named is not None:
            raise
        progress.warn(f"{exc.message}; its plugins are left out of the search")
        return None


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
    catalogs = [(m, found) for m in markets.values() if (found := _readable(m, marketplace))]
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
        raise SharedNameError(name, [f"{name}@{m.name}" for m, _e in hits])
    return hits[0]


class SharedNameError(PlugmanError):
    """A plugin name two or more known marketplaces list: `candidates`, each NAME@MARKETPLACE."""

    def __init__(self, name: str, candidates: list[str]) -> None:
        super().__init__(
            f"plugin {name!r} is in several marketplaces: {', '.join(candidates)}",
            hint="say which one: plugman install NAME@MARKETPLACE",
        )
        self.candidates = candidates

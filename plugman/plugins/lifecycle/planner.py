"""From install specs to a plan: which plugins, from where, at which version, and why.

A spec is `name`, `name@marketplace`, either with a PEP 440 specifier (`x@m==1.2.0`,
`x>=1.2,<2`), a local path, a git URL (`…#ref`), an archive URL (`…#sha256=…`) or an OCI
artifact (`oci://REGISTRY/REPO:TAG` or `…@sha256:…`), or a spec an extension's source kind
claims (`hg+https://…`); the source kinds say which (`SourceKind.claim`). Every plugin in the
plan is fetched into staging and validated; its `dependencies` join the plan,
and a version conflict is reported with the chains that caused it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from plugman.core import progress, versions
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.jsonvalue import PluginFields
from plugman.core.paths import Paths
from plugman.core.sources import LockedSource
from plugman.core.state import InstalledPlugin
from plugman.core.store import Store
from plugman.extensions import source_kind
from plugman.manifest import acceptance
from plugman.manifest import plugin as plugins
from plugman.manifest.diagnostics import Diagnostic
from plugman.manifest.model import Dependency, Plugin, PluginSource
from plugman.manifest.reader import Report
from plugman.plugins.catalog import marketplaces, registry
from plugman.plugins.catalog.pins import lock_source, version_of
from plugman.plugins.sources import claim, fetch

DIRECT = "direct"  # the marketplace name of plugins installed from a path, git URL or archive
NAME_SPEC = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:@(?P<market>[A-Za-z0-9][A-Za-z0-9._-]*))?"
    r"\s*(?P<spec>[=<>!~^].*)?$"
)


class PluginRequest(NamedTuple):
    """A plugin asked for: by name (in a marketplace, with a version specifier), or by a
    source given directly (`direct`)."""

    text: str
    name: str | None = None
    marketplace: str | None = None
    specifier: str = ""
    direct: PluginSource | None = None


class Planned(NamedTuple):
    id: str
    name: str
    marketplace: str
    version: str
    source: LockedSource  # as written to the lock
    tree: Path  # the staged plugin folder
    plugin: Plugin
    entry: PluginFields | None  # the marketplace entry, when it defines the plugin
    specifier: str
    required_by: tuple[str, ...]
    hidden_text: bool = False  # it has hidden text, let in by --allow-hidden-text
    signer: str | None = (
        None  # who signed it (plugman.plugins.supply_chain.signing); None: unsigned
    )
    signers: tuple[str, ...] = ()  # every key that signed it, validly (several: one is recorded)
    released: str | None = None  # its signed manifest's creation time (signing.Admitted)


def parse_spec(text: str, cwd: Path) -> PluginRequest:
    """What an install spec asks for: a source a built-in kind claims (a folder, an archive, a
    git or OCI URL), a plugin by name, or a source an extension's kind claims (`hg+https://…`);
    the extensions are loaded only for a spec that is neither of the first two."""
    direct = claim(text, cwd)
    if direct is not None:
        return PluginRequest(text, direct=direct)
    match = NAME_SPEC.match(text.strip())
    direct = None if match else claim(text, cwd, entry_points=True)
    if direct is not None:
        return PluginRequest(text, direct=direct)
    if not match:
        raise UsageError(
            f"{text!r} is not a plugin spec",
            hint="use NAME, NAME@MARKETPLACE, NAME@MARKETPLACE>=1.0, a folder, a git "
            "URL, an archive URL, or a source an installed extension adds",
        )
    specifier = (match["spec"] or "").strip()
    versions.check(specifier)
    return PluginRequest(text, match["name"], match["market"], specifier)


def plan(
    paths: Paths,
    store: Store,
    specs: list[PluginRequest],
    installed: Mapping[str, InstalledPlugin],
    *,
    allow_hidden: bool | set[str] = False,
    skipped: dict[str, str] | None = None,
) -> list[Planned]:
    """Fetch and validate every requested plugin and its dependencies. `allow_hidden`: let in
    plugins with hidden text (True: all; a set: those plugin ids, as the lock allows them).
    `skipped`: a plugin the managed policy blocks is left out and put here (id -> why, the
    rule and its file) instead of refusing the whole plan (sync)."""
    return _Planner(paths, store, installed, allow_hidden, skipped).run(specs)


def _request(dep: Dependency, wanted_by: Planned) -> PluginRequest:
    """A dependency as a request: a bare name is looked up in its plugin's marketplace."""
    return PluginRequest(
        dep.name, dep.name, dep.marketplace or wanted_by.marketplace, dep.version or ""
    )


class _Planner:
    def __init__(
        self,
        paths: Paths,
        store: Store,
        installed: Mapping[str, InstalledPlugin],
        allow_hidden: bool | set[str] = False,
        skipped: dict[str, str] | None = None,
    ):
        self.allow_hidden = allow_hidden
        self.skipped = skipped
        self.paths = paths
        self.store = store
        self.installed = installed
        self.planned: dict[str, Planned] = {}
        self.wanted: dict[str, list[tuple[str, tuple[str, ...]]]] = {}

    def run(self, specs: list[PluginRequest]) -> list[Planned]:
        queue: list[tuple[PluginRequest, tuple[str, ...], str | None]] = [
            (spec, (), None) for spec in specs
        ]
        done = 0
        while queue:
            spec, chain, optional_for = queue.pop(0)
            done += 1
            progress.step(done, done + len(queue), f"fetching {spec.text}")
            found = (
                self.one(spec, chain) if optional_for is None else self.optional(spec, optional_for)
            )
            if found is not None:
                queue += [
                    (_request(dep, found), (*chain, found.id), None)
                    for dep in found.plugin.dependencies
                ]
                queue += [
                    (_request(dep, found), (), found.id)
                    for dep in found.plugin.optional_dependencies
                ]
        return list(self.planned.values())

    def optional(self, spec: PluginRequest, wanted_by: str) -> Planned | None:
        """An optional dependency (Claude Code's `optionalDependencies`): installed with the
        plugin as a plugin of its own (the user may uninstall it alone), unless it is there
        already; one that cannot be installed is left out with a warning, as Claude Code does."""
        try:
            _known, entry = marketplaces.find(self.paths, str(spec.name), spec.marketplace)
            if f"{entry.name}@{_known.name}" in self.installed:
                return None
            return self.one(spec, ())
        except PlugmanError as exc:
            progress.warn(
                f"optional dependency {spec.text}@{spec.marketplace} of {wanted_by} left out: "
                f"{exc.message}"
            )
            return None

    def one(self, spec: PluginRequest, chain: tuple[str, ...]) -> Planned | None:
        if spec.direct is not None:
            return self.add(self.fetch(spec.direct, None, DIRECT, None, spec, chain))
        known, entry = marketplaces.find(self.paths, str(spec.name), spec.marketplace)
        plugin_id = f"{entry.name}@{known.name}"
        if self.skipped is not None and self.blocked(plugin_id):  # its marketplace's block too
            return None
        registry.check_policy(self.paths, known.source)
        registry.check_plugin_policy(self.paths, plugin_id)
        self.wanted.setdefault(plugin_id, []).append((spec.specifier, chain))
        if plugin_id in self.planned:
            self.check(self.planned[plugin_id])
            return None
        if (
            plugin_id in self.installed
            and chain
            and versions.satisfies(self.installed[plugin_id].version, spec.specifier)
        ):
            return None  # a dependency that is already there
        if entry.source is None:
            raise PlugmanError(
                f"{plugin_id} has no usable source in its marketplace",
                hint=f"run: plugman validate {known.root}",
            )
        if registry.remote(known.source) and source_kind(entry.source.kind).names_local_file(
            entry.source
        ):
            raise PlugmanError(
                f"{plugin_id} comes from the remote marketplace {known.name!r} but names a file "
                f"on this machine ({entry.source.location!r}); plugman will not fetch it",
                hint="a remote marketplace may only list remote sources or folders inside "
                "itself; install a local plugin from its folder yourself",
            )
        fields = None if entry.strict else entry.entry
        planned = self.fetch(entry.source, known, known.name, fields, spec, chain, plugin_id)
        if planned.plugin.version is None and entry.version:  # as Claude Code: plugin.json's
            planned = planned._replace(version=entry.version)  # version, else the entry's
        # the marketplace's name for a plugin is the one used, whatever its plugin.json says
        return self.add(planned._replace(id=plugin_id, name=entry.name))

    def fetch(
        self,
        source: PluginSource,
        known: registry.Known | None,
        market: str,
        fields: PluginFields | None,
        spec: PluginRequest,
        chain: tuple[str, ...],
        plugin_id: str | None = None,
    ) -> Planned:
        from plugman.plugins.supply_chain import signing  # ~1.5 ms: only when a plugin is fetched

        base = known.root if known else None
        with registry.credentials(known):
            fetched = fetch(source, self.store.stage() / "tree", base=base, progress=progress.say)
        official = known is not None and registry.official(known.source)
        allow = self.allow_hidden
        # a direct install's id is known once loaded: the lock's allowance is checked then
        allowed = allow if isinstance(allow, bool) else plugin_id in allow or plugin_id is None
        hidden: list[bool] = []
        loaded = validate_tree(fetched.root, fields, spec.text, official, allowed, hidden)
        if loaded.format == "folders":  # no manifest: named for where it came from
            loaded = loaded._replace(name=source_kind(source.kind).plugin_name(source))
        lock_allows = isinstance(allow, bool) or f"{loaded.name}@{market}" in allow
        if hidden and plugin_id is None and not lock_allows:  # refused, with its findings
            validate_tree(fetched.root, fields, spec.text, official)
        version = loaded.version or version_of(source.kind, fetched.pin)
        admitted = signing.admitted(self.paths, source, fetched.pin, spec.text)
        return Planned(
            f"{loaded.name}@{market}",
            loaded.name,
            market,
            version,
            lock_source(source, fetched.pin, known),
            fetched.root,
            loaded,
            fields,
            spec.specifier,
            chain,
            bool(hidden),
            *admitted,
        )

    def blocked(self, plugin_id: str) -> bool:
        """Whether the managed policy blocks `plugin_id`: refused, or (`skipped`) left out."""
        refused = registry.plugin_block(self.paths, plugin_id)
        if refused is None:
            return False
        if self.skipped is None:
            raise refused
        self.skipped[plugin_id] = refused.message
        return True

    def add(self, planned: Planned) -> Planned | None:
        for kind, name in (("plugin", planned.name), ("marketplace", planned.marketplace)):
            reason = registry.lookalike(name)
            if reason:
                raise PlugmanError(
                    f"{kind} name {name!r} {reason}; plugman will not install it",
                    hint="plugin and marketplace names must be ASCII; ask the publisher to "
                    "rename it",
                )
        if self.blocked(planned.id):  # a direct source too
            return None
        self.planned[planned.id] = planned
        self.wanted.setdefault(planned.id, []).append((planned.specifier, planned.required_by))
        self.check(planned)
        return planned

    def check(self, planned: Planned) -> None:
        bad = [
            (s, c)
            for s, c in self.wanted.get(planned.id, [])
            if not versions.satisfies(planned.version, s)
        ]
        if bad:
            lines = [f"{' -> '.join(c) or 'you'} require {s}" for s, c in self.wanted[planned.id]]
            raise PlugmanError(
                f"cannot install {planned.id} {planned.version}: "
                + "; ".join(dict.fromkeys(lines)),
                hint="relax one of these version ranges",
            )


def validate_tree(
    root: Path,
    fields: PluginFields | None,
    what: str,
    official: bool = False,
    allow_hidden: bool = False,
    hidden: list[bool] | None = None,
) -> Plugin:
    """Load a fetched plugin as Claude Code accepts it (plugman.manifest.acceptance): refused
    for an error in its manifest, with a warning for each component left out; refused for
    hidden text unless `allow_hidden` (then `hidden` gets True appended)."""
    report = Report()
    entry_file = root / ".claude-plugin" / "marketplace-entry"
    sink = report.sink(entry_file)
    entry = plugins.Declaration(fields, sink, official) if fields is not None else None
    loaded = plugins.load(root, report, entry, strict=fields is None, official=official, scan=True)
    _hidden_text(report, root, what, allow_hidden, hidden)
    _kind, manifest = plugins.manifest_file(root)
    found = acceptance.sort(report.diagnostics, {str(entry_file), str(manifest)})
    if loaded is None or found.fatal:
        shown = "; ".join(acceptance.where(d, root) for d in found.fatal[:3])
        raise PlugmanError(
            f"{what} is not a valid plugin: {shown or 'it cannot be loaded'}",
            hint="run: plugman validate on the plugin to see every issue",
        )
    for finding in found.tolerated:
        progress.warn(f"{loaded.name}: {acceptance.tolerated(finding, root)}")
    for file in dict.fromkeys(d.file for d in found.skipped):
        first = next(d for d in found.skipped if d.file == file)
        progress.warn(
            f"{loaded.name}: {_relative(file, root)} is left out (it does not load): "
            f"{acceptance.where(first, root)}"
        )
    return loaded


def _hidden_text(
    report: Report, root: Path, what: str, allow: bool, hidden: list[bool] | None
) -> None:
    """Refuse hidden text (plugman.manifest.hidden) unless allowed; warn of invisible text.
    The findings leave the report: allowed, they must not leave their component out."""
    found = [d for d in report.diagnostics if d.code in ("hidden-text", "invisible-text")]
    if not found:
        return
    report.diagnostics[:] = [d for d in report.diagnostics if d not in found]
    blocking = [d for d in found if d.code == "hidden-text"]
    shown = [f"{_relative(d.file, root)}{_at(d)}: {d.message}" for d in found]
    if blocking and not allow:
        first = [s for s, d in zip(shown, found, strict=True) if d.code == "hidden-text"]
        more = f" (and {len(first) - 3} more)" if len(first) > 3 else ""
        raise PlugmanError(
            f"{what} hides text from its reviewer: {'; '.join(first[:3])}{more}",
            hint="read it with plugman validate; if you trust it, install with --allow-hidden-text",
        )
    if blocking and hidden is not None:
        hidden.append(True)
    for line in shown:
        progress.warn(f"{what}: {line}")


def _at(finding: Diagnostic) -> str:
    """`:line:column`, and ` key.path` where the finding has one (a value, an entry's key)."""
    line = f":{finding.line}:{finding.column}" if finding.line else ""
    return line + (f" {finding.path}" if finding.path else "")


def _relative(file: str, root: Path) -> str:
    path = Path(file)
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else file

"""`plugman validate`: check plugins, marketplaces and single files, reporting every issue."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from plugman.core.errors import PlugmanError, UsageError
from plugman.manifest import gemini, hooks, marketplace, mcp, plugin, skills
from plugman.manifest.diagnostics import ERROR, WARNING, Diagnostic
from plugman.manifest.model import Plugin
from plugman.manifest.reader import Report


class Validation(NamedTuple):
    diagnostics: list[Diagnostic]
    files: list[str]

    @property
    def errors(self) -> int:
        return sum(d.severity == ERROR for d in self.diagnostics)

    @property
    def warnings(self) -> int:
        return sum(d.severity == WARNING for d in self.diagnostics)


def validate(
    paths: Iterable[Path],
    *,
    strict: bool = False,
    source_keys: marketplace.SourceKeys,
) -> Validation:
    """Validate every path (warnings become errors when `strict`); UsageError for a bad path.
    `source_keys`: the registered source kinds, for marketplaces
    (`plugman.extensions.source_locations`)."""
    run = _Run(source_keys)
    for path in paths:
        run.path(path)
    found = run.report.diagnostics
    if strict:
        found = [d.escalated() for d in found]
    found.sort(key=lambda d: (d.file, d.line or 0, d.column or 0))
    return Validation(found, run.report.files)


class InvalidPluginError(PlugmanError):
    """A plugin that failed validation; `diagnostics` are every finding, in validator order."""

    def __init__(self, message: str, diagnostics: list[Diagnostic], *, hint: str, where: str):
        super().__init__(message, hint=hint, where=where)
        self.diagnostics = diagnostics


def valid_plugin(root: Path, *, strict: bool = False) -> tuple[Plugin, list[Diagnostic]]:
    """The plugin in the folder `root` and its warnings. InvalidPluginError (with every
    finding) when it has errors (warnings count as errors when `strict`); UsageError when
    `root` is no plugin folder."""
    if not root.is_dir():
        raise UsageError(f"{root} is not a folder", hint="pass a plugin folder")
    if plugin.manifest_file(root)[1] is None and not plugin.has_components(root):
        raise UsageError(
            f"{root} is not a plugin folder",
            hint="a plugin has .claude-plugin/plugin.json (plugman new NAME makes one)"
            + ("; this is a marketplace: pass one of its plugin folders" if _market(root) else ""),
        )
    run = _Run(_no_sources)  # a plugin folder: no marketplace is read
    loaded = run.plugin(root.absolute())
    found = sorted(run.report.diagnostics, key=lambda d: (d.file, d.line or 0, d.column or 0))
    if strict:
        found = [d.escalated() for d in found]
    errors = sum(d.severity == ERROR for d in found)
    if errors or loaded is None:
        raise InvalidPluginError(
            f"the plugin is not valid ({errors} error{'s' * (errors != 1)})",
            found,
            where=str(root),
            hint=f"fix what is listed (plugman validate {'--strict ' * strict}{root}), "
            "then run the command again",
        )
    return loaded, found


def _market(root: Path) -> bool:
    return (root / ".claude-plugin" / "marketplace.json").is_file()


def _no_sources(entry_points: bool = True) -> dict[str, str]:
    return {}


class _Run:
    def __init__(self, source_keys: marketplace.SourceKeys) -> None:
        self.source_keys = source_keys
        self.report = Report()
        self.report.texts = {}  # read once: the hidden-text scan takes what the loaders read
        self.plugins: set[Path] = set()

    def path(self, path: Path) -> None:
        if not path.exists():
            raise UsageError(
                f"{path} does not exist",
                hint="pass a plugin or marketplace folder, "
                "or a plugin.json, marketplace.json, hooks.json, .mcp.json or SKILL.md",
            )
        path = path.absolute()  # `x.json` has a parent folder too
        if path.is_dir():
            self.folder(path)
        else:
            self.file(path)

    def folder(self, root: Path) -> None:
        market = root / ".claude-plugin" / "marketplace.json"
        if market.is_file():
            self.marketplace(market)
        manifest = plugin.manifest_file(root)[1]
        if manifest is not None or (plugin.has_components(root) and not market.is_file()):
            self.plugin(root)
        elif not market.is_file():
            raise UsageError(
                f"{root} is not a plugin or marketplace folder",
                hint="expected .claude-plugin/plugin.json, .claude-plugin/marketplace.json, "
                "plugin.json, gemini-extension.json, or skills/, commands/, agents/, "
                "hooks/hooks.json or .mcp.json",
            )

    def plugin(
        self,
        root: Path,
        entry: plugin.Declaration | None = None,
        strict: bool = True,
        manifest: Path | None = None,
    ) -> Plugin | None:
        key = root.resolve()
        if key in self.plugins and manifest is None:
            return None
        self.plugins.add(key)
        return plugin.load(root, self.report, entry, strict, manifest, scan=True)

    def plugin_manifest(self, file: Path) -> None:
        """A plugin.json given directly: `.claude-plugin/` (or Cursor's, Codex's) or the root."""
        if file.parent.name in plugin.MANIFEST_DIRS:
            self.plugin(file.parent.parent, manifest=file)
        else:
            self.plugin(file.parent, manifest=file)

    def marketplace(self, file: Path) -> None:
        market, sink = marketplace.load(file, self.report, source_keys=self.source_keys)
        _scan(self.report, file)  # the catalog's text, and the entries defining plugins
        if market is None:
            return
        for index, entry in enumerate(market.plugins):
            root = marketplace.local_root(market, entry)
            if root is None:
                continue  # remote sources are fetched and checked at install time
            where = ("plugins", index)
            if not root.is_dir():  # a warning, as in `claude plugin validate`
                sink.warning(
                    "missing-file",
                    f"plugin folder {entry.source.location!r} does not exist"
                    if entry.source
                    else "missing plugin folder",
                    (*where, "source"),
                    f"create {root} or fix the source path",
                )
                continue
            declaration = plugin.Declaration(entry.entry, sink.child(where), market.official)
            loaded = self.plugin(root, declaration, entry.strict)
            if (
                loaded
                and entry.version
                and loaded.manifest.get("version")
                not in (
                    None,
                    entry.version,
                )
            ):
                sink.warning(
                    "version-mismatch",
                    f"entry version {entry.version!r} differs from plugin.json "
                    f"version {loaded.manifest['version']!r}; plugin.json wins",
                    (*where, "version"),
                    "set the version in one place",
                )

    def file(self, file: Path) -> None:
        name = file.name
        if name == "marketplace.json":
            self.marketplace(file)
        elif name == "plugin.json":
            self.plugin_manifest(file)
        elif name == "gemini-extension.json":
            gemini.load(file, self.report)
        elif name == "SKILL.md":
            skills.load(file, self.report)
            _scan(self.report, file)
        elif name.endswith(".json") and "hook" in name.lower():
            hooks.load_file(file, self.report)
            _scan(self.report, file)
        elif name.endswith(".json") and "mcp" in name.lower():
            agent_plugins = name == "mcp.json" and (file.parent / "plugin.json").is_file()
            mcp.load_file(file, self.report, agent_plugins=agent_plugins)
            _scan(self.report, file)
        elif name.endswith(".md") and file.parent.name in ("agents", "commands"):
            skills.check_markdown(file, self.report, agent=file.parent.name == "agents")
            _scan(self.report, file)
        else:
            raise UsageError(
                f"{file}: plugman does not know this kind of file",
                hint="it validates plugin.json, marketplace.json, gemini-extension.json, "
                "hooks.json, .mcp.json / mcp.json, SKILL.md, and agents/ or commands/ *.md",
            )


def _scan(report: Report, file: Path) -> None:
    """Scan one file given on its own for hidden text (plugman.manifest.exposure)."""
    from plugman.manifest import exposure  # its patterns compile on import: only here

    exposure.check_files(report, [file])

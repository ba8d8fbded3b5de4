"""Plugins: `.claude-plugin/plugin.json`, Agent Plugins 1.0, bare folders or a marketplace entry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plugman.core.jsonvalue import PluginFields
from plugman.manifest import acceptance, gemini, schema
from plugman.manifest.model import Dependency, Plugin, UserOption
from plugman.manifest.names import check_plugin_name
from plugman.manifest.plugin_parts import DEFAULT_HOOKS, Parts
from plugman.manifest.plugin_parts import Declaration as Declaration
from plugman.manifest.reader import Report, read_json

COMPONENT_KEYS = (
    "skills",
    "commands",
    "agents",
    "hooks",
    "mcpServers",
    "lspServers",
    "workflows",
    "outputStyles",
)
MANIFEST_DIRS = (".claude-plugin", ".cursor-plugin", ".codex-plugin")  # same plugin.json shape


def manifest_file(root: Path, manifest: Path | None = None) -> tuple[str, Path | None]:
    """Which format the plugin at `root` uses, and its manifest file."""
    if manifest is not None:
        return ("agent-plugins" if manifest.parent == root else "claude"), manifest
    for kind, file in (
        ("claude", root / ".claude-plugin" / "plugin.json"),
        ("agent-plugins", root / "plugin.json"),
        ("gemini", root / "gemini-extension.json"),
    ):
        if file.is_file():
            return kind, file
    return "folders", None


def has_components(root: Path) -> bool:
    defaults = ("skills", "commands", "agents", DEFAULT_HOOKS, ".mcp.json", "SKILL.md")
    return any((root / name).exists() for name in defaults)


def load(
    root: Path,
    report: Report,
    entry: Declaration | None = None,
    strict: bool = True,
    manifest_path: Path | None = None,
    official: bool = False,
    *,
    scan: bool = False,
) -> Plugin | None:
    """Load the plugin at `root`; `entry` is its marketplace entry, if any, and `official` says
    whether one of Anthropic's own marketplaces lists it (it may use a reserved name). A
    component whose file has an error is left out (see plugman.manifest.acceptance). With
    `scan` (validate, install), what it gives agents is scanned for hidden text
    (plugman.manifest.exposure); resolving an installed plugin does not scan it again."""
    before = len(report.files)
    if scan and report.texts is None:
        report.texts = {}  # the scan takes the texts the load reads: no file is read twice
    loaded = _load(root, report, entry, strict, manifest_path, official)
    if scan:
        from plugman.manifest import exposure  # its patterns compile on import: only here

        exposure.check_plugin(report, root, loaded, report.files[before:], entry)
    return loaded


def _load(
    root: Path,
    report: Report,
    entry: Declaration | None,
    strict: bool,
    manifest_path: Path | None,
    official: bool,
) -> Plugin | None:
    kind, file = manifest_file(root, manifest_path)
    if kind == "gemini" and file is not None:
        return gemini.load(file, report)
    declarations: list[Declaration] = []
    manifest: PluginFields = {}
    if file is not None:
        doc, sink = read_json(file, report)
        if doc is None:
            return None
        schema.validate(doc.value, "plugin.schema.json", sink)
        if not isinstance(doc.value, dict):
            return None
        manifest = doc.value
        declarations.append(Declaration(manifest, sink))
    if entry is not None:
        declarations = _with_entry(declarations, entry, strict)
    elif file is None and not has_components(root):
        report.sink(root).error(
            "not-a-plugin",
            "no plugin manifest and no component folders",
            (),
            "add .claude-plugin/plugin.json with at least a 'name'",
        )
        return None
    kind = kind if entry is None or strict else "marketplace-entry"
    return _build(root, kind, manifest, declarations, entry, report, official)


def load_as_installed(
    root: Path, fields: PluginFields | None, report: Report | None = None
) -> Plugin | None:
    """The plugin at `root` as install loaded it: with the marketplace entry `fields` that
    defines it (None: strict, from its own manifest)."""
    report = report if report is not None else Report()
    entry = None
    if fields is not None:
        entry = Declaration(fields, report.sink(root / ".claude-plugin" / "marketplace-entry"))
    return load(root, report, entry, strict=fields is None)


def claude_refusal(root: Path, fields: PluginFields | None = None) -> str | None:
    """Why Claude Code will not load the plugin at `root` (`fields`: the marketplace entry
    defining it, for `strict: false`), in words for a note; None when it loads it. See
    `acceptance.claude_refusal`."""
    report = Report()
    load_as_installed(root, fields, report)
    return acceptance.claude_refusal(report.diagnostics)


def _with_entry(
    declarations: list[Declaration], entry: Declaration, strict: bool
) -> list[Declaration]:
    if strict:
        return [*declarations, entry]
    for fields, _sink, _official in declarations:
        declared = [key for key in COMPONENT_KEYS if key in fields]
        if declared:
            entry.sink.error(
                "conflicting-manifests",
                f"entry has strict: false but plugin.json also declares {', '.join(declared)}",
                ("strict",),
                "declare components in one place: remove them from plugin.json, or set "
                "strict: true",
            )
    return [entry]


def _build(
    root: Path,
    kind: str,
    manifest: PluginFields,
    declarations: list[Declaration],
    entry: Declaration | None,
    report: Report,
    official: bool,
) -> Plugin:
    found = Parts(root, kind, declarations, report)
    fields = entry.fields if entry else {}
    version = manifest.get("version") or fields.get("version")
    description = manifest.get("description") or fields.get("description")
    return Plugin(
        name=_name(root, manifest, entry, declarations, official),
        root=root,
        format=kind,
        manifest=manifest,
        version=version if isinstance(version, str) else None,
        description=description if isinstance(description, str) else None,
        skills=tuple(found.skills()),
        commands=tuple(found.markdown("commands", agent=False)),
        agents=tuple(found.markdown("agents", agent=True)),
        hooks=tuple(found.hooks()),
        mcp_servers=tuple(found.servers()),
        dependencies=tuple(_dependencies(manifest.get("dependencies"))),
        optional_dependencies=tuple(_optional(manifest)),
        user_config=tuple(_options(manifest.get("userConfig") or fields.get("userConfig"))),
    )


def _name(
    root: Path,
    manifest: PluginFields,
    entry: Declaration | None,
    declarations: list[Declaration],
    official: bool,
) -> str:
    """The plugin's name: its marketplace entry's when listed, else plugin.json's, else the
    folder's. plugin.json's name is checked either way."""
    name = manifest.get("name")
    official = official or (entry is not None and entry.official)
    if isinstance(name, str) and declarations and declarations[0].fields is manifest:
        check_plugin_name(name, declarations[0].sink, ("name",), official=official)
    if entry is not None and isinstance(entry.fields.get("name"), str):
        return str(entry.fields["name"])
    return name if isinstance(name, str) else root.name


def _dependencies(value: Any) -> list[Dependency]:
    if not isinstance(value, list):
        return []
    found = []
    for item in value:
        if isinstance(item, str):
            name, _, marketplace = item.partition("@")
            found.append(Dependency(name, None, marketplace or None))
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            version, market = item.get("version"), item.get("marketplace")
            found.append(
                Dependency(
                    item["name"],
                    version if isinstance(version, str) else None,
                    market if isinstance(market, str) else None,
                )
            )
    return found


def _optional(manifest: PluginFields) -> list[Dependency]:
    """`optionalDependencies` as Claude Code 2.1.332 reads them: the readable elements of a list
    (anything else is dropped), less the plugins `dependencies` also names (those are required)."""
    required = {(d.name, d.marketplace) for d in _dependencies(manifest.get("dependencies"))}
    found = _dependencies(manifest.get("optionalDependencies"))
    return [d for d in found if (d.name, d.marketplace) not in required]


def _options(value: Any) -> list[UserOption]:
    """The `userConfig` options (their shapes are checked by the schema, reported there)."""
    if not isinstance(value, dict):
        return []
    found = []
    for key, item in value.items():
        if not isinstance(item, dict) or not isinstance(key, str):
            continue
        bounds = [item.get(k) if _number(item.get(k)) else None for k in ("min", "max")]
        found.append(
            UserOption(
                key,
                str(item.get("type", "string")),
                str(item.get("title", key)),
                str(item.get("description", "")),
                item.get("sensitive") is True,
                item.get("required") is True,
                item.get("default"),
                item.get("multiple") is True,
                *bounds,
            )
        )
    return found


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)

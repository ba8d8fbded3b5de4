"""Plugins: `.claude-plugin/plugin.json`, Agent Plugins 1.0, bare folders or a marketplace entry."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from plugman.manifest import acceptance, components, gemini, hooks, mcp, schema, skills
from plugman.manifest.diagnostics import Sink
from plugman.manifest.model import Dependency, HookHandler, McpServer, Plugin, Skill
from plugman.manifest.names import check_plugin_name
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
T = TypeVar("T")
DEFAULT_HOOKS = "hooks/hooks.json"
MANIFEST_DIRS = (".claude-plugin", ".cursor-plugin", ".codex-plugin")  # same plugin.json shape


class Declaration(NamedTuple):
    """Component fields from one place (plugin.json or a marketplace entry) and where to report."""

    fields: dict[str, Any]
    sink: Sink
    official: bool = False  # listed by one of Anthropic's own marketplaces


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
) -> Plugin | None:
    """Load the plugin at `root`; `entry` is its marketplace entry, if any, and `official` says
    whether one of Anthropic's own marketplaces lists it (it may use a reserved name). A
    component whose file has an error is left out (see plugman.manifest.acceptance)."""
    kind, file = manifest_file(root, manifest_path)
    if kind == "gemini" and file is not None:
        return gemini.load(file, report)
    declarations: list[Declaration] = []
    manifest: dict[str, Any] = {}
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
    manifest: dict[str, Any],
    declarations: list[Declaration],
    entry: Declaration | None,
    report: Report,
    official: bool,
) -> Plugin:
    found = _Components(root, kind, declarations, report)
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
    )


def _name(
    root: Path,
    manifest: dict[str, Any],
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


class _Components:
    """Finds and checks every component of one plugin."""

    def __init__(self, root: Path, kind: str, declarations: list[Declaration], report: Report):
        self.root = root
        self.kind = kind
        self.declarations = declarations
        self.report = report

    def _intact(self, file: Path, start: int) -> bool:
        """No finding since `start` keeps `file` from being used: a broken component (a hooks
        file that is `[]`, say) is left out, as Claude Code leaves it out."""
        name = str(file)
        return not any(
            d.file == name and acceptance.breaks(d) for d in self.report.diagnostics[start:]
        )

    def _load(self, file: Path, load: Callable[[], list[T]]) -> list[T]:
        """What `load` reads from `file`, or nothing when the file has an error."""
        start = len(self.report.diagnostics)
        found = load()
        return found if self._intact(file, start) else []

    def skills(self) -> list[Skill]:
        folders: list[Path] = []
        declared = False
        for fields, sink, _official in self.declarations:
            if "skills" in fields:
                declared = True
                folders += components.resolve_paths(
                    fields["skills"], self.root, sink, ("skills",), "skill"
                )
        if (self.root / "skills").is_dir():
            folders.insert(0, self.root / "skills")
        elif not declared and (self.root / "SKILL.md").is_file():
            folders.append(self.root)
        files = dict.fromkeys(file for folder in folders for file in skills.find(folder))
        return [
            skill
            for file in files
            for skill in self._load(file, partial(_skill, file, self.report))
        ]

    def markdown(self, key: str, *, agent: bool) -> list[Path]:
        """Command or agent files: the declared paths replace the default folder."""
        targets: list[Path] = []
        declared = False
        for fields, sink, _official in self.declarations:
            if key in fields and not isinstance(fields[key], dict):
                declared = True
                found = components.resolve_paths(fields[key], self.root, sink, (key,), key[:-1])
                targets += found
                self._warn_ignored_default(key, found, sink)
        if not declared and (self.root / key).is_dir():
            targets.append(self.root / key)
        return [
            kept
            for file in components.markdown_files(targets)
            for kept in self._load(file, partial(self._markdown, file, agent))
        ]

    def _markdown(self, file: Path, agent: bool) -> list[Path]:
        skills.check_markdown(file, self.report, agent=agent)
        return [file]

    def _warn_ignored_default(self, key: str, found: list[Path], sink: Sink) -> None:
        default = self.root / key
        if default.is_dir() and not any(p == default or default in p.parents for p in found):
            sink.warning(
                "default-folder-ignored",
                f"'{key}' replaces the default {key}/ folder, which is then not loaded",
                (key,),
                f"add './{key}/' to the list to keep it",
            )

    def hooks(self) -> list[HookHandler]:
        default = self.root / DEFAULT_HOOKS
        found = self._hooks_file(default) if default.is_file() else []
        for fields, sink, _official in self.declarations:
            value = fields.get("hooks")
            if isinstance(value, dict):
                found += hooks.handlers(value, sink, ("hooks",))
                continue
            for rel, where in components.as_list(value, ("hooks",)):
                for target in components.resolve_paths(
                    rel, self.root, sink, where, "hooks", ".json"
                ):
                    if target.resolve() == default.resolve():
                        sink.error(
                            "duplicate-hooks",
                            f"{rel!r} is the standard hooks file, which is loaded anyway",
                            where,
                            "remove it from 'hooks'; list only additional hook files",
                        )
                    elif target.is_file():
                        found += self._hooks_file(target)
        return found

    def _hooks_file(self, file: Path) -> list[HookHandler]:
        return self._load(file, lambda: hooks.load_file(file, self.report))

    def servers(self) -> list[McpServer]:
        agent_plugins = self.kind == "agent-plugins"
        default = self.root / ("mcp.json" if agent_plugins else ".mcp.json")
        found = []
        if default.is_file():
            found = self._load(
                default, lambda: mcp.load_file(default, self.report, agent_plugins=agent_plugins)
            )
        for fields, sink, _official in self.declarations:
            value = fields.get("mcpServers")
            if isinstance(value, dict):
                found += mcp.servers(value, sink, ("mcpServers",))
                continue
            for rel, where in components.as_list(value, ("mcpServers",)):
                if rel.endswith(".mcpb") or components.is_remote(rel):
                    continue  # an MCP bundle: fetched and checked at install time
                for target in components.resolve_paths(
                    rel, self.root, sink, where, "MCP config", ".json"
                ):
                    if target.is_file() and target.resolve() != default.resolve():
                        found += self._load(target, partial(mcp.load_file, target, self.report))
        return found


def _skill(file: Path, report: Report) -> list[Skill]:
    skill = skills.load(file, report)
    return [] if skill is None else [skill]


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

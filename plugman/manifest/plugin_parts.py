"""A plugin's components: its skills, commands, agents, hooks and MCP servers, found from the
default folders and the component fields of each declaration (plugin.json, a marketplace
entry). A component whose file does not load is left out, as Claude Code leaves it out (see
plugman.manifest.acceptance)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import NamedTuple, TypeVar

from plugman.core.jsonvalue import PluginFields
from plugman.manifest import acceptance, components, hooks, mcp, skills
from plugman.manifest.diagnostics import Sink
from plugman.manifest.model import HookHandler, McpServer, Skill
from plugman.manifest.reader import Report

T = TypeVar("T")
DEFAULT_HOOKS = "hooks/hooks.json"


class Declaration(NamedTuple):
    """Component fields from one place (plugin.json or a marketplace entry) and where to report."""

    fields: PluginFields
    sink: Sink
    official: bool = False  # listed by one of Anthropic's own marketplaces


class Parts:
    """Finds and checks every component of one plugin."""

    def __init__(self, root: Path, kind: str, declarations: list[Declaration], report: Report):
        self.root = root
        self.kind = kind
        self.declarations = declarations
        self.report = report
        for fields, sink, _official in declarations:
            if not sink.file.endswith("marketplace.json"):  # entries: checked with the catalog
                components.check_paths(fields, sink)
            components.check_commands(fields.get("commands"), sink)

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
                    fields["skills"], self.root, sink, ("skills",), "skill", folders=True
                )
        only = any(components.only_listed_skills(d.fields) is not None for d in self.declarations)
        if (self.root / "skills").is_dir() and not only:
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
                for target in components.resolve_paths(rel, self.root, sink, where, "hooks"):
                    if target.resolve() == default.resolve():  # Claude Code loads it once
                        sink.warning(
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
                for target in components.resolve_paths(rel, self.root, sink, where, "MCP config"):
                    if target.is_file() and target.resolve() != default.resolve():
                        found += self._load(target, partial(mcp.load_file, target, self.report))
        return found


def _skill(file: Path, report: Report) -> list[Skill]:
    skill = skills.load(file, report)
    return [] if skill is None else [skill]

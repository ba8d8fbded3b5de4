"""What a plugin gives agents, scanned for hidden text (plugman.manifest.hidden) as agents get
it, after each format's own decoding:

- every file its load read (plugin.json, SKILL.md, commands, agents, hooks and MCP files), raw,
  JSON files with their escapes decoded, Markdown front matter values after YAML decoding
  (`description: "\\u202e…"`, `"\\U000E0041"`), located at the key (file, line, key path);
- its output styles (`outputStyles`, else the `output-styles/` folder): their text becomes the
  agent's system prompt;
- the files its skills link to (Markdown links, `${CLAUDE_SKILL_DIR}/…` and
  `${CLAUDE_PLUGIN_ROOT}/…` references in SKILL.md to files inside the plugin): the agent reads
  them on demand;
- the scripts its hooks run (files inside the plugin a hook command names through
  `${CLAUDE_PLUGIN_ROOT}`), text files only;
- the name of every file and folder of those inside the plugin, as they become skill, command,
  agent and output-style names: any invisible character in a name is an error;
- the marketplace entry that defines it (its description, inline commands, hooks and servers of
  a `strict: false` entry), walked as decoded JSON, located by key path.

Run by `validate` and by install, sync and update (`plugins.planner.validate_tree`), never by
`config resolve`: what was installed was scanned then, and the store is write-once.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from plugman.core.jsonvalue import HookEntry, PluginFields
from plugman.manifest import components, frontmatter, hidden
from plugman.manifest.diagnostics import KeyPath, Sink
from plugman.manifest.model import Plugin
from plugman.manifest.plugin_parts import Declaration
from plugman.manifest.reader import Report

# Markdown links and images `[text](target)` / `![alt](<target>)`, and skill-relative references
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'][^)]*)?\)")
SKILL_REFERENCE = re.compile(r"\$\{?CLAUDE_SKILL_DIR\}?/([^\s\"'`)<>|;&$]+)")
ROOT_REFERENCE = r"\$\{?CLAUDE_PLUGIN_ROOT\}?/([^\s\"'`)<>|;&$]+)"  # hooks, servers: compiled then
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
STYLES = "output-styles"


def check_plugin(
    report: Report,
    root: Path,
    loaded: Plugin | None,
    files: Iterable[str],
    entry: Declaration | None,
) -> None:
    """Scan what the plugin at `root` gives agents (see the module's docstring) into `report`:
    `files`, the files its load read; `entry`, the marketplace entry defining it, if any."""
    targets = [Path(name) for name in dict.fromkeys(files)]
    texts: dict[Path, str | None] = {}
    if loaded is not None:
        fields = entry.fields if entry is not None else {}
        within = _Within(root)
        extra = [
            *output_styles(within, loaded.manifest, fields),
            *linked(within, [skill.path for skill in loaded.skills], texts, report.texts),
            *scripts(within, [h.entry for h in loaded.hooks]),
        ]
        seen = set(targets)
        targets += [p for p in dict.fromkeys(extra) if p not in seen]
    check_files(report, targets, texts)
    check_names(report, root, targets)
    if entry is not None and not entry.sink.file.endswith("marketplace.json"):
        check_value(entry.sink, entry.fields)  # a catalog file is scanned as a file


def check_files(
    report: Report, files: Iterable[Path], texts: dict[Path, str | None] | None = None
) -> None:
    """Scan each file: raw, JSON escapes decoded, Markdown front matter decoded. Files that
    cannot be read as text are skipped (a load reports those it needed). `texts`: those
    already read; the texts the loaders read (`report.texts`) are taken, not read again."""
    texts = texts if texts is not None else {}
    for path in files:
        text = _text(path, texts, report.texts)
        if text is None:
            continue
        is_json = path.suffix == ".json"
        if hidden.suspect(text, is_json):
            found = hidden.scan(text, is_json)
            if found:
                hidden.report(report.sink(path), found)
        if path.suffix == ".md" and "\\" in text:
            _frontmatter(report, path, text)


def _frontmatter(report: Report, path: Path, text: str) -> None:
    """Front matter values as YAML decodes them: what an escape hides, at its key."""
    block = frontmatter.split(text)
    if block is None or "\\" not in block[0]:
        return
    quiet = Sink(str(path))
    try:
        meta = frontmatter.parse(text, quiet)
    except frontmatter.Unreadable:
        return
    if meta:
        sink = report.sink(path)
        sink.locate = frontmatter.locator(*block)
        check_value(sink, meta, literal=block[0])


def check_value(sink: Sink, value: Any, path: KeyPath = (), literal: str = "") -> None:
    """Every key and string of a decoded JSON or YAML value, located by key path. A finding
    whose characters all stand in `literal` (the raw text, scanned as such) is not repeated."""
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and hidden.suspect(key):
                _value(sink, key, (*path, key), "in a key", literal)
            check_value(sink, item, (*path, key), literal)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_value(sink, item, (*path, index), literal)
    elif isinstance(value, str) and hidden.suspect(value):
        _value(sink, value, path, "in the value", literal)


def _value(sink: Sink, text: str, path: KeyPath, what: str, literal: str) -> None:
    found = [
        f
        for f in hidden.scan(text)
        if not literal or any(chr(c) not in literal for c in f.codepoints)
    ]
    hidden.report(sink, found, what + (" (written as an escape)" if literal else ""), path)


def check_names(report: Report, root: Path, files: Iterable[Path]) -> None:
    """The name of each file and folder inside `root` on the way to `files`: skill, command,
    agent and output-style names come from them, and a name holds no invisible character."""
    seen: set[str] = set()
    prefix = os.path.join(root, "")  # noqa: PTH118 (strings: no Path per file)
    for path in files:
        name = str(path)
        if name.startswith(prefix) and not hidden.suspect(name[len(prefix) :]):
            continue  # no name on the way holds anything (most paths): no need to split it
        try:
            parts = path.relative_to(root).parts
        except ValueError:
            continue
        for depth, part in enumerate(parts):
            if part in seen or not hidden.suspect(part):
                continue
            seen.add(part)
            found = hidden.scan(part)
            if found:
                codes = tuple(c for f in found for c in f.codepoints)
                finding = hidden.Finding(True, 1, 1, codes, hidden.decode_tags(codes) or None)
                kind = "folder" if depth < len(parts) - 1 else "file"
                name = hidden.shown(part)
                message = f"in the {kind} name {name!r}, which becomes a name agents show"
                # located at the folder holding it: the path itself would show the characters
                hidden.report(report.sink(Path(root, *parts[:depth])), [finding], message)


def output_styles(within: _Within, manifest: PluginFields, fields: PluginFields) -> list[Path]:
    """The output style files: those `outputStyles` names (it replaces the default folder),
    else `output-styles/*.md`."""
    declared = [
        rel
        for source in (manifest, fields)
        for rel, _where in components.as_list(source.get("outputStyles"), ("outputStyles",))
    ]
    targets = [t for rel in declared if (t := within.inside(rel)) is not None]
    if not declared:
        targets = [within.root / STYLES]
    found: list[Path] = []
    for target in targets:
        if target.is_dir():
            found += sorted(p for p in target.glob("*.md") if p.is_file())
        elif target.is_file():
            found.append(target)
    return found


def _text(path: Path, texts: dict[Path, str | None], kept: dict[str, str] | None) -> str | None:
    """The text of `path` as `hidden.read` gives it: taken from `kept` (what a loader read,
    `Report.texts`) when there, else read."""
    if path not in texts:
        text = kept.pop(str(path), None) if kept else None
        # a loader reads any UTF-8; `hidden.read` skips a file with a NUL among its first
        # SNIFF_BYTES bytes (binary), so among as many characters: ask it then
        sniff = hidden.SNIFF_BYTES
        texts[path] = text if text is not None and "\x00" not in text[:sniff] else hidden.read(path)
    return texts[path]


def linked(
    within: _Within,
    skill_files: Iterable[Path],
    texts: dict[Path, str | None],
    kept: dict[str, str] | None = None,
) -> list[Path]:
    """Files inside the plugin a SKILL.md links to or names through ${CLAUDE_SKILL_DIR} or
    ${CLAUDE_PLUGIN_ROOT} (`texts`: the files read, kept; `kept`: what the loaders read)."""
    found: list[Path] = []
    for skill in skill_files:
        text = _text(skill, texts, kept)
        if text is None:
            continue
        folder = str(skill.parent)
        relatives: set[str] = set()
        if "](" in text:  # what LINK needs: most SKILL.md files link nowhere
            relatives = {
                target.split("#", 1)[0].split("?", 1)[0]
                for target in LINK.findall(text)
                if not SCHEME.match(target) and not target.startswith(("#", "/", "~"))
            }
        if "CLAUDE_SKILL_DIR" in text:
            relatives.update(SKILL_REFERENCE.findall(text))
        found += [p for rel in relatives if (p := within.file(folder, rel)) is not None]
        if "CLAUDE_PLUGIN_ROOT" in text:
            found += [
                p
                for rel in set(re.findall(ROOT_REFERENCE, text))
                if (p := within.file(within.base, rel)) is not None
            ]
    return found


def scripts(within: _Within, handlers: Iterable[HookEntry]) -> list[Path]:
    """Files inside the plugin the hook handlers' commands name through ${CLAUDE_PLUGIN_ROOT}."""
    found: list[Path] = []
    for entry in handlers:
        words = [entry.get("command"), *(entry.get("args") or [])]
        for word in words:
            if isinstance(word, str) and "CLAUDE_PLUGIN_ROOT" in word:
                found += [
                    p
                    for rel in re.findall(ROOT_REFERENCE, word)
                    if (p := within.file(within.base, rel)) is not None
                ]
    return found


class _Within:
    """Paths inside one plugin folder, links followed: plain strings and os calls, each folder
    asked once whether it is a link (a plugin's SKILL.md files name thousands of candidates)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.base = os.path.normpath(root)
        self.prefix = self.base + os.sep
        self.links: dict[str, bool] = {}
        self.found: dict[str, tuple[str, int] | None] = {}

    def file(self, base: str, rel: str) -> Path | None:
        """`rel` from the folder `base` when it is a file inside the plugin (no link out)."""
        if "%" in rel:
            rel = unquote(rel)
        if not rel or "\x00" in rel or rel.startswith(("/", "\\", "~")):
            return None
        found = self.contained(f"{base}/{rel}")
        return Path(found[0]) if found is not None and stat.S_ISREG(found[1]) else None

    def inside(self, rel: str) -> Path | None:
        """The file or folder `rel` names inside the plugin (no link out), or None."""
        if rel.startswith(("/", "\\", "~")):
            return None
        found = self.contained(f"{self.base}/{rel.replace(chr(92), '/')}")
        return Path(found[0]) if found is not None else None

    def contained(self, joined: str) -> tuple[str, int] | None:
        """`joined`, normalised, and its mode (links followed) when it exists and, links
        followed, stays inside the plugin; else None."""
        normal = os.path.normpath(joined)
        if normal not in self.found:
            self.found[normal] = self._contained(normal)
        return self.found[normal]

    def _contained(self, normal: str) -> tuple[str, int] | None:
        if not normal.startswith(self.prefix):
            return None
        try:
            mode = os.stat(normal).st_mode  # noqa: PTH116
        except (OSError, ValueError):
            return None
        step = normal
        while step != self.base:  # a link on the way may lead out: then only its target decides
            if self._link(step):
                real = os.path.realpath(normal)
                inside = real.startswith(os.path.realpath(self.base) + os.sep)
                return (normal, mode) if inside else None
            step = os.path.dirname(step)  # noqa: PTH120
        return normal, mode

    def _link(self, path: str) -> bool:
        if path not in self.links:
            self.links[path] = os.path.islink(path)  # noqa: PTH114
        return self.links[path]

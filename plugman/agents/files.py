"""A plugin's skills, commands and subagents as files in each linked agent's own folders.

For one link (agent, scope) and what is resolved at that scope, `wanted` gives the artifacts
(`plugman.agents.artifacts`) the agent reads, in its own form (`AgentSpec.skills`, `.commands`,
`.agents`; the translators in `translate_commands` / `translate_agents`), and a note for each
thing it cannot take: a kind of component it has no place for, a form that cannot say part of
a file (kept as text or left out), a file it cannot express at all.

Names: a skill keeps its plain name; when two plugins bring one name into one folder, or the
folder already holds a skill of that name that plugman did not write, it is namespaced
(`<plugin>-<skill>`, its SKILL.md `name` rewritten to match); when even that is taken, it is
not deployed and a note says so. A command or subagent whose file name is taken is not
deployed either (its name is what the user types), with a note. Nothing is overwritten.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

from plugman.agents import skill_names
from plugman.agents.artifacts import Artifact, Ledger
from plugman.agents.targets.components import KINDS, Component, Kind, missing
from plugman.agents.targets.spec import AgentSpec
from plugman.agents.translate import commands as translate_commands
from plugman.agents.translate import subagents as translate_agents
from plugman.agents.translate.common import (
    Refused,
    Translate,
    Translated,
    read,
    safe_name,
    skill_name,
)
from plugman.config.merge import MarkdownComponent
from plugman.config.resolution import Resolution
from plugman.core.state import Scope
from plugman.manifest import frontmatter
from plugman.manifest.diagnostics import WARNING, Sink

FormTranslator = Callable[..., Translated | Refused]
TRANSLATORS: dict[str, FormTranslator] = {
    "commands": translate_commands.command,
    "agents": translate_agents.agent,
}


LOSS = re.compile(r"^(`[^`]+`) (left out|kept as text)\b")


class Where(NamedTuple):
    scope: Scope
    home: Path
    project: Path
    env: Mapping[str, str]


def wanted(
    spec: AgentSpec, where: Where, resolution: Resolution, ledger: Ledger, notes: list[str]
) -> list[Artifact]:
    """What `spec`'s agent reads at `where.scope`, of every enabled plugin resolved there."""
    found: list[Artifact] = []
    losses: dict[str, set[str]] = {}  # left out | kept as text → the fields
    for kind in KINDS:
        items = _of_plugins(resolution, kind)
        component: Component | None = getattr(spec, kind)
        if not items or (component is not None and component.format == "native"):
            continue
        reason = missing(component, kind, spec.label, where.scope)
        folder = None if component is None else component.folder(*where)
        if reason is not None or component is None or folder is None:
            plugins = sorted({item.origin.plugin or "" for item in items})
            notes.append(f"{reason}: not delivered from {', '.join(plugins)}")
            continue
        for item in items:
            made = _skill(item, folder, ledger, notes) if kind == "skills" else None
            if kind != "skills":
                made = _translated(kind, item, component, folder, ledger, notes, losses)
            if made is not None:
                found.append(made)
    notes += [
        f"{how} in its form of plugin commands and subagents: {', '.join(sorted(fields))}"
        for how, fields in sorted(losses.items())
    ]
    return _unique(found, notes)


def _name(item: MarkdownComponent) -> str:
    """The plugin's own name (its id without `@marketplace`), for namespacing."""
    return (item.origin.plugin or "").partition("@")[0]


def _of_plugins(resolution: Resolution, kind: Kind) -> list[MarkdownComponent]:
    items = resolution.skills.values() if kind == "skills" else getattr(resolution, kind)
    return [item for item in items if item.origin.plugin]


def _skill(
    item: MarkdownComponent, folder: Path, ledger: Ledger, notes: list[str]
) -> Artifact | None:
    plugin = _name(item)
    plain = item.name.rpartition(":")[2]
    source = Path(item.path).parent
    for name in (skill_name(plain), skill_names.namespaced(plugin, plain)):
        if name and not ledger.taken(folder / name):
            files = {
                p.relative_to(source).as_posix(): p.read_bytes()
                for p in sorted(source.rglob("*"))
                if p.is_file() and not p.is_symlink()
            }
            if _front_name(files.get("SKILL.md", b"")) != name:
                files["SKILL.md"] = skill_names.renamed(files.get("SKILL.md", b""), name)
            return Artifact(folder / name, files, item.origin.plugin or "", "skills")
    notes.append(f"skill {plain} of {plugin}: {folder / plain} is taken; not deployed")
    return None


def _front_name(data: bytes) -> object:
    try:
        meta = frontmatter.parse(data.decode("utf-8"), Sink("SKILL.md"), WARNING) or {}
    except (UnicodeDecodeError, frontmatter.Unreadable):
        return None
    return meta.get("name")


def _translated(
    kind: str,
    item: MarkdownComponent,
    component: Component,
    folder: Path,
    ledger: Ledger,
    notes: list[str],
    losses: dict[str, set[str]],
) -> Artifact | None:
    plugin = _name(item)
    if component.translate is not None:
        done = _own(component.translate, Path(item.path), plugin, kind)
    else:
        done = TRANSLATORS[kind](Path(item.path), plugin, component.format, root=item.origin.file)
    if isinstance(done, Refused):
        notes.append(f"{done.reason}; not deployed")
        return None
    for note in done.notes:
        lost = LOSS.match(note)
        if lost:  # said once per agent, not once per file
            losses.setdefault(lost.group(2), set()).add(lost.group(1))
        else:
            notes.append(f"{kind[:-1]} {item.name}: {note}")
    first, _, rest = done.name.partition("/")
    path = folder / first
    if ledger.taken(path):
        notes.append(f"{kind[:-1]} {item.name}: {path} is taken; not deployed")
        return None
    return Artifact(path, {rest: done.data}, item.origin.plugin or "", kind)


def _own(translate: Translate, path: Path, plugin: str, kind: str) -> Translated | Refused:
    """An agent's own translator (`Component.translate`) run on the file at `path`; what it
    gives must name a file inside the agent's folder (`NAME` or `NAME/FILE`, each part a plain
    file name), else it is refused."""
    source = read(path)
    where = f"{kind[:-1]} {path.stem} of plugin {plugin}"
    if isinstance(source, Refused):
        return source
    if not safe_name(source.name):
        return Refused(f"{where}: its name cannot be a file name")
    done = translate(source, plugin)
    parts = done.name.split("/") if isinstance(done, Translated) else []
    if isinstance(done, Translated) and not (
        1 <= len(parts) <= 2 and all(safe_name(part) for part in parts)
    ):
        return Refused(f"{where}: the agent's translator names {done.name!r}, not a file name")
    return done


def _unique(found: list[Artifact], notes: list[str]) -> list[Artifact]:
    """One artifact per path: a second plugin's skill of the same name is namespaced; any other
    clash keeps the first and says so."""
    by_path: dict[Path, Artifact] = {}
    for artifact in found:
        first = by_path.get(artifact.path)
        if first is None or first.owner == artifact.owner:
            by_path.setdefault(artifact.path, artifact)
            continue
        if artifact.kind == "skills":
            name = skill_names.namespaced(artifact.owner.partition("@")[0], artifact.path.name)
            files = dict(artifact.files)
            files["SKILL.md"] = skill_names.renamed(files.get("SKILL.md", b""), name)
            moved = artifact._replace(path=artifact.path.with_name(name), files=files)
            if moved.path not in by_path:
                by_path[moved.path] = moved
                continue
        notes.append(
            f"{artifact.path} is wanted by {first.owner} and {artifact.owner}; "
            f"{artifact.owner}'s is not deployed"
        )
    return list(by_path.values())

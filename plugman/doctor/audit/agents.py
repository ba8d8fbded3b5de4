"""The audit's `drift` check: the agent files plugman deployed are as it wrote them. Servers and
hooks written into agents' config files (`agents.export_record`) are told by the detector
`plugman doctor` uses (`doctor.differences`); skills, commands, subagents and Claude Code plugin
links (`agents.artifacts`) by `artifacts.drift`; and a file a deployment left to the user (changed
by hand, or not plugman's where it deploys: the standing warnings, `agents.warnings`) is drift too,
since the agent then loads it instead of what the project pins. One finding per file."""

from __future__ import annotations

from pathlib import Path

from plugman.agents import artifacts, export_record, links, warnings
from plugman.core.fs import read_bytes
from plugman.core.state import Scope, as_scope
from plugman.doctor import differences
from plugman.doctor.audit.model import Finding, Given


def drift(given: Given) -> list[Finding]:
    """The agent files plugman deployed, each as plugman wrote it."""
    return _entries(given) + _deployed(given) + _left(given)


def _entries(given: Given) -> list[Finding]:
    """The servers and hooks plugman wrote into agents' config files, one finding per file."""
    paths = given.paths
    linked = {(link.agent, link.scope) for link in links.every(paths)}
    found = []
    for key, files in export_record.load(paths).items():
        read = export_record.parse(key)
        scope = as_scope(read.scope)
        if scope is None or not _here(given, scope, read.project):
            continue
        again = f"plugman agents add {read.agent} --scope {scope}"
        if read.target is not None and (read.agent, scope) not in linked:
            again = f"plugman export --target {read.target} --scope {scope} --write"
        for file, written in sorted(files.items()):
            changed = differences(paths, Path(file), written)
            if not changed:
                continue
            said = ", ".join(f"{d.entry} {d.state}" if d.entry else d.state for d in changed)
            edited = any(d.state == "edited" for d in changed)
            fix = f"{'delete the entries edited by hand, then ' if edited else ''}run: {again}"
            message = f"{read.agent}'s file ({scope} scope) differs from what plugman wrote: {said}"
            found.append(Finding("drift", message, fix, file))
    return found


def _deployed(given: Given) -> list[Finding]:
    """The skills, commands, subagents and plugin links plugman deployed."""
    found = []
    for path, entry in sorted(artifacts.load(given.paths).items()):
        how = artifacts.drift(Path(path), entry)
        mine = [export_record.parse(link) for link in entry.links]
        mine = [k for k in mine if (s := as_scope(k.scope)) and _here(given, s, k.project)]
        if how is None or not mine:
            continue
        agents = ", ".join(sorted({k.agent for k in mine}))
        where, agent = mine[0].scope, mine[0].agent
        what = _KINDS.get(entry.kind or "", "file")
        message = f"{agents}'s {what} {how} since plugman deployed it ({where} scope)"
        again = f"run: plugman agents add {agent} --scope {where}"
        fix = f"move it away (it is yours now), then {again}" if how == "changed" else again
        found.append(Finding("drift", message, fix, _changed_file(Path(path), entry.files)))
    return found


# A deployment's standing note on a file it left to the user, and what the finding says of it.
_LEFT = (
    (artifacts.CHANGED_NOTE, "was changed by hand, so plugman's deployment left it to you"),
    (artifacts.TAKEN_NOTE, "is not plugman's, so its deployment left it as it is"),
)


def _left(given: Given) -> list[Finding]:
    """The files a deployment left to the user where plugman deploys one (its standing notes,
    `agents.warnings`): the agents read those instead of what the project pins."""
    paths = given.paths
    linked = links.every(paths)
    found = []
    for note in warnings.load(paths).get(warnings.general(paths), []):
        for tail, said in _LEFT:
            path = Path(note.removesuffix(tail))
            if not note.endswith(tail) or not (path.exists() or path.is_symlink()):
                continue
            inside = path.is_relative_to(paths.project_dir)
            scopes = [s for s in given.scopes if (s != "user") == inside]
            agents = {s: [k.agent for k in linked if k.scope == s] for s in scopes}
            scope = next((s for s in scopes if agents[s]), None)
            if scope is None:
                continue
            message = f"plugman deploys a file here for {', '.join(agents[scope])}, but this one "
            message += f"{said} ({scope} scope): the agents read it instead"
            fix = f"move it away, then run: plugman agents add {' '.join(agents[scope])} "
            fix += f"--scope {scope}"
            found.append(Finding("drift", message, fix, str(path)))
    return found


_KINDS = {"skills": "skill", "commands": "command", "agents": "subagent", "plugin": "plugin link"}


def _changed_file(path: Path, files: dict[str, str]) -> str:
    """The first file of a deployed artifact that is not as plugman wrote it (the artifact
    itself when it is one file, a link or gone)."""
    for rel, wanted in sorted(files.items()):
        data = read_bytes(path / rel) if rel and not wanted.startswith("link:") else None
        if data is not None and artifacts.digest(data) != wanted:
            return str(path / rel)
    return str(path)


def _here(given: Given, scope: Scope, project: str) -> bool:
    """Whether a record key of `scope` (and `project`) is one this audit covers."""
    return scope in given.scopes and (scope == "user" or project == str(given.paths.project_dir))

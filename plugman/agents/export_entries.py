"""What an export writes: one scope's resolved entries, under their exported names, never a
literal secret into a project file, rendered in the target's form with the notes on what it
left out (see `plugman.agents.export`).

A stdio server from a plugin or one that needs approval (the project's own, an unconsented
plugin's: `merge.needs_approval`), or any server whose entry names a value plugman keeps (a
sensitive plugin option, an `mcp vars` variable) or a path into plugman's store, is written as
the server launcher (`launcher_entry`: `plugman mcp run NAME`, `plugman.runtime.launch.server`),
which puts those in where the agent starts it (a remote server is bridged): the agent's file holds
neither a secret nor a machine path, and `configure`, `update` and `mcp vars set` need no rewrite of
it. The launcher resolves again at each start, so an approved server whose script changed since (a
`git pull`) waits for approval again instead of starting; hooks that need approval go through
`plugman hooks exec` for the same reason (`hooks`, `targets.hooks`)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from plugman.agents.targets import Given, HookGroups, Place, Servers, Target, hook_id
from plugman.agents.targets.hooks import MARK
from plugman.agents.targets.quirks import RELOCATE  # plugman's environment a user file passes on
from plugman.config import redact, server_vars
from plugman.config.merge import Origin, needs_approval
from plugman.config.resolution import resolve
from plugman.config.scopes import connectors_path
from plugman.config.user_config import AGENT_PREFIX
from plugman.core.jsonvalue import JSONObject, ServerEntry
from plugman.core.paths import Paths
from plugman.core.state import Scope
from plugman.manifest.edit import Part
from plugman.manifest.hooks import TOOL_EVENTS
from plugman.manifest.mcp import transport
from plugman.runtime.gateway.naming import split_server
from plugman.runtime.launch.hook import refs
from plugman.runtime.launch.notices import EVENT, group

if TYPE_CHECKING:
    from plugman.config.resolution import Resolution


GATEWAY = "plugman"  # the one server a gateway link writes
OPTION = re.compile(AGENT_PREFIX + r"\w+")  # in any agent's spelling: ${V}, $V, ${env:V}, "V"


class Choice(NamedTuple):
    own: frozenset[str]  # the file being written, and others the agent reads: not written again
    guard: bool  # a project file: no literal secret goes in
    show_secrets: bool  # False: secret values masked (a preview)
    scope: Scope = "user"  # the file's scope: how a launcher entry names plugman
    kept: frozenset[str] = frozenset()  # what only plugman can put in: variables, the store
    env: Mapping[str, str] = {}  # plugman's environment (a user file's launcher keeps its home)


def servers(
    resolution: Resolution, choice: Choice, owners: dict[str, str], notes: list[str]
) -> Servers:
    """The resolved servers under their exported names; none from the file being written (the
    project's `.mcp.json` already holds its own), none with a literal secret when guarded."""
    found: Servers = {}
    unconsented = resolution.layers.unconsented
    for name, server in resolution.servers.items():
        entry = server.entry if choice.show_secrets else redact.entry(server.entry)
        plugin, inner = split_server(name)
        exported = f"plugin_{plugin}_{inner}" if plugin else name
        origin = server.origin
        if origin.file in choice.own:
            continue
        if launched(server.entry, origin, choice.kept):
            entry = launcher_entry(choice.scope, name, choice.env)
        elif choice.guard and refused(exported, entry, origin, notes):
            continue
        elif needs_approval(origin, unconsented) and transport(server.entry) == "stdio":
            entry = launcher_entry(choice.scope, name, choice.env)  # approval checked at start
        found[exported] = entry
        if origin.plugin:
            owners[exported] = origin.plugin
    return found


def hooks(
    resolution: Resolution, choice: Choice, owners: dict[str, str], notes: list[str]
) -> HookGroups:
    """The resolved hooks as matcher groups, by event; none with a literal secret when guarded.
    Each group is marked with its hook's launcher id (`targets.hooks.MARK`), which the agents
    that run plugin hooks through `plugman hooks exec` name (plugman.runtime.launch.hook), and
    whether it needs approval (`merge.needs_approval`): every agent runs those through the
    launcher, which checks the approval (project, entry, digests of the files run) at each call."""
    found: HookGroups = {}
    ids = refs(resolution.hooks)
    unconsented = resolution.layers.unconsented
    for position, hook in enumerate(resolution.hooks):
        handler = hook.handler if choice.show_secrets else redact.hook(hook.handler)
        group: JSONObject = {"hooks": [handler]}
        if hook.matcher:
            group["matcher"] = hook.matcher
        if choice.guard and refused(f"{hook.event} hook", group, hook.origin, notes):
            continue
        group[MARK] = {
            "id": str(ids[position]),
            "plugin": bool(hook.origin.plugin),
            "approval": needs_approval(hook.origin, unconsented),
        }
        found.setdefault(hook.event, []).append(group)
        if hook.origin.plugin:
            owners[hook_id(hook.event, group)] = hook.origin.plugin
    return found


def gateway_entry(scope: Scope, env: Mapping[str, str]) -> ServerEntry:
    """The server entry that runs plugman's gateway where the agent runs (it finds the project
    from its working folder). A committed project file names `plugman` on PATH; the user's and
    local files name this very interpreter, so the entry works whatever PATH the agent has, and
    pass on the variables that relocate plugman's home (as `launcher_entry` does: Codex starts
    servers with only some of its own variables)."""
    if scope == "project":
        return {"command": "plugman", "args": ["mcp", "serve"]}
    entry: ServerEntry = {"command": sys.executable, "args": ["-m", "plugman", "mcp", "serve"]}
    moved = {k: env[k] for k in RELOCATE if env.get(k)}
    if moved:
        entry["env"] = moved
    return entry


def launched(entry: ServerEntry, origin: Origin, kept: frozenset[str]) -> bool:
    """Whether a server is written as the launcher: a stdio one from a plugin, or any whose
    entry names something in `kept` (`${VAR}` of a value plugman keeps, its store folder; a
    remote one is then bridged by the launcher). A stdio one that needs approval is too, once
    it holds no literal secret (`servers`)."""
    if transport(entry) == "stdio" and origin.plugin:
        return True
    text = json.dumps(entry)
    return any(k in text for k in kept)


def launcher_entry(scope: Scope, name: str, env: Mapping[str, str]) -> ServerEntry:
    """The entry that starts resolved server `name` through `plugman mcp run`, spelled as
    `gateway_entry` spells plugman. A user or local file is this machine's: it also passes on
    the variables that relocate plugman's home and secret store, should plugman's environment
    set them (an agent may start servers with only some of its own variables, as Codex does)."""
    if scope == "project":
        return {"command": "plugman", "args": ["mcp", "run", name]}
    entry: ServerEntry = {
        "command": sys.executable,
        "args": ["-m", "plugman", "mcp", "run", name],
    }
    moved = {k: env[k] for k in RELOCATE if env.get(k)}
    if moved:
        entry["env"] = moved
    return entry


def kept_by_plugman(paths: Paths) -> frozenset[str]:
    """What only plugman can put into a server entry (see `launched`): a reference to a value
    it keeps, a path into its store."""
    refs = {f"${{{name}{end}" for name in server_vars.names(paths) for end in ("}", ":-")}
    return frozenset({*refs, "${" + AGENT_PREFIX, str(paths.store_dir)})


def refused(name: str, value: ServerEntry, origin: Origin, notes: list[str]) -> bool:
    """A literal secret never goes into a project file (it is committed): the entry is left
    out, with a note saying what, where and what to do."""
    given = value.get("hooks")
    handlers: list[Any] = given if isinstance(given, list) else [value]
    fields = [f for h in handlers if isinstance(h, dict) for f in redact.literals(h)]
    if not fields:
        return False
    found = [f for h in handlers if isinstance(h, dict) for f in redact.keep_out(name, h)[1]]
    variables = sorted({f.variable for f in found}) or ["API_KEY"]
    how = "; ".join(f"plugman mcp vars set {v}" for v in variables)
    refs = ", ".join("${" + v + "}" for v in variables)
    notes.append(
        f"{name}: not exported: {', '.join(fields)} holds a literal secret ({where(origin)}), "
        f"and project files are committed; keep the value in plugman's secret store ({how}) "
        f"and write {refs} in its place"
    )
    return True


def option_notes(agent: str, rendered: dict[str, list[Part]]) -> list[str]:
    """Where what the agent gets names a sensitive plugin option's variable (a remote server's
    header, a hook; `plugman.config.user_config`): which variable the agent needs, or the
    gateway. What the target left out (said in its own note) needs none."""
    text = json.dumps([p.entries for parts in rendered.values() for p in parts])
    found = sorted(set(OPTION.findall(text)))
    return [
        f"{name}: {agent}'s file names this variable for a sensitive plugin option (plugman "
        f"keeps the value in its secret store): set it where {agent} runs (or enter it where "
        f"{agent} asks for it), or link {agent} --via-gateway, which puts the value in itself"
        for name in found
    ]


def where(origin: Origin) -> str:
    return f"plugin {origin.plugin}" if origin.plugin else origin.file


def render(
    paths: Paths,
    target: Target,
    place: Place,
    show_secrets: bool = True,
    scoped: bool = False,
    gateway: bool = False,
    native: frozenset[str] = frozenset(),
    notice: bool = False,
) -> tuple[dict[str, list[Part]], dict[str, str], list[str]]:
    """What goes into the target's files, who owns each entry, and the notes. `scoped` (an
    export): only the entries of `place.scope` (see the module docstring). `gateway`: one
    server, `plugman mcp serve`, in place of every server; it runs the tool hooks around each
    call, so the agent gets only the others (SessionStart, Stop, ...), where it takes hooks.
    `native`: plugins the agent loads itself, whose servers and hooks are not written again.
    `notice`: the update notice's SessionStart hook too (plugman.runtime.launch.notices)."""
    only = place.scope if scoped else None
    resolution = resolve(paths, place.env, references=True, only=only)
    if native:
        resolution = resolution.without(native)
    notes = unread(resolution, paths)
    owners: dict[str, str] = {}
    own = {str(place.project / f) for f in target.reads_too} if scoped else set()
    mcp = target.files(place).get("mcp") if scoped else None
    if mcp is not None:
        own.add(str(mcp.path))
    chosen = Choice(
        frozenset(own),
        guard=only == "project",
        show_secrets=show_secrets,
        scope=place.scope,
        kept=kept_by_plugman(paths),
        env=place.env,
    )
    if gateway:
        written: Servers = {GATEWAY: gateway_entry(place.scope, place.env)}
        tool = [h for h in resolution.hooks if h.event in TOOL_EVENTS]
        resolution = resolution._replace(hooks=[h for h in resolution.hooks if h not in tool])
        if tool and target.hooks:
            notes.append(
                f"{len(tool)} tool hook group(s) run in the gateway, around MCP tool calls "
                f"only: {target.name}'s own tools do not pass them (link it without "
                "--via-gateway for that)"
            )
    else:
        written = servers(resolution, chosen, owners, notes)
    run = hooks(resolution, chosen, owners, notes) if target.hooks else {}
    if notice and target.hooks:
        run.setdefault(EVENT, []).append(group(target.name, place.scope))
    elif notice:
        notes.append(f"no update notice: {target.name} takes no hooks")
    rendered = target.render(Given(written, run, place.env, place))
    notes += option_notes(target.name, rendered.files)
    notes += rendered.unsupported
    if resolution.hooks and not target.hooks:
        count = len(resolution.hooks)
        notes.append(f"{count} hook group(s) not exported: {target.name} takes MCP servers only")
    pending = resolution.pending()
    if pending:
        notes.append(
            f"not exported, pending approval: {len(pending)} "
            f"{'entry' if len(pending) == 1 else 'entries'}; "
            "see 'plugman trust list'"
        )
    if scoped and (paths.managed_mcp_files() or _connectors(paths)):
        notes.append(
            "claude.ai connectors and managed servers are not written into agent files: "
            "each agent reads them from its own account and managed settings"
        )
    return rendered.files, owners, notes


def _connectors(paths: Paths) -> bool:
    return connectors_path(paths).is_file()


def unread(resolution: Resolution, paths: Paths) -> list[str]:
    """The user's broken config files the entries were resolved without (a note each)."""
    found = []
    for d in resolution.broken(paths):
        file = Path(d.file)
        where = (
            file.relative_to(paths.project_dir) if file.is_relative_to(paths.project_dir) else file
        )
        at = f":{d.line}:{d.column or 1}" if d.line else ""
        found.append(
            f"{where}{at}: {d.message}; what it declares is left out (plugman config resolve)"
        )
    return found

"""`plugman mcp run NAME`: the server launcher an agent's file names in place of a server entry.

An agent that cannot expand a plugin's variables, hold a secret or find a store path gets
`{"command": "plugman", "args": ["mcp", "run", NAME]}` (`agents.export_entries.launcher_entry`)
instead of the entry itself. At start, the launcher resolves the config of the project found
from its working folder, as every plugman command does, takes NAME's entry fully expanded
(sensitive plugin options and `mcp vars` values from the secret store, `${CLAUDE_PLUGIN_ROOT}`
as this machine's store path) and, for a stdio server, replaces itself with the server
(`os.execvpe`): no process stays in between, stdin and stdout are the agent's own pipes, and
the server gets the agent's environment with the entry's `env` over it (as `runtime.connect`
gives a server plugman starts itself). So `configure`, `update` and `mcp vars set` take effect
at the next start without rewriting any agent file, and no agent file holds a secret or a
machine path.

A server that is not resolved here starts nothing: pending approval, denied by policy, a
disabled plugin, a required option or variable unset, or no such name: `NotStartedError` says which,
where and what to do (exit 1). A remote server (http, sse, ws) is served over stdio by a
bridge (`plugman.runtime.launch.bridge`) with its headers and stored OAuth login put in, for an
agent that cannot hold them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple, NoReturn

from plugman.config import redact
from plugman.config.contribute import MISSING_COPY, missing_copy
from plugman.config.resolution import resolve
from plugman.core.errors import PlugmanError
from plugman.core.jsonvalue import ServerEntry
from plugman.manifest.mcp import transport

if TYPE_CHECKING:
    from plugman.config.resolution import Resolution
    from plugman.core.paths import Paths

# why a server was left out → what to do about it
FIXES = {
    "pending-approval": "run: plugman trust list, then plugman trust approve",
    "policy": "managed policy denies it; ask your administrator",
    "needs-config": "set its plugin's options: plugman configure PLUGIN KEY=VALUE",
    "missing-variable": "set the variable where the agent runs, or: plugman mcp vars set NAME",
    "unsafe-config": "the plugin uses ${user_config.*} in a shell-parsed field; update it",
    "managed-exclusive": "managed-mcp.json is present: only its servers run",
    "endpoint-duplicate": "a server you configured has the same endpoint; that one runs",
}


class Launch(NamedTuple):
    """One server, ready to start: a stdio one to exec, every value expanded, or a remote one
    to bridge."""

    name: str
    command: str
    args: list[str]
    env: dict[str, str]
    cwd: str | None
    remote: ServerEntry | None = None  # a remote server's entry: bridged, not exec'd
    shared: bool = False  # from a plugin or the project (runtime.headers: its headersHelper)


class NotStartedError(PlugmanError):
    """NAME cannot be started here (exit 1); nothing was started."""


def prepare(
    paths: Paths, name: str, env: Mapping[str, str], resolution: Resolution | None = None
) -> Launch:
    """NAME's stdio server as the config resolved in `paths.project_dir` has it (`resolution`,
    when the caller has resolved it already)."""
    resolution = resolve(paths, env) if resolution is None else resolution
    server = resolution.servers.get(name)
    if server is None:
        raise why(resolution, name, str(paths.project_dir))
    entry = server.entry
    kind = transport(entry) or str(entry.get("type"))
    given = {str(k): str(v) for k, v in (entry.get("env") or {}).items()}
    if kind != "stdio":
        shared = server.origin.plugin is not None or server.origin.scope == "project"
        return Launch(name, "", [], {**env}, None, dict(entry), shared)
    command = entry.get("command")
    if not isinstance(command, str) or not command:
        raise NotStartedError(
            f"{name}: its entry has no command", hint=f"run: plugman config explain {name}"
        )
    args = [str(a) for a in entry.get("args") or []]
    refuse_secret_argv(name, [command, *args], server.origin.plugin)
    cwd = entry.get("cwd")
    return Launch(name, command, args, {**env, **given}, cwd if isinstance(cwd, str) else None)


def refuse_secret_argv(name: str, argv: list[str], plugin: str | None) -> None:
    """A sensitive value (a plugin's sensitive option, an `mcp vars` value) never goes into a
    process's command line, which every user of the machine reads (`ps`, /proc/PID/cmdline):
    the server is not started, and the hint says how to pass it in the environment (which only
    the user and root can read). No file descriptor trick is offered in its place: a server
    that takes the value as an argument takes the value, not a path it would have to read."""
    found = [i for i, word in enumerate(argv) if redact.holds_sensitive(word)]
    if not found:
        return
    where = ", ".join("command" if i == 0 else f"args[{i - 1}]" for i in found)
    if plugin:
        hint = (
            f"plugin {plugin} puts a sensitive option into its server's arguments; its server "
            "also gets each option in its environment (CLAUDE_PLUGIN_OPTION_<KEY>): ask its "
            "author to read it from there, or put it in the entry's env"
        )
    else:
        hint = (
            "move the ${VAR} from the entry's args into its env (the server reads it from its "
            f"environment): plugman mcp remove {name}, then plugman mcp add {name} --env "
            "VAR=${VAR} -- COMMAND ARGS"
        )
    raise NotStartedError(
        f"{name} is not started: its {where} would carry a secret value on the command line, "
        "which every user of this machine can read (ps)",
        hint=hint,
    )


def why(resolution: Resolution, name: str, project: str) -> NotStartedError:
    """The error for a NAME the resolution has no server of: the reason it was left out."""
    # lazy: runtime.naming is not loaded by `plugman mcp run` (+1 ms)
    from plugman.runtime.gateway.naming import split_server

    dropped = [d for d in resolution.dropped if d.kind == "server" and d.name == name]
    if dropped:
        first = dropped[0]
        return NotStartedError(
            f"{name} is not started: {first.reason}: {first.detail}",
            hint=FIXES.get(first.reason, f"run: plugman config explain {name}"),
        )
    plugin, _ = split_server(name)
    stopped = [p for p in resolution.plugins if p.blocked and p.id.partition("@")[0] == plugin]
    if stopped:  # managed policy: nothing of the plugin is delivered, its servers included
        return NotStartedError(
            f"{name} is not started: plugin {stopped[0].id} is {stopped[0].blocked}",
            hint=FIXES["policy"],
        )
    off = [p.id for p in resolution.plugins if not p.enabled and p.id.partition("@")[0] == plugin]
    if off:
        return NotStartedError(
            f"{name} is not started: plugin {off[0]} is disabled",
            hint=f"run: plugman enable {off[0]}",
        )
    said = {d.message for d in resolution.diagnostics if d.code == MISSING_COPY}
    for row in resolution.plugins:  # installed, but its files are gone from the store
        message, hint = missing_copy(row.id, row.scope)
        if row.id.partition("@")[0] == plugin and message in said:
            return NotStartedError(f"{name} is not started: {message}", hint=hint)
    return NotStartedError(
        f"{name}: no such server in the config resolved in {project}",
        hint="run: plugman config resolve (the names it lists are the ones mcp run takes); "
        "the agent runs this in its working folder, which must be in the project",
    )


def execute(launch: Launch) -> NoReturn:
    """Replace this process with the server (stdio passes through); an OSError if it cannot."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    if launch.cwd:
        os.chdir(launch.cwd)
    os.execvpe(launch.command, [launch.command, *launch.args], launch.env)


def bridge(paths: Paths, launch: Launch) -> None:
    """Serve the remote server over stdio (`plugman.runtime.launch.bridge`) with its stored OAuth
    login, if any; `NotStartedError` when it cannot be reached or refuses."""
    # lazy: runtime.bridge is not loaded by `plugman mcp run` (+7 ms)
    from plugman.runtime.launch import bridge as remote
    from plugman.runtime.oauth.provider import NeedsLoginError, authorizer

    entry = launch.remote or {}
    try:
        auth = authorizer(paths, launch.env)(launch.name, entry)
    except NeedsLoginError as exc:
        raise NotStartedError(exc.message, hint=f"run: plugman mcp login {launch.name}") from None
    failed = remote.serve(
        launch.name, entry, env=launch.env, cwd=paths.project_dir, auth=auth, shared=launch.shared
    )
    if failed is not None:
        state, reason = failed
        hint = f"run: plugman mcp probe {launch.name}"
        if state == "needs-auth":
            hint = f"run: plugman mcp login {launch.name} (or check its key: plugman configure)"
        raise NotStartedError(f"{launch.name}: {entry.get('url')}: {reason}", hint=hint)

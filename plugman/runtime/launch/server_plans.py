"""Launch plans of servers: what `plugman mcp run NAME` would exec in one project, written so the
next start needs neither plugman's imports nor a resolve (plugman.cli.fast_launch,
plugman.runtime.launch.server_start reads them).

A plan holds NAME's entry before expansion (`${VAR}` references kept, so **no secret value is
in it**: a sensitive plugin option or an `mcp vars` value is named by its secret-store key and
read at start from the file store), what its expansion reads (the store keys, which variables
they stand for, whether each variable a server entry or a policy rule names was set), and a
stamp (plugman.runtime.launch.planfile) of every file the resolution reads or probes, plus the
files the entry names in the project or its plugin (an approval covers their digests).

Written at deploy time, in its transaction, for every stdio server resolved in the project
(a superset of those the linked agents' files name through `plugman mcp run`: a plan is used
only by that command), and by the full launcher on a miss. None is written for a remote
(bridged) server, one that would not start (the full launcher says why at each start), one
whose policy matches commands or URLs while some entry names a variable (the verdict would
depend on the variables' values), or one the store's kind does not allow reading at start (a
keychain). Every plan is checked before it is written: what the fast path would exec from it,
here and now, must be exactly what the full launcher prepared, or no plan is written.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plugman.config import binding, origins, server_vars
from plugman.config.merge import Server
from plugman.core import fs, secrets
from plugman.core.errors import PlugmanError
from plugman.core.fs import atomic_write
from plugman.manifest.mcp import transport
from plugman.runtime.launch import planfile, plans, server_start
from plugman.runtime.launch.server import prepare

if TYPE_CHECKING:
    from plugman.config.resolution import Resolution
    from plugman.core.paths import Paths
    from plugman.core.session import Session

PREFIX = "server."  # planfile.server_name: a server plan's file name
OPTION_KEY = "plugin-config:"  # config.user_config.store_key


def server_plan(
    paths: Paths,
    env: Mapping[str, str],
    resolution: Resolution,
    reads: Mapping[str, bool],
    name: str,
) -> dict[str, Any] | None:
    """The plan of `mcp run NAME` in `paths.project_dir`; None when it must go through the full
    launcher every time. `reads`: what the resolution read of the secret store
    (core.secrets.recording)."""
    server = resolution.servers.get(name)
    if server is None or transport(server.entry) != "stdio" or not planfile.writable(env):
        return None
    raw = _raw(resolution, server)
    seen = referenced(resolution)
    if raw is None or (seen and _on_values(resolution)):
        return None
    if reads and not server_start.file_store(env):
        return None
    try:
        ready = prepare(paths, name, env, resolution)
    except PlugmanError:
        return None
    entry = raw.entry
    plan = {
        "format": planfile.FORMAT,
        "version": plans._version(),
        "key": {
            "kind": "server",
            "name": name,
            "project": str(paths.project_dir),
            "env": planfile.env_key(env),
        },
        "stamp": _stamp(paths, raw),
        "command": entry.get("command"),
        "args": list(entry.get("args") or []),
        "env": dict(entry.get("env") or {}),
        "cwd": entry.get("cwd") if isinstance(entry.get("cwd"), str) else None,
        "store": str(secrets.file_path(paths)),
        "reads": dict(reads),
        "stored": {v: server_vars.key(v) for v in server_vars.names(paths)},
        "secrets": _options(reads, resolution, server),
        "seen": {variable: variable in env for variable in sorted(seen)},
    }
    exact = (ready.command, ready.args, ready.env, ready.cwd)
    return plan if server_start.prepared(plan, env) == exact else None


def _raw(resolution: Resolution, server: Server) -> Server | None:
    """The winner's entry before expansion, as the layers hold it."""
    found = [
        s
        for s in (*(resolution.layers.managed or ()), *resolution.layers.servers)
        if s.name == server.name and s.origin == server.origin
    ]
    return found[0] if len(found) == 1 else None


def referenced(resolution: Resolution) -> set[str]:
    """Every variable a server entry or a server policy rule names: whether each is set decides
    which entries resolve (unset ones are dropped, so another may win or stop being a
    duplicate)."""
    layers, policy = resolution.layers, resolution.policy
    entries = [s.entry for s in (*(layers.managed or ()), *layers.servers)]
    rules = [*policy.denied, *(policy.allowed or ()), *(policy.allowed_too or ())]
    text = json.dumps([entries, [[*r.command, r.url] for r in rules]])
    return {name for name, _ in re.findall(server_start.VARIABLE, text)}


def _on_values(resolution: Resolution) -> bool:
    """Whether a policy rule matches a server's command or URL (after expansion: a variable's
    value may decide it)."""
    policy = resolution.policy
    rules = [*policy.denied, *(policy.allowed or ()), *(policy.allowed_too or ())]
    return any(r.key != "serverName" for r in rules)


def _options(reads: Mapping[str, bool], resolution: Resolution, server: Server) -> dict[str, str]:
    """The `${PLUGMAN_OPT_...}` variables of the server's plugin's sensitive options, each with
    the store key its value was read from (config.user_config.variable, store_key)."""
    # lazy: config.user_config is loaded by resolution already; named here for its spelling
    from plugman.config.user_config import variable

    plugin = server.origin.plugin
    if plugin is None:
        return {}
    head = f"{OPTION_KEY}{plugin}:"
    found: dict[str, str] = {}
    for key, had in reads.items():
        if had and key.startswith(head):
            option = key[len(head) :].partition(":")[0]
            found[variable(plugin.partition("@")[0], option)] = key
    return found


def _stamp(paths: Paths, raw: Server) -> planfile.Stamp:
    root = raw.origin.file if raw.origin.plugin else None
    project = str(origins.plain(paths.project_dir))
    extra = [(Path(p), False) for p in binding.candidates(raw.entry, project, root)]
    if root is not None:
        extra.append((Path(root), False))
    staged = {str(p): data for p, data in fs.staged.items()}
    watched = list(dict.fromkeys([*plans.watched(paths), *extra]))
    return [[str(path), planfile.state(str(path), listed, staged)] for path, listed in watched]


def server_file(paths: Paths, name: str) -> Path:
    return plans.project_folder(paths) / planfile.server_name(name)


def write_miss(
    paths: Paths,
    env: Mapping[str, str],
    resolution: Resolution,
    reads: Mapping[str, bool],
    name: str,
) -> None:
    """The full launcher's plan for the next start (written whole, 0600; a failure is no error:
    the next start runs the full launcher again)."""
    if planfile.state_dir(env) != str(paths.state_dir):
        return  # the fast path would not find it there
    plan = server_plan(paths, env, resolution, reads, name)
    if plan is not None:
        with contextlib.suppress(OSError):
            atomic_write(server_file(paths, name), plans.dump(plan), private=True)


def deploy(
    work: Session,
    env: Mapping[str, str],
    resolution: Resolution | None,
    reads: Mapping[str, bool],
) -> None:
    """Stage the project's server plans (`resolution`: None when no agent is linked), and
    delete the project's server plans no deployment wants any more."""
    paths = work.paths
    wanted: dict[Path, bytes] = {}
    if resolution is not None and planfile.state_dir(env) == str(paths.state_dir):
        for name in resolution.servers:
            plan = server_plan(paths, env, resolution, reads, name)
            if plan is not None:
                wanted[server_file(paths, name)] = plans.dump(plan)
    folder = plans.project_folder(paths)
    for file in plans.listing(folder):
        if file.name.startswith(PREFIX) and file not in wanted:
            work.tx.write(file, None, prune_to=paths.state_dir)
    for file, data in wanted.items():
        if fs.current(file) != data:
            work.tx.write(file, data, private=True)

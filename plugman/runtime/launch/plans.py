"""Launch plans: what `plugman hooks exec` would compute for one hook in one project, written
so the next call needs neither plugman's imports nor a resolve (plugman.cli.fast_launch).

A plan holds the handler's argv, the environment plugman adds (`CLAUDE_PLUGIN_ROOT`,
`CLAUDE_PLUGIN_DATA`, the plugin's options), its timeout, whether it runs in the background,
the agent's tool renames reversed, the matcher and `if` rule as data (runtime.hooks.match), and
a stamp (plugman.runtime.launch.planfile): every file the resolution reads or probes for this
project (`watched`), with what each held. The deployment writes one for every hook of every
linked agent that names the launcher, in the project at hand, inside its transaction (a rollback
takes them back; the project's plans no deployment wants are deleted with it); the full launcher
writes one on a miss (another project, a stale plan). A hook with a sensitive value anywhere in
what it runs, an `async` one the agent does not background, or one that is not a command gets
no plan: the full launcher runs it, as before. The stored plugin copies need no stamp: they are
content-addressed, a new one is a new install record.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plugman.config import binding, origins, redact
from plugman.config.merge import Hook
from plugman.core import fs
from plugman.core.fs import atomic_write
from plugman.runtime.hooks.match import compiled_if, compiled_matcher
from plugman.runtime.hooks.run import handler_argv, timeout_of
from plugman.runtime.launch import agent_facts, planfile, shplan
from plugman.runtime.launch.hook import refs

if TYPE_CHECKING:
    from plugman.config.resolution import Resolution
    from plugman.core.paths import Paths
    from plugman.core.session import Session
    from plugman.runtime.launch.agent_facts import Launching

SERVER = "server."  # a server's plan (runtime.launch.server_plans keeps those)


def watched(paths: Paths, hooks: Iterable[Hook] = ()) -> list[tuple[Path, bool]]:
    """What a resolution of `paths.project_dir` reads or probes, each with whether its listing
    counts (a folder whose files are all read): every scope's files, the managed ones, plugman's
    state records, and the files a hook needing approval runs (config.binding)."""
    project, state = paths.project_dir, paths.state_dir
    files = [
        paths.user_config,
        paths.config_dir,
        paths.project_config,
        paths.project_lock,
        paths.project_mcp,
        paths.local_config,
        project / ".plugman",
        project / ".claude" / "settings.json",
        project / ".claude" / "settings.local.json",
        paths.managed_settings,
        paths.managed_mcp,
        paths.claude_managed_settings,
        paths.claude_managed_mcp,
        state / "trust.json",
        state / "server-vars.json",
        state / "connectors.json",
        state / "marketplaces.json",
        state / agent_facts.FILE,  # the agents' tool names the plan holds reversed
    ]
    found = [(file, False) for file in files]
    for folder in (state / "installed", paths.claude_managed_dropins):
        found.append((folder, True))
        with contextlib.suppress(OSError):
            found += [(file, False) for file in sorted(folder.iterdir())]
    for hook in hooks:
        found += [(Path(p), False) for p in _runs(hook, paths)]
        if hook.origin.plugin:
            found.append((Path(hook.origin.file), False))
    return list(dict.fromkeys(found))


def _runs(hook: Hook, paths: Paths) -> list[str]:
    """The files a hook runs as config.binding finds them for an approval, present or not (one
    created later changes what an approval covers)."""
    root = hook.origin.file if hook.origin.scope == "plugin" else None
    project = str(origins.plain(paths.project_dir))
    return binding.candidates(hook.handler, project, root, True)


def stamp(paths: Paths, hooks: Iterable[Hook] = ()) -> planfile.Stamp:
    staged = {str(p): data for p, data in fs.staged.items()}
    return [
        [str(path), planfile.state(str(path), listed, staged)]
        for path, listed in watched(paths, hooks)
    ]


def hook_plan(
    paths: Paths,
    env: Mapping[str, str],
    word: str,
    launching: Launching,
    ref: str,
    hook: Hook,
) -> dict[str, Any] | None:
    """The plan of `hook` launched as `hooks exec WORD EVENT REF` in `paths.project_dir`; None
    when it must go through the full launcher every time."""
    handler = hook.handler
    argv = handler_argv(handler)
    background = bool(handler.get("async")) and not launching.async_itself
    if argv is None or handler.get("type", "command") != "command" or not planfile.writable(env):
        return None
    added = dict(hook.env) if hook.origin.scope == "plugin" and hook.origin.plugin else None
    if added is not None:
        added["CLAUDE_PLUGIN_ROOT"] = hook.origin.file
    words = [*argv, *(added or {}).values(), *(added or {}).keys()]
    if any(redact.holds_sensitive(w) for w in words) or _secret_option(added):
        return None
    data = (
        paths.plugin_data(hook.origin.plugin) if added is not None and hook.origin.plugin else None
    )
    return {
        "format": planfile.FORMAT,
        "version": _version(),
        "key": {
            "kind": "hook",
            "agent": word,
            "event": hook.event,
            "ref": ref,
            "project": str(paths.project_dir),
            "env": planfile.env_key(env),
        },
        "stamp": stamp(paths, [hook]),
        "tools": {theirs: ours for ours, theirs in launching.tools.items()},
        "match": compiled_matcher(hook.event, hook.matcher),
        "if": compiled_if(hook.event, handler["if"]) if "if" in handler else None,
        "argv": argv,
        "env": added or {},
        "data": None if data is None else str(data),
        "timeout": timeout_of(handler, hook.event),
        "background": background,
    }


def _secret_option(added: Mapping[str, str] | None) -> bool:
    """An option variable still naming a stored secret (`${PLUGMAN_OPT_...}`): not planned."""
    return any("${PLUGMAN_OPT_" in value for value in (added or {}).values())


def _version() -> str:
    from plugman import __version__  # lazy: a leaf; named here for the plan's key

    return __version__


def project_folder(paths: Paths) -> Path:
    return Path(planfile.project_folder(str(paths.state_dir), str(paths.project_dir)))


def hook_file(paths: Paths, word: str, event: str, ref: str) -> Path:
    return project_folder(paths) / planfile.hook_name(word, event, ref)


def dump(plan: dict[str, Any]) -> bytes:
    return json.dumps(plan, indent=None, separators=(",", ":")).encode()


def write_miss(
    paths: Paths, env: Mapping[str, str], word: str, launching: Launching, ref: str, hook: Hook
) -> None:
    """The full launcher's plan for the next call (written whole, 0600; a failure is no error:
    the next call runs the full launcher again)."""
    if planfile.state_dir(env) != str(paths.state_dir):
        return  # the fast path would not find it there
    plan = hook_plan(paths, env, word, launching, ref, hook)
    if plan is None:
        return
    with contextlib.suppress(OSError):
        atomic_write(hook_file(paths, word, hook.event, ref), dump(plan), private=True)


def listing(folder: Path) -> list[Path]:
    """What `folder` holds, sorted; nothing when it cannot be read (no plans yet). Only the
    listing is forgiven: a failed delete or write fails the deployment's transaction."""
    try:
        return sorted(folder.iterdir())
    except OSError:
        return []


def prune_direct(work: Session, kept: set[str | None]) -> None:
    """Delete the project's sh plans (runtime.launch.shplan) whose hook has no JSON plan any
    more; the fast path writes the others again from their JSON plans when stale."""
    paths = work.paths
    folder = Path(shplan.folder(str(paths.state_dir), str(paths.project_dir)))
    for file in listing(folder):
        if file.is_file() and file.suffix == ".sh" and file.name not in kept:
            work.tx.write(file, None, prune_to=paths.state_dir)


def deploy(
    work: Session,
    env: Mapping[str, str],
    resolution: Resolution | None,
    launchers: Mapping[str, Launching],
) -> None:
    """Stage the project's plans for every hook the linked agents' launchers (`launchers`, by
    their word) can name, and delete the project's plans no deployment wants any more."""
    paths = work.paths
    wanted: dict[Path, bytes] = {}
    direct: set[str | None] = set()
    if resolution is not None and planfile.writable(env):
        ids = refs(resolution.hooks)
        for word, launching in launchers.items():
            for position, hook in enumerate(resolution.hooks):
                ref = str(ids[position])
                plan = hook_plan(paths, env, word, launching, ref, hook)
                if plan is not None:
                    wanted[hook_file(paths, word, hook.event, ref)] = dump(plan)
                    direct.add(shplan.name(word, hook.event, ref))
    prune_direct(work, direct)
    folder = project_folder(paths)
    for file in listing(folder):
        if file not in wanted and not file.name.startswith(SERVER):
            work.tx.write(file, None, prune_to=paths.state_dir)
    for file, data in wanted.items():
        if fs.current(file) != data:
            work.tx.write(file, data, private=True)

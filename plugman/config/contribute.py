"""What one enabled plugin brings to the resolution: its servers, hooks, skills, commands and
subagents, with its own variables (`${CLAUDE_PLUGIN_ROOT}`, ...) and its `userConfig` values put
in (see `plugman.config.user_config`), and what must be left out for want of a value."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Literal, NamedTuple

from plugman.config import redact, user_config
from plugman.config.expand import VARIABLE, substitute
from plugman.config.merge import Dropped, Hook, MarkdownComponent, Origin, Server
from plugman.core.jsonvalue import HookEntry, JSONObject
from plugman.core.paths import Paths
from plugman.core.state import InstalledPlugin, Scope
from plugman.core.store import Store
from plugman.manifest.reader import Report

SHELL_SAFE = re.compile(r"^[\w@%+=:,./ -]*$")  # nothing a shell expands, quotes or runs


class Installed(NamedTuple):
    """An installed plugin as resolution sees it: the highest scope's record of it."""

    id: str
    version: str
    enabled: bool
    scope: Scope
    blocked: str = ""  # why managed policy blocks it: nothing of it is delivered


class Contributions(NamedTuple):
    """What the installed plugins bring."""

    rows: list[Installed]
    servers: list[Server]
    hooks: list[Hook]
    skills: list[MarkdownComponent]
    commands: list[MarkdownComponent]
    agents: list[MarkdownComponent]
    unconsented: dict[str, str]  # plugin id -> content hash (see plugman.config.scopes)
    dropped: list[Dropped]  # entries that need a userConfig value, or use one unsafely
    secrets: dict[str, str]  # PLUGMAN_OPT_<PLUGIN>_<KEY> -> a sensitive value (to expand)


class Given(NamedTuple):
    """How a plugin's userConfig values are found."""

    stored: Mapping[str, Any]  # the record's non-sensitive values
    secret: Callable[[str], str | None]  # KEY -> the sensitive value in the store
    env: Mapping[str, str]
    references: bool  # for an agent's file: hooks keep ${PLUGMAN_OPT_...} too


def substitute_hook(handler: HookEntry, env: dict[str, str] | None) -> HookEntry:
    """A hook handler with the plugin's variables put in. A shell command (no `args`) gets only
    values the shell reads as plain text: any other one (a project folder named `$(…)`, say)
    stays a `${VAR}` reference, which the shell expands from the hook's environment, where
    plugman.runtime.hooks.run sets it, without running what the value holds."""
    found: HookEntry = substitute_all(handler, env)
    command = handler.get("command")
    if env and isinstance(command, str) and not isinstance(handler.get("args"), list):
        found["command"] = VARIABLE.sub(lambda match: _shell_value(match, env), command)
    return found


def _shell_value(match: re.Match[str], env: dict[str, str]) -> str:
    name = match.group(1)
    if name not in env:
        return match.group(0)  # the shell expands it, default included
    return env[name] if SHELL_SAFE.match(env[name]) else match.group(0)


def substitute_all(value: Any, env: dict[str, str] | None) -> Any:
    """Put a plugin's own variables (${CLAUDE_PLUGIN_ROOT}, …) in; leave the rest for later."""
    if not env:
        return value
    if isinstance(value, str):
        return substitute(value, env)
    if isinstance(value, list):
        return [substitute_all(item, env) for item in value]
    if isinstance(value, dict):
        return {key: substitute_all(item, env) for key, item in value.items()}
    return value


MISSING_COPY = "stored-copy-missing"


def missing_copy(plugin_id: str, scope: Scope, state: str = "missing") -> tuple[str, str]:
    """What is said (and what to do) when an installed plugin's stored copy is gone (or
    modified): the resolution's diagnostic, `plugman doctor`'s problem, `mcp run`'s error."""
    return (
        f"the stored copy of {plugin_id} ({scope}) is {state}",
        f"reinstall it: plugman uninstall {plugin_id.split('@')[0]} --scope {scope} && "
        f"plugman install {plugin_id} --scope {scope}",
    )


def contribute(
    found: Contributions,
    paths: Paths,
    plugin_id: str,
    entry: InstalledPlugin,
    report: Report,
    given: Given,
    scope: Scope,
) -> None:
    """Add what one enabled plugin brings, its own variables and userConfig values put in."""
    store = Store(paths.store_dir)
    root = store.path(entry.content_hash)
    if not root.is_dir():  # removed by hand: nothing of it resolves, and this says why
        message, hint = missing_copy(plugin_id, scope)
        report.sink(root).error(MISSING_COPY, message, (), hint)
        return
    # content-addressed and scanned at install: loaded through the cache of its load
    # lazy: manifest.stored not loaded by plugman config resolve without plugins
    from plugman.manifest import stored

    loaded = stored.load(root, report, entry.entry, store.loaded(entry.content_hash))
    if loaded is None:
        return
    env = {
        "CLAUDE_PLUGIN_ROOT": str(root),
        "CLAUDE_PROJECT_DIR": str(paths.project_dir),
        "CLAUDE_PLUGIN_DATA": str(paths.plugin_data(plugin_id)),
    }
    options = loaded.user_config
    values = user_config.values(loaded.name, options, given.stored, given.secret, given.env)
    for secret in values.secrets.values():
        redact.sensitive(secret)
    found.secrets.update(values.secrets)
    server_env = values.env(plain=False)  # references: resolution expands them
    hook_env = tuple(sorted(values.env(plain=not given.references).items()))
    hook_text = values.text if given.references else values.plain()
    origin = Origin("plugin", str(root), plugin_id)

    def kept(
        kind: Literal["server", "hook"], name: str, value: JSONObject, shell: str | None
    ) -> bool:
        """False (and why, dropped) when `value` needs a value nobody gave or puts one in a
        field a shell parses."""
        keys = user_config.used(value)
        unset = sorted(keys & values.unset)
        if shell is not None and keys & user_config.used(value.get(shell)):
            detail = f"${{user_config.*}} is not allowed in the shell-parsed {shell!r}"
            hint = "the plugin must use exec form (args) or read $CLAUDE_PLUGIN_OPTION_<KEY>"
            found.dropped.append(Dropped(kind, name, origin, "unsafe-config", f"{detail}; {hint}"))
            return False
        if unset:
            fix = user_config.fix_command(plugin_id, unset, scope)
            detail = f"needs {plugin_id}'s option(s) {', '.join(unset)}; {fix}"
            found.dropped.append(Dropped(kind, name, origin, "needs-config", detail))
            return False
        return True

    for server in loaded.mcp_servers:
        name = f"plugin:{loaded.name}:{server.name}"
        if kept("server", name, server.entry, "headersHelper"):
            value = user_config.put(substitute_all(server.entry, env), values.text)
            if server_env and isinstance(value.get("command"), str):
                given_env = value.get("env") if isinstance(value.get("env"), dict) else {}
                value["env"] = {**server_env, **given_env}
            found.servers.append(Server(name, value, origin))
    for hook in loaded.hooks:
        name = f"{hook.event}:{hook.matcher or '*'}"
        shell = None if isinstance(hook.entry.get("args"), list) else "command"
        if kept("hook", name, hook.entry, shell):
            handler = user_config.put(substitute_hook(hook.entry, env), hook_text)
            found.hooks.append(Hook(hook.event, hook.matcher, handler, origin, hook_env))
    found.skills.extend(
        MarkdownComponent(f"{loaded.name}:{s.name}", str(s.path), origin) for s in loaded.skills
    )
    found.commands.extend(
        MarkdownComponent(f"{loaded.name}:{p.stem}", str(p), origin) for p in loaded.commands
    )
    found.agents.extend(
        MarkdownComponent(f"{loaded.name}:{p.stem}", str(p), origin) for p in loaded.agents
    )

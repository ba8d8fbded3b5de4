"""The managed policy's typed rules, and how managed settings are read into them
(docs/claude-format.md#mcp-policy): `parse` turns the policy keys of one settings document
(plugman's managed-settings.toml, or one of Claude Code's managed-settings JSON files) into a
`Policy`, each rule keeping the file and key path it was written at (`origin`).

What plugman cannot read fails closed, with a located error: a broken deny or block rule (or
such a list that is not a list) refuses everything until it is fixed, a broken allow rule
allows nothing, an allow list that is not a list allows nothing, and an unreadable
`allowManagedHooksOnly` keeps only managed hooks. `gatewayAccess` (who may use which servers
and tools through `plugman mcp serve`: plugman.config.gateway_access) is an allow list: a broken
rule is left out, a value that is not a list grants nothing, and once the key is written a caller
no rule names gets nothing.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Literal, NamedTuple, TypeVar, get_args

from plugman.config.claude_source import ClaudeSource
from plugman.manifest.diagnostics import Sink

ServerKey = Literal["serverName", "serverCommand", "serverUrl"]
SERVER_KEYS: tuple[ServerKey, ...] = get_args(ServerKey)
UNREADABLE = "unreadable"  # a deny or block rule plugman cannot read: it matches everything
# a marketplace rule's keys and the types their values have (docs/claude-format.md#mcp-policy)
SOURCE_KEYS: dict[str, type] = {
    "source": str,
    "repo": str,
    "ref": str,
    "path": str,
    "url": str,
    "headers": dict,
    "package": str,
    "hostPattern": str,
    "pathPattern": str,
}
# each flag, and what it is taken as when unreadable (the stricter value: Claude Code 2.1.332
# counts any disableDirectMcpSkills but false as set)
FLAGS = {
    "allowAllClaudeAiMcps": False,
    "allowManagedHooksOnly": True,
    "disableDirectMcpSkills": True,
}
# a gatewayAccess rule's keys: who (group claim values, `*` for every authenticated caller),
# which servers (names as served, `*` for all) and which of their tools (`*` wildcards)
ACCESS_KEYS = ("groups", "servers", "tools")
EVERY = "*"
R = TypeVar("R", "ServerRule", "SourceRule", "AccessRule")
HINT = "fix it in managed-settings.toml (docs/claude-format.md#mcp-policy)"
ACCESS_HINT = "fix it in managed-settings.toml (docs/claude-format.md#gateway-access)"


class ServerRule(NamedTuple):
    """One allowedMcpServers / deniedMcpServers entry: a server name, a command line (matched
    after expansion) or a URL pattern, as `key` says."""

    key: ServerKey | Literal["unreadable"]
    name: str = ""
    command: tuple[str, ...] = ()
    url: str = ""
    origin: str = ""  # the file and key path it was written at

    def shown(self) -> str:
        if self.key == UNREADABLE:
            return "(a rule plugman cannot read: fix managed-settings.toml)"
        value = {"serverName": self.name, "serverCommand": list(self.command)}.get(self.key)
        return f"{self.key}={self.url if value is None else value!r}"


class SourceRule(NamedTuple):
    """One strictKnownMarketplaces / blockedMarketplaces entry: a source form (`source` with
    its `repo`, `url` or `path`, and `ref`) or a `hostPattern` / `pathPattern` regular
    expression; `fields` is the entry as written, for messages."""

    fields: tuple[tuple[str, object], ...]
    source: str | None = None
    repo: str | None = None
    url: str | None = None
    path: str | None = None
    ref: str | None = None
    host_pattern: str | None = None
    path_pattern: str | None = None
    unreadable: bool = False  # a block rule plugman cannot read: it matches every marketplace
    origin: str = ""  # the file and key path it was written at

    def shown(self) -> str:
        if self.unreadable:
            return "(a rule plugman cannot read: fix managed-settings.toml)"
        return ", ".join(f"{k}={v!r}" for k, v in self.fields)


class PluginRule(NamedTuple):
    """One managed `enabledPlugins` entry: false blocks the plugin, true forces it."""

    plugin: str  # name@marketplace
    enabled: bool
    origin: str


class AccessRule(NamedTuple):
    """One gatewayAccess entry: callers in any of `groups` may list and call the tools of
    `servers` whose own names fit one of `tools`, and use those servers' prompts and resources
    (plugman.config.gateway_access)."""

    groups: tuple[str, ...]
    servers: tuple[str, ...]
    tools: tuple[str, ...] = (EVERY,)
    origin: str = ""  # the file and key path it was written at

    def shown(self) -> str:
        return f"groups={list(self.groups)}, servers={list(self.servers)}, tools={list(self.tools)}"


class Policy(NamedTuple):
    allowed: tuple[ServerRule, ...] | None = None  # None: no allowlist; (): nothing allowed
    denied: tuple[ServerRule, ...] = ()
    allow_all_claude_ai: bool = False
    allow_managed_hooks_only: bool = False
    # Claude Code loads no skill of an MCP server it connects to directly (managed only)
    disable_direct_mcp_skills: bool = False
    known_marketplaces: tuple[SourceRule, ...] | None = None  # strictKnownMarketplaces
    blocked_marketplaces: tuple[SourceRule, ...] = ()
    # a second allow list that must allow too (Claude Code's, when both files have one)
    allowed_too: tuple[ServerRule, ...] | None = None
    known_too: tuple[SourceRule, ...] | None = None
    plugins: tuple[PluginRule, ...] = ()  # managed enabledPlugins (Claude Code's)
    extra_marketplaces: tuple[tuple[str, ClaudeSource, str], ...] = ()  # name, source, origin
    flags: tuple[tuple[str, bool, str], ...] = ()  # each flag written: key, value, where
    # gatewayAccess: None, no rule written (every caller gets everything); (): nothing granted
    gateway_access: tuple[AccessRule, ...] | None = None

    def plugin_rule(self, plugin: str) -> PluginRule | None:
        """The managed enabledPlugins entry for `plugin` (name@marketplace), if any."""
        return next((r for r in self.plugins if r.plugin == plugin), None)


def parse(settings: Mapping[str, Any], sink: Sink | None = None) -> Policy:
    """The policy keys of managed settings, as typed rules. A rule that is not a table or a
    value of the wrong type is an error in `sink`, located by its key path, and the rule is
    left out (a list that is not a list: as if unset); an unknown key is a warning, as in
    every other file plugman reads."""
    sink = sink or Sink("managed-settings.toml")
    name = "strictKnownMarketplaces"
    if name not in settings and "allowedMarketplaces" in settings:
        name = "allowedMarketplaces"
    blocked = SourceRule((), unreadable=True)
    denied = ServerRule("unreadable")
    return Policy(
        known_marketplaces=_rules(settings, name, _source_rule, sink),
        blocked_marketplaces=_rules(settings, "blockedMarketplaces", _source_rule, sink, blocked)
        or (),
        allowed=_rules(settings, "allowedMcpServers", _server_rule, sink),
        denied=_rules(settings, "deniedMcpServers", _server_rule, sink, denied) or (),
        allow_all_claude_ai=_flag(settings, "allowAllClaudeAiMcps", sink, unreadable=False),
        allow_managed_hooks_only=_flag(settings, "allowManagedHooksOnly", sink, unreadable=True),
        disable_direct_mcp_skills=_flag(settings, "disableDirectMcpSkills", sink, unreadable=True),
        flags=tuple(
            (key, _flag(settings, key, Sink(sink.file), unreadable=unreadable), sink.file)
            for key, unreadable in FLAGS.items()
            if key in settings
        ),
        gateway_access=_rules(settings, "gatewayAccess", _access_rule, sink),
    )


def _flag(settings: Mapping[str, Any], key: str, sink: Sink, *, unreadable: bool) -> bool:
    """The flag's value; `unreadable` (the stricter value) when it is not true or false."""
    value = settings.get(key)
    if value is None or isinstance(value, bool):
        return value is True
    sink.error("policy-type", f"{key} must be true or false: taken as {unreadable}", (key,), HINT)
    return unreadable


def _rules(
    settings: Mapping[str, Any],
    key: str,
    make: Callable[[dict[str, Any], Sink], R | None],
    sink: Sink,
    broken: R | None = None,
) -> tuple[R, ...] | None:
    """The rules of list `key` (None: unset). A rule that cannot be read becomes `broken`, a
    rule that matches everything, in a deny or block list (given `broken`), and is left out
    of an allow list; a value that is not a list is all `broken`, or an empty allow list."""
    value = settings.get(key)
    if value is None:
        return None
    then = "it refuses everything" if broken is not None else "it allows nothing"
    if not isinstance(value, list):
        message = f"{key} must be a list of tables: until it is fixed, {then}"
        sink.error("policy-type", message, (key,), HINT)
        return () if broken is None else (broken._replace(origin=f"{sink.file}: {key}"),)
    found = []
    for index, rule in enumerate(value):
        made = None
        if isinstance(rule, dict):
            made = make(rule, sink.child((key, index)))
        else:
            sink.error("policy-type", "a rule must be a table", (key, index), HINT)
        if made is not None:
            found.append(made._replace(origin=f"{sink.file}: {key}[{index}]"))
            continue
        message = f"until this rule is fixed, {then}"
        sink.error("policy-unreadable", message, (key, index), HINT)
        if broken is not None:
            found.append(broken._replace(origin=f"{sink.file}: {key}[{index}]"))
    return tuple(found)


def _server_rule(rule: dict[str, Any], sink: Sink) -> ServerRule | None:
    for key in sorted(set(rule) - set(SERVER_KEYS)):
        sink.warning("unknown-key", f"unknown key {key!r} in a server rule", (key,), HINT)
    keys = [key for key in SERVER_KEYS if key in rule]
    if len(keys) != 1:
        message = f"a server rule has exactly one of {', '.join(SERVER_KEYS)}"
        sink.error("policy-key", message, (), HINT)
        return None
    key, value = keys[0], rule[keys[0]]
    if key == "serverCommand":
        if isinstance(value, list) and all(isinstance(part, str) for part in value):
            return ServerRule(key, command=tuple(value))
        sink.error("policy-type", f"{key} must be a list of strings", (key,), HINT)
        return None
    if not isinstance(value, str):
        sink.error("policy-type", f"{key} must be a string", (key,), HINT)
        return None
    return ServerRule(key, name=value) if key == "serverName" else ServerRule(key, url=value)


def _access_rule(rule: dict[str, Any], sink: Sink) -> AccessRule | None:
    """A gatewayAccess rule, or None (an error said where) when any of its lists is missing,
    not a list of non-empty strings, or holds a `*` that is not the whole value (only `tools`
    takes patterns: a group or server is named exactly, or `*`)."""
    for key in sorted(set(rule) - set(ACCESS_KEYS)):
        message = f"unknown key {key!r} in a gatewayAccess rule"
        sink.warning("unknown-key", message, (key,), ACCESS_HINT)
    found: dict[str, tuple[str, ...]] = {"tools": (EVERY,)}
    for key in ACCESS_KEYS:
        if key not in rule and key in found:
            continue
        value = rule.get(key)
        if not (isinstance(value, list) and value and all(isinstance(v, str) and v for v in value)):
            what = "missing" if value is None else "not a list of non-empty strings"
            sink.error("policy-type", f"{key} is {what}", (key,), ACCESS_HINT)
            return None
        partial = [v for v in value if EVERY in v and v != EVERY]
        if partial and key != "tools":
            message = f"{key} names exactly (or `*` for all), not a pattern: {partial[0]!r}"
            sink.error("policy-pattern", message, (key,), ACCESS_HINT)
            return None
        found[key] = tuple(value)
    return AccessRule(found["groups"], found["servers"], found["tools"])


def _source_rule(rule: dict[str, Any], sink: Sink) -> SourceRule | None:
    broken = False
    for key, value in sorted(rule.items()):
        kind = SOURCE_KEYS.get(key)
        if kind is None:
            sink.warning("unknown-key", f"unknown key {key!r} in a marketplace rule", (key,), HINT)
        elif not isinstance(value, kind):
            what = "a string" if kind is str else "a table"
            sink.error("policy-type", f"{key} must be {what}", (key,), HINT)
            broken = True
        elif key in ("hostPattern", "pathPattern") and not _compiles(str(value)):
            message = f"{key} {value!r} is not a valid regular expression"
            sink.error("policy-pattern", message, (key,), HINT)  # and matching with it refuses
    if broken:
        return None
    return SourceRule(
        tuple(sorted(rule.items())),
        rule.get("source"),
        rule.get("repo"),
        rule.get("url"),
        rule.get("path"),
        rule.get("ref"),
        rule.get("hostPattern"),
        rule.get("pathPattern"),
    )


def _compiles(pattern: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            re.compile(pattern)
    except re.error:
        return False
    return True

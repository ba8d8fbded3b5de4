"""Who may use which servers and tools through the gateway (`plugman mcp serve` over HTTP):
managed `gatewayAccess` rules (docs/claude-format.md#gateway-access), compiled once.

```toml
# managed-settings.toml
gatewayAccess = [
  { groups = ["eng"], servers = ["notes", "tickets"] },                 # tools = ["*"]
  { groups = ["support"], servers = ["tickets"], tools = ["get_*", "search"] },
  { groups = ["*"], servers = ["time"] },                               # every caller
]
```

- `groups`: who, as the identity provider's groups claim names them, compared exactly (case and
  all); `*` admits every authenticated caller, the shared `--auth token` caller included (it is
  a caller with no groups, so only `*` rules admit it).
- `servers`: the servers' names as the gateway serves them (`plugman mcp list`: `notes`,
  `plugin:<plugin>:<server>`), exactly; `*` for all of them.
- `tools`: patterns on each server's own tool names (not the gateway's `<server>__<tool>`
  names), matched whole and case-sensitively, `*` matching any run of characters; default
  `["*"]`. A rule naming a server also grants that server's prompts and resources.

A caller gets the union of the rules naming any of its groups (or `*`). Once `gatewayAccess` is
written, a caller no rule admits gets nothing (deny by default); with no `gatewayAccess` at all,
every authenticated caller gets everything, as before. A rule plugman cannot read is left out
with a located error, and a `gatewayAccess` that is not a list grants nothing: a typo never
widens access (plugman.config.policy_rules). Only managed-settings.toml holds these rules: a
project's or user's plugman.toml cannot (the key is ignored there, with a warning).

The gateway (plugman.runtime.gateway.server) asks `Access.grant` once per request with the
caller's groups (a `Grant`, cached per set of groups) and then `Grant.tool` per tool: one dict
lookup and one compiled pattern. Over stdio, and over HTTP without `--auth`, there is no caller
to ask about: the local user sees everything.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from plugman.config.policy import Verdict
from plugman.config.policy_rules import EVERY, AccessRule

MAX_GRANTS = 1024  # distinct group sets kept compiled; beyond that the cache starts over
NO_RULES = (
    "no gatewayAccess rule is written: every authenticated caller may use every server and tool"
)


def pattern(patterns: Iterable[str]) -> re.Pattern[str]:
    """One compiled pattern matching a whole name that fits any of `patterns` (`*`: any run of
    characters, every other character itself)."""
    alternatives = sorted({".*".join(map(re.escape, p.split(EVERY))) for p in patterns})
    return re.compile("|".join(alternatives) or "(?!)", re.DOTALL)


class Grant:
    """What one caller may use: per server, a compiled pattern of its own tool names
    (`every`: the pattern for a server no rule names, from `servers = ["*"]` rules)."""

    __slots__ = ("every", "servers")

    def __init__(self, servers: dict[str, re.Pattern[str]], every: re.Pattern[str] | None):
        self.servers = servers
        self.every = every

    def server(self, name: str) -> bool:
        """Whether the caller may use server `name` at all (its prompts and resources)."""
        return self.every is not None or name in self.servers

    def tool(self, server: str, tool: str) -> bool:
        """Whether the caller may list and call `tool` (the server's own name for it)."""
        found = self.servers.get(server, self.every)
        return found is not None and found.fullmatch(tool) is not None


class Access:
    """The gatewayAccess rules, compiled per set of groups on first use."""

    def __init__(self, rules: tuple[AccessRule, ...] | None) -> None:
        self.rules = rules
        self._grants: dict[frozenset[str], Grant] = {}
        self._seen: dict[tuple[str, ...], Grant] = {}  # by the groups as given: one hash

    @property
    def open(self) -> bool:
        """No rule is written: every caller may use everything."""
        return self.rules is None

    def grant(self, groups: Iterable[str]) -> Grant:
        """What a caller in `groups` may use. Groups are exact names; anything but a collection
        of strings (a lone string is not a list of groups) counts as no groups."""
        given = groups if type(groups) is tuple else None
        try:
            found = self._seen.get(given) if given is not None else None
        except TypeError:  # something unhashable among them
            given = found = None
        if found is not None:
            return found
        key = frozenset(_names(groups))
        found = self._grants.get(key)
        if found is None:
            if len(self._grants) >= MAX_GRANTS:
                self._grants.clear()
                self._seen.clear()
            found = self._grants[key] = _compiled(self.admitting(key))
        if given is not None:
            if len(self._seen) >= MAX_GRANTS:
                self._seen.clear()
            self._seen[given] = found
        return found

    def admitting(self, groups: frozenset[str]) -> list[AccessRule]:
        """The rules that admit a caller in `groups`, in the order written."""
        return [r for r in self.rules or () if EVERY in r.groups or groups & set(r.groups)]


def _compiled(rules: list[AccessRule]) -> Grant:
    every = [p for r in rules if EVERY in r.servers for p in r.tools]
    named: dict[str, list[str]] = {}
    for rule in rules:
        for server in rule.servers:
            if server != EVERY:
                named.setdefault(server, []).extend(rule.tools)
    servers = {name: pattern([*tools, *every]) for name, tools in named.items()}
    return Grant(servers, pattern(every) if every else None)


def verdict(
    rules: tuple[AccessRule, ...] | None,
    groups: Iterable[str],
    server: str,
    tool: str | None = None,
    where: str = "",
) -> Verdict:
    """Whether a caller in `groups` may use `tool` of `server` (None: the server itself, its
    prompts and resources), with the first rule that grants it, or why none does."""
    if rules is None:
        return Verdict(True, NO_RULES)
    key = frozenset(_names(groups))
    for rule in Access(rules).admitting(key):
        if EVERY not in rule.servers and server not in rule.servers:
            continue
        if tool is None or pattern(rule.tools).fullmatch(tool):
            return Verdict(True, f"allowed by gatewayAccess {rule.shown()}", rule.origin)
    who = f"groups {sorted(key)}" if key else "a caller with no groups"
    what = f"tool {tool!r} of server {server!r}" if tool is not None else f"server {server!r}"
    origin = rules[0].origin.rpartition("[")[0] if rules else where
    return Verdict(False, f"no gatewayAccess rule grants {who} {what}", origin)


def _names(groups: Iterable[str]) -> list[str]:
    return [] if isinstance(groups, str | bytes) else [g for g in groups if isinstance(g, str)]

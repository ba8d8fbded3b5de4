"""Managed MCP policy: `allowedMcpServers` / `deniedMcpServers`. Deny wins
(docs/claude-format.md#mcp-policy).

Each entry has exactly one key: `serverName` (exact), `serverCommand` (the command and its
arguments, exactly and in order, after expansion) or `serverUrl` (`*` wildcards anywhere; the
host is case-insensitive and ignores a trailing dot; a pattern without a path matches any path).

What plugman cannot read fails closed, with a located error: a broken deny or block rule (or
such a list that is not a list) refuses everything until it is fixed, a broken allow rule
allows nothing, an allow list that is not a list allows nothing, and an unreadable
`allowManagedHooksOnly` keeps only managed hooks. An organization's rule is never dropped
silently, and a typo in it never lets through what it was written to stop.

Claude Code's own managed settings are read too (`plugman.config.claude_policy`) and combined
with plugman's: deny and block lists are unioned, each allow list must allow (`allowed_too`,
`known_too`), a flag set by either is set. Each rule keeps where it was written (`origin`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, assert_never

from plugman.config import declarations
from plugman.config.expand import expand
from plugman.config.policy_rules import (
    FLAGS,
    HINT,
    SERVER_KEYS,
    SOURCE_KEYS,
    UNREADABLE,
    AccessRule,
    PluginRule,
    Policy,
    ServerKey,
    ServerRule,
    SourceRule,
    parse,
)
from plugman.core import identity
from plugman.core.errors import PlugmanError
from plugman.core.jsonvalue import ServerEntry
from plugman.core.paths import Paths
from plugman.manifest.diagnostics import Sink

__all__ = [  # the rules live in plugman.config.policy_rules; they are read from here too
    "FLAGS",
    "HINT",
    "SERVER_KEYS",
    "SOURCE_KEYS",
    "UNREADABLE",
    "AccessRule",
    "PluginRule",
    "Policy",
    "ServerKey",
    "ServerRule",
    "SourceRule",
    "Verdict",
    "combine",
    "managed",
    "marketplace_refusal",
    "marketplace_verdict",
    "parse",
    "refusal",
    "server_verdict",
    "url_matches",
]


def managed(paths: Paths, sink_for: Callable[[Path], Sink] | None = None) -> Policy:
    """The managed policy: managed-settings.toml and Claude Code's managed settings, combined
    (what marketplace add, install, sync and every agent's deployment obey)."""
    from plugman.config import claude_policy  # lazy: only where managed policy is read

    own = managed_settings(paths)
    sink = sink_for(paths.managed_settings) if sink_for else Sink(str(paths.managed_settings))
    mine = parse(own, sink) if own else Policy()
    return combine(mine, claude_policy.load(paths, sink_for))


def combine(mine: Policy, claude: Policy) -> Policy:
    """Both policies at once, the stricter winning: block and deny lists unioned, each allow
    list must allow, a flag true in either is true (but allowAllClaudeAiMcps, which allows
    more: only when both say so, or the one that speaks); gatewayAccess is plugman's own key, read
    from managed-settings.toml only."""
    return Policy(
        allowed=mine.allowed if mine.allowed is not None else claude.allowed,
        denied=(*mine.denied, *claude.denied),
        allow_all_claude_ai=(mine.allow_all_claude_ai or claude.allow_all_claude_ai)
        and not any(
            k == "allowAllClaudeAiMcps" and not v for k, v, _ in (*mine.flags, *claude.flags)
        ),
        allow_managed_hooks_only=mine.allow_managed_hooks_only or claude.allow_managed_hooks_only,
        disable_direct_mcp_skills=mine.disable_direct_mcp_skills
        or claude.disable_direct_mcp_skills,
        known_marketplaces=mine.known_marketplaces
        if mine.known_marketplaces is not None
        else claude.known_marketplaces,
        blocked_marketplaces=(*mine.blocked_marketplaces, *claude.blocked_marketplaces),
        allowed_too=claude.allowed if mine.allowed is not None else None,
        known_too=claude.known_marketplaces if mine.known_marketplaces is not None else None,
        plugins=(*mine.plugins, *claude.plugins),
        extra_marketplaces=(*mine.extra_marketplaces, *claude.extra_marketplaces),
        flags=(*mine.flags, *claude.flags),
        gateway_access=mine.gateway_access,
    )


def managed_settings(paths: Paths) -> dict[str, Any]:
    """Managed settings; an unreadable policy file is an error, never silently no policy."""
    if not paths.managed_settings.is_file():
        return {}
    return declarations.read(paths.managed_settings)


def marketplace_refusal(kind: str, location: str, ref: str | None, policy: Policy) -> str | None:
    """Why managed policy refuses a marketplace source (kind: directory, git or url), or None.
    `blockedMarketplaces` matches any spelling, ref and path; `strictKnownMarketplaces` exactly."""
    found = marketplace_verdict(kind, location, ref, policy)
    return None if found is None or found.allowed else found.why


class Verdict(NamedTuple):
    """What the managed policy says about one thing, the rule that decided and where it is
    written (file and key path)."""

    allowed: bool
    why: str
    origin: str = ""


def marketplace_verdict(
    kind: str, location: str, ref: str | None, policy: Policy
) -> Verdict | None:
    """The verdict on a marketplace source, or None when no rule speaks of it."""
    for block in policy.blocked_marketplaces:
        if block.unreadable or _source_matches(block, kind, location, ref, loose=True):
            return Verdict(False, f"blocked by blockedMarketplaces {block.shown()}", block.origin)
    allowed = None
    for known in (policy.known_marketplaces, policy.known_too):
        if known is None:
            continue
        rule = next(
            (r for r in known if _source_matches(r, kind, location, ref, loose=False)), None
        )
        if rule is None:
            where = known[0].origin.rpartition("[")[0] if known else ""
            return Verdict(False, "not in strictKnownMarketplaces", where)
        why = f"allowed by strictKnownMarketplaces {rule.shown()}"
        allowed = allowed or Verdict(True, why, rule.origin)
    return allowed


def _source_matches(
    rule: SourceRule, kind: str, location: str, ref: str | None, *, loose: bool
) -> bool:
    """Whether a marketplace source fits a rule, both compared as canonical identities
    (`plugman.core.identity`: a git URL as git resolves it, a URL as the URL standard reads
    it, a folder by its resolved path). `loose` (a block rule): any ref, and without case."""
    if rule.host_pattern is not None:
        host = _hostname(kind, location)
        return bool(host and _search(rule.host_pattern, host))
    if rule.path_pattern is not None:
        return kind == "directory" and _search(rule.path_pattern, _folder(location))
    if not (loose or rule.ref == ref):
        return False
    form = rule.source
    wanted = {"github": rule.repo, "git": rule.url, "url": rule.url}.get(str(form), rule.path)
    if wanted is None or form not in ("github", "git", "url", "directory", "file"):
        return False
    mine = _identity(kind, location)
    if form in ("github", "git"):
        if kind != "git":
            return False
        theirs = identity.git(f"https://github.com/{wanted}" if form == "github" else wanted)
        if form == "github" and theirs.endswith("/*"):  # owner/*: the owner's repositories
            return mine.lower().startswith(theirs[:-1].lower())
    elif form == "url":
        theirs = identity.url(wanted) if kind == "url" else ""
    else:
        theirs = _folder(wanted) if kind == "directory" else ""
    return bool(theirs) and (mine == theirs or (loose and mine.lower() == theirs.lower()))


def _identity(kind: str, location: str) -> str:
    if kind == "git":
        return identity.git(location, identity.github_base())
    return identity.url(location) if kind == "url" else _folder(location)


def _folder(location: str) -> str:
    """A folder (or its marketplace.json: the same marketplace) by its normalised path."""
    path = posixpath.normpath(location.replace("\\", "/"))
    return path.removesuffix("/.claude-plugin/marketplace.json").removesuffix("/marketplace.json")


def _hostname(kind: str, location: str) -> str | None:
    if kind == "directory":
        return None
    if kind == "url":
        found = identity.web_url(location)
        return found.host if found else None
    canonical = identity.git(location, identity.github_base())
    if canonical.startswith("file:"):
        return None
    name = canonical.partition("/")[0]
    return name.rpartition(":")[0] if name.rpartition(":")[2].isdigit() else name


def _search(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error as exc:
        raise PlugmanError(
            f"managed policy pattern {str(pattern)!r} is not a valid regular expression: {exc}",
            hint="fix hostPattern / pathPattern in managed-settings.toml",
        ) from None


def refusal(name: str, entry: ServerEntry, policy: Policy, env: Mapping[str, str]) -> str | None:
    """Why the policy refuses this server, or None when it may run."""
    found = server_verdict(name, entry, policy, env)
    return None if found is None or found.allowed else found.why


def server_verdict(
    name: str, entry: ServerEntry, policy: Policy, env: Mapping[str, str]
) -> Verdict | None:
    """The verdict on a server, or None when no rule speaks of it. Deny wins; then every
    allow list there is (plugman's and Claude Code's) must allow it."""
    remote = isinstance(entry.get("url"), str)
    for deny in policy.denied:
        if _matches(deny, name, entry, env):
            return Verdict(False, f"denied by deniedMcpServers {deny.shown()}", deny.origin)
        if deny.key == "serverUrl" and remote and identity.unparsable(entry["url"]):
            why = f"its url does not parse, so deniedMcpServers {deny.shown()} cannot clear it"
            return Verdict(False, why, deny.origin)
    kind = "serverUrl" if remote else "serverCommand"
    allowed = None
    for allow in (policy.allowed, policy.allowed_too):
        if allow is None:
            continue
        specific = [r for r in allow if r.key == kind]
        rules = specific or [r for r in allow if r.key == "serverName"]
        rule = next((r for r in rules if _matches(r, name, entry, env)), None)
        if rule is None:
            matching = kind if specific else "serverName"
            why = f"not allowed by allowedMcpServers (no matching {matching})"
            return Verdict(False, why, allow[0].origin.rpartition("[")[0] if allow else "")
        allowed = allowed or Verdict(
            True, f"allowed by allowedMcpServers {rule.shown()}", rule.origin
        )
    return allowed


def _matches(rule: ServerRule, name: str, entry: ServerEntry, env: Mapping[str, str]) -> bool:
    match rule.key:
        case "serverName":
            return rule.name == name
        case "serverCommand":
            if not isinstance(entry.get("command"), str):
                return False
            missing: list[str] = []
            wanted = [expand(part, env, missing) for part in rule.command]
            args = entry.get("args")
            given = [str(a) for a in args] if isinstance(args, list) else []
            return wanted == [entry["command"], *given]
        case "serverUrl":
            url = entry.get("url")
            return isinstance(url, str) and url_matches(expand(rule.url, env, []), url)
        case "unreadable":
            return True
        case _:
            assert_never(rule.key)


def url_matches(pattern: str, url: str) -> bool:
    """Whether `url` fits `pattern`, both read as the agents' URL parser reads them (the WHATWG
    URL standard: `plugman.core.identity.url_matches`); a URL that does not parse fits
    nothing (and `server_verdict` refuses it under any URL rule)."""
    return identity.url_matches(pattern, url)

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
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Literal, NamedTuple, TypeVar, assert_never, get_args
from urllib.parse import urlsplit

from plugman.config import declarations
from plugman.config.expand import expand
from plugman.core.errors import PlugmanError
from plugman.core.paths import Paths
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
R = TypeVar("R")
HINT = "fix it in managed-settings.toml (docs/claude-format.md#mcp-policy)"


class ServerRule(NamedTuple):
    """One allowedMcpServers / deniedMcpServers entry: a server name, a command line (matched
    after expansion) or a URL pattern, as `key` says."""

    key: ServerKey | Literal["unreadable"]
    name: str = ""
    command: tuple[str, ...] = ()
    url: str = ""

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

    def shown(self) -> str:
        if self.unreadable:
            return "(a rule plugman cannot read: fix managed-settings.toml)"
        return ", ".join(f"{k}={v!r}" for k, v in self.fields)


class Policy(NamedTuple):
    allowed: tuple[ServerRule, ...] | None = None  # None: no allowlist; (): nothing allowed
    denied: tuple[ServerRule, ...] = ()
    allow_all_claude_ai: bool = False
    allow_managed_hooks_only: bool = False
    known_marketplaces: tuple[SourceRule, ...] | None = None  # strictKnownMarketplaces
    blocked_marketplaces: tuple[SourceRule, ...] = ()


def managed(paths: Paths) -> Policy:
    """The policy in managed-settings.toml alone (what marketplace add and install check)."""
    return parse(managed_settings(paths), Sink(str(paths.managed_settings)))


def managed_settings(paths: Paths) -> dict[str, Any]:
    """Managed settings; an unreadable policy file is an error, never silently no policy."""
    if not paths.managed_settings.is_file():
        return {}
    return declarations.read(paths.managed_settings)


GITHUB = re.compile(r"^https://github\.com/(?P<repo>[^/]+/[^/]+?)(?:\.git)?/?$", re.IGNORECASE)


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
        return () if broken is None else (broken,)
    found = []
    for index, rule in enumerate(value):
        made = None
        if isinstance(rule, dict):
            made = make(rule, sink.child((key, index)))
        else:
            sink.error("policy-type", "a rule must be a table", (key, index), HINT)
        if made is not None:
            found.append(made)
            continue
        message = f"until this rule is fixed, {then}"
        sink.error("policy-unreadable", message, (key, index), HINT)
        if broken is not None:
            found.append(broken)
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


def marketplace_refusal(kind: str, location: str, ref: str | None, policy: Policy) -> str | None:
    """Why managed policy refuses a marketplace source (kind: directory, git or url), or None.
    `blockedMarketplaces` matches any spelling, ref and path; `strictKnownMarketplaces` exactly."""
    for rule in policy.blocked_marketplaces:
        if rule.unreadable or _source_matches(rule, kind, location, ref, loose=True):
            return f"blocked by blockedMarketplaces {rule.shown()}"
    if policy.known_marketplaces is None:
        return None
    if any(_source_matches(r, kind, location, ref, loose=False) for r in policy.known_marketplaces):
        return None
    return "not in strictKnownMarketplaces"


def _source_matches(
    rule: SourceRule, kind: str, location: str, ref: str | None, *, loose: bool
) -> bool:
    if rule.host_pattern is not None:
        host = _hostname(location) if kind != "directory" else None
        return bool(host and _search(rule.host_pattern, host))
    if rule.path_pattern is not None:
        return kind == "directory" and _search(rule.path_pattern, location)
    same_ref = loose or rule.ref == ref
    form = rule.source
    github = GITHUB.match(location) if kind == "git" else None
    if form == "github" and github:
        return same_ref and _repo_matches(rule.repo or "", github["repo"], loose)
    if form == "git" and kind == "git":
        return same_ref and (rule.url == location or (loose and _same_url(rule, location)))
    if form in ("url", "directory", "file"):
        wanted = rule.url if form == "url" else rule.path
        return {"url": "url", "directory": "directory", "file": "directory"}[form] == kind and (
            wanted == location
        )
    return False


def _hostname(location: str) -> str | None:
    try:
        return urlsplit(location).hostname
    except ValueError:  # malformed (an unclosed IPv6 bracket): refused when it is fetched
        return None


def _search(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error as exc:
        raise PlugmanError(
            f"managed policy pattern {str(pattern)!r} is not a valid regular expression: {exc}",
            hint="fix hostPattern / pathPattern in managed-settings.toml",
        ) from None


def _repo_matches(pattern: str, repo: str, loose: bool) -> bool:
    if loose:
        pattern, repo = pattern.lower(), repo.lower()
    owner, _, name = pattern.partition("/")
    return repo == pattern or (name == "*" and repo.split("/")[0] == owner)


def _same_url(rule: SourceRule, location: str) -> bool:
    return (rule.url or "").lower().rstrip("/") == location.lower().rstrip("/")


def refusal(name: str, entry: dict[str, Any], policy: Policy, env: Mapping[str, str]) -> str | None:
    """Why the policy refuses this server, or None when it may run."""
    for rule in policy.denied:
        if _matches(rule, name, entry, env):
            return f"denied by deniedMcpServers {rule.shown()}"
    if policy.allowed is None:
        return None
    remote = isinstance(entry.get("url"), str)
    kind = "serverUrl" if remote else "serverCommand"
    specific = [rule for rule in policy.allowed if rule.key == kind]
    rules = specific or [rule for rule in policy.allowed if rule.key == "serverName"]
    if any(_matches(rule, name, entry, env) for rule in rules):
        return None
    return f"not allowed by allowedMcpServers (no matching {kind if specific else 'serverName'})"


def _matches(rule: ServerRule, name: str, entry: dict[str, Any], env: Mapping[str, str]) -> bool:
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
    """Whether `url` fits `pattern`; a URL or pattern that does not parse (an unclosed IPv6
    bracket, or a bad port where the pattern names one) fits nothing."""
    try:
        want, got = urlsplit(pattern), urlsplit(url)
    except ValueError:
        return False
    if want.scheme and want.scheme.lower() != got.scheme.lower():
        return False
    host = _glob((want.hostname or "").rstrip("."), re.IGNORECASE)
    if not host.fullmatch((got.hostname or "").rstrip(".")):
        return False
    try:
        if want.port is not None and want.port != got.port:
            return False
    except ValueError:
        return False
    if not want.path or want.path == "/":
        return True
    return bool(_glob(want.path).fullmatch(got.path))


def _glob(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), flags)

"""Managed MCP policy: `allowedMcpServers` / `deniedMcpServers`. Deny wins
(docs/claude-format.md#mcp-policy).

Each entry has exactly one key: `serverName` (exact), `serverCommand` (the command and its
arguments, exactly and in order, after expansion) or `serverUrl` (`*` wildcards anywhere; the
host is case-insensitive and ignores a trailing dot; a pattern without a path matches any path).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from plugman.config import declarations
from plugman.config.expand import expand
from plugman.core.errors import PlugmanError
from plugman.core.paths import Paths


class Policy(NamedTuple):
    allowed: tuple[dict[str, Any], ...] | None = None  # None: no allowlist; (): nothing allowed
    denied: tuple[dict[str, Any], ...] = ()
    allow_all_claude_ai: bool = False
    allow_managed_hooks_only: bool = False
    known_marketplaces: tuple[dict[str, Any], ...] | None = None  # strictKnownMarketplaces
    blocked_marketplaces: tuple[dict[str, Any], ...] = ()


def managed(paths: Paths) -> Policy:
    """The policy in managed-settings.toml alone (what marketplace add and install check)."""
    return parse(managed_settings(paths))


def managed_settings(paths: Paths) -> dict[str, Any]:
    """Managed settings; an unreadable policy file is an error, never silently no policy."""
    if not paths.managed_settings.is_file():
        return {}
    return declarations.read(paths.managed_settings)


GITHUB = re.compile(r"^https://github\.com/(?P<repo>[^/]+/[^/]+?)(?:\.git)?/?$", re.IGNORECASE)


def parse(settings: Mapping[str, Any]) -> Policy:
    """The policy keys of managed settings (rules that are not tables are ignored)."""
    allowed = settings.get("allowedMcpServers")
    known = settings.get("strictKnownMarketplaces", settings.get("allowedMarketplaces"))
    return Policy(
        known_marketplaces=_rules(known),
        blocked_marketplaces=_rules(settings.get("blockedMarketplaces")) or (),
        allowed=_rules(allowed),
        denied=_rules(settings.get("deniedMcpServers")) or (),
        allow_all_claude_ai=settings.get("allowAllClaudeAiMcps") is True,
        allow_managed_hooks_only=settings.get("allowManagedHooksOnly") is True,
    )


def _rules(value: Any) -> tuple[dict[str, Any], ...] | None:
    return tuple(r for r in value if isinstance(r, dict)) if isinstance(value, list) else None


def marketplace_refusal(kind: str, location: str, ref: str | None, policy: Policy) -> str | None:
    """Why managed policy refuses a marketplace source (kind: directory, git or url), or None.
    `blockedMarketplaces` matches any spelling, ref and path; `strictKnownMarketplaces` exactly."""
    for rule in policy.blocked_marketplaces:
        if _source_matches(rule, kind, location, ref, loose=True):
            return f"blocked by blockedMarketplaces {_describe(rule)}"
    if policy.known_marketplaces is None:
        return None
    if any(_source_matches(r, kind, location, ref, loose=False) for r in policy.known_marketplaces):
        return None
    return "not in strictKnownMarketplaces"


def _describe(rule: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in sorted(rule.items()))


def _source_matches(
    rule: dict[str, Any], kind: str, location: str, ref: str | None, *, loose: bool
) -> bool:
    if "hostPattern" in rule:
        host = _hostname(location) if kind != "directory" else None
        return bool(host and _search(rule["hostPattern"], host))
    if "pathPattern" in rule:
        return kind == "directory" and _search(rule["pathPattern"], location)
    same_ref = loose or rule.get("ref") == ref
    form = rule.get("source")
    github = GITHUB.match(location) if kind == "git" else None
    if form == "github" and github:
        return same_ref and _repo_matches(str(rule.get("repo", "")), github["repo"], loose)
    if form == "git" and kind == "git":
        return same_ref and (rule.get("url") == location or (loose and _same_url(rule, location)))
    if form in ("url", "directory", "file"):
        wanted = rule.get("url") if form == "url" else rule.get("path")
        return {"url": "url", "directory": "directory", "file": "directory"}[form] == kind and (
            wanted == location
        )
    return False


def _hostname(location: str) -> str | None:
    try:
        return urlsplit(location).hostname
    except ValueError:  # malformed (an unclosed IPv6 bracket): refused when it is fetched
        return None


def _search(pattern: Any, text: str) -> bool:
    try:
        return re.search(str(pattern), text) is not None
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


def _same_url(rule: dict[str, Any], location: str) -> bool:
    return str(rule.get("url", "")).lower().rstrip("/") == location.lower().rstrip("/")


def refusal(name: str, entry: dict[str, Any], policy: Policy, env: Mapping[str, str]) -> str | None:
    """Why the policy refuses this server, or None when it may run."""
    for rule in policy.denied:
        if _matches(rule, name, entry, env):
            return f"denied by deniedMcpServers {_show(rule)}"
    if policy.allowed is None:
        return None
    remote = isinstance(entry.get("url"), str)
    kind = "serverUrl" if remote else "serverCommand"
    specific = [rule for rule in policy.allowed if kind in rule]
    rules = specific or [rule for rule in policy.allowed if "serverName" in rule]
    if any(_matches(rule, name, entry, env) for rule in rules):
        return None
    return f"not allowed by allowedMcpServers (no matching {kind if specific else 'serverName'})"


def _show(rule: dict[str, Any]) -> str:
    key, value = next(iter(rule.items()))
    return f"{key}={value!r}"


def _matches(
    rule: dict[str, Any], name: str, entry: dict[str, Any], env: Mapping[str, str]
) -> bool:
    if "serverName" in rule:
        return bool(rule["serverName"] == name)
    if "serverCommand" in rule and isinstance(entry.get("command"), str):
        if not isinstance(rule["serverCommand"], list):
            return False
        missing: list[str] = []
        wanted = [expand(str(part), env, missing) for part in rule["serverCommand"]]
        args = entry.get("args")
        given = [str(a) for a in args] if isinstance(args, list) else []
        return wanted == [entry["command"], *given]
    if "serverUrl" in rule and isinstance(entry.get("url"), str):
        return url_matches(expand(str(rule["serverUrl"]), env, []), entry["url"])
    return False


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

"""The managed policy on plugins, by what a plugin is rather than how its id is spelled
(docs/claude-format.md#organization-policy).

A plugin id `name@market` names a marketplace, and a marketplace name is only a local alias:
what it stands for is the source it was added from, compared as a canonical identity
(`plugman.core.identity`). So:

- **Blocked** (`blocked`): a managed `enabledPlugins: {"x@m": false}` blocks `x` from `m`, from
  any other marketplace name registered from the same source as `m`, and `x` installed from a
  source given directly (`x@direct`, which no marketplace vouches for: it cannot be told apart);
  and every plugin of a marketplace whose source `blockedMarketplaces` blocks or a
  `strictKnownMarketplaces` list leaves out, even when it was added before the rule. Install,
  sync (`--frozen` too), import and update refuse such a plugin, and resolution delivers
  nothing of one already installed (`plugman.config.scopes`): the next command that deploys
  takes it out of every agent, and `plugman list` says which rule in which file.
- **Forced** (`forced`): `enabledPlugins: {"x@m": true}` is the organization's consent to `x`
  from the marketplace the managed settings mean by `m`: the source they declare for it
  (`extraKnownMarketplaces`), compared canonically; where they declare none, the one the user
  added (never one registered because a project declared it, `origin = "project"` in the
  registry), or Anthropic's own for a reserved name. A marketplace a project declares, or a
  lock pin, that merely has the same name is not consented; nor is one an older plugman
  registered without recording who asked (`UNKNOWN`: it may have been a project's), until the
  user adds it again (`plugman marketplace add SOURCE --name NAME`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from plugman.config.policy import Verdict, marketplace_verdict
from plugman.config.policy_rules import Policy
from plugman.core import identity
from plugman.core.paths import Paths
from plugman.core.state import read_state

DIRECT = "direct"  # a plugin installed from a source given directly (plugins.planner.DIRECT)
PROJECT = "project"  # a registry entry made because a project declared the marketplace
MANAGED = "managed"  # one made because the managed settings declare it
USER = "user"  # one the user added
UNKNOWN = "unknown"  # an entry an older plugman wrote, without its origin: never forced


class Market(NamedTuple):
    """A registered marketplace's source, and who had it registered (user, project, managed)."""

    kind: str  # directory | git | url
    location: str
    origin: str = USER

    @property
    def identity(self) -> str:
        if self.kind == "git":
            return identity.git(self.location, identity.github_base())
        if self.kind == "url":
            return identity.url(self.location)
        return "file:" + str(Path(self.location).resolve())


def registry_path(paths: Paths) -> Path:
    """The registry of known marketplaces (written by `plugman.plugins.catalog.registry`)."""
    return paths.state_dir / "marketplaces.json"


def markets(paths: Paths) -> dict[str, Market]:
    """Every registered marketplace's source, by name."""
    data = read_state(registry_path(paths), "move it away and add your marketplaces again")
    entries: dict[str, Any] = (data or {}).get("marketplaces", {})
    return {
        name: Market(str(e.get("kind")), str(e.get("location")), str(e.get("origin", UNKNOWN)))
        for name, e in entries.items()
        if isinstance(e, dict)
    }


def speaks(policy: Policy) -> bool:
    """Whether the policy says anything about plugins or marketplaces (else nothing to read)."""
    return bool(
        policy.plugins or policy.blocked_marketplaces or policy.known_marketplaces is not None
    )


def blocked(policy: Policy, plugin_id: str, known: Mapping[str, Market]) -> Verdict | None:
    """Why the managed policy blocks this plugin (the rule and where it is written), or None."""
    name, _, market = plugin_id.partition("@")
    mine = known.get(market)
    unread = next((r for r in policy.blocked_marketplaces if r.unreadable), None)
    if unread is not None:  # fail closed: what it meant to block cannot be told
        return Verdict(False, f"refused by blockedMarketplaces {unread.shown()}", unread.origin)
    for rule in policy.plugins:
        if rule.enabled:
            continue
        blocked_name, _, blocked_market = rule.plugin.partition("@")
        if blocked_name != name:
            continue
        theirs = declared(policy, blocked_market, known)
        same = market in (blocked_market, DIRECT)
        if same or (mine and theirs and mine.identity.lower() == theirs.identity.lower()):
            why = f"blocked by enabledPlugins {rule.plugin!r}: false"
            if market != blocked_market:
                how = "installed directly" if market == DIRECT else f"{market!r}, the same source"
                why += f" (the same plugin: {how})"
            return Verdict(False, why, rule.origin)
    if mine is not None:
        found = marketplace_verdict(mine.kind, mine.location, None, policy)
        if found is not None and not found.allowed:
            return Verdict(False, f"its marketplace {market!r} is {found.why}", found.origin)
    return None


def declared(policy: Policy, market: str, known: Mapping[str, Market]) -> Market | None:
    """The source the managed settings mean by marketplace name `market`: the one they declare
    (`extraKnownMarketplaces`), else the one registered under that name."""
    for name, source, _ in policy.extra_marketplaces:
        if name == market:
            kind, value = source.kind, source.location
            if value is not None:
                location = f"https://github.com/{value}" if kind == "github" else value
                mine = {"github": "git", "file": "directory"}.get(kind, kind)
                return Market(mine, location, MANAGED)
    return known.get(market)


def forced(policy: Policy, plugin_id: str, known: Mapping[str, Market]) -> bool:
    """Whether the managed settings force on this very plugin: its id is forced, and its
    marketplace is the one they mean (see the module's docstring)."""
    rule = policy.plugin_rule(plugin_id)
    if rule is None or not rule.enabled:
        return False
    market = plugin_id.partition("@")[2]
    mine = known.get(market)
    if mine is None:
        return False
    meant = declared(policy, market, known)
    if meant is not None and meant.origin == MANAGED:
        return mine.identity.lower() == meant.identity.lower()
    if mine.origin not in (USER, MANAGED):  # a project's, or unknown: an older registry's
        return False
    # lazy: manifest.names is not loaded by `plugman list` (+2 ms)
    from plugman.manifest.names import RESERVED_MARKETPLACES

    if market.lower() in RESERVED_MARKETPLACES:
        return mine.identity.startswith("github.com/anthropics/")
    return True

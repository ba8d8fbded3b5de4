"""What `plugman sync` does with a plugin the managed policy blocks
(docs/claude-format.md#blocked-plugins): it is skipped, not refused as a whole, so the same
command installs the rest and redeploys every agent (the blocked plugin then leaves them).
What the policy forces on (`forced_specs`) is installed too. A plugin whose marketplace cannot
be read (`unreadable`: its folder moved, its catalog broken) is a finding of its own (exit 1),
its pin kept, and the rest is synced.

A skipped plugin is never fetched or installed; one installed before stays in the record and
is not delivered (`plugman.config.scopes`, `list` says why). `skipped` maps each one's id to
the refusal (the rule and the file it is written in), which is the warning. The committed
plugman.lock keeps its pin: the lock is the team's, and one machine's policy stays out of it.
"""

from __future__ import annotations

from plugman.config import policy, policy_plugins
from plugman.core import progress
from plugman.core.errors import PlugmanError
from plugman.core.paths import Paths
from plugman.core.session import Session
from plugman.core.state import InstallRecord
from plugman.plugins.catalog import marketplaces, registry
from plugman.plugins.catalog.failed import Failed
from plugman.plugins.lifecycle import planner as resolver
from plugman.plugins.supply_chain import lockfile
from plugman.plugins.supply_chain.lockfile import LockEntry


def pin(paths: Paths, locked: LockEntry, markets: dict[str, str], skipped: dict[str, str]) -> bool:
    """Whether the managed policy blocks a locked plugin (then put in `skipped`). `markets`:
    the project's marketplaces the policy kept from being added, name -> why."""
    if of_market(locked.id, locked.marketplace, markets, skipped):
        return True
    refused = registry.plugin_block(paths, locked.id)
    if refused is not None:
        skipped[locked.id] = refused.message
    return refused is not None


def of_market(
    plugin_id: str, market: str | None, markets: dict[str, str], skipped: dict[str, str]
) -> bool:
    """Whether `plugin_id` is of a marketplace the policy kept from being added (skipped)."""
    if market is None or market not in markets:
        return False
    skipped[plugin_id] = f"plugin {plugin_id} is blocked by managed policy ({markets[market]})"
    return True


def warn(skipped: dict[str, str]) -> None:
    for why in sorted(skipped.values()):
        progress.warn(f"{why}: sync skipped it (not installed, not delivered to any agent)")


def keep_pins(work: Session, record: InstallRecord, pins: list[LockEntry]) -> None:
    """Keep in plugman.lock the pins of the skipped plugins that are not installed here (the
    lock sync writes mirrors the record, which has none of them)."""
    missing = [p for p in pins if p.id not in record.plugins]
    if missing:
        rest = [lockfile.pinned(k, v) for k, v in record.plugins.items() if not v.forced]
        work.tx.write(work.paths.project_lock, lockfile.render(rest + missing))


def unreadable(
    paths: Paths,
    plugin_id: str,
    market: str | None,
    broken: dict[str, Failed],
    failed: list[Failed],
) -> bool:
    """Whether `plugin_id`'s marketplace cannot be read (its folder moved, its catalog
    broken): then it is a finding of its own in `failed`, and sync goes on with the rest."""
    if market is None or market == resolver.DIRECT:
        return False
    if market not in broken:
        known = registry.known(paths).get(market)
        if known is None:
            return False  # the planner says what is unknown
        try:
            marketplaces.read(known)
        except PlugmanError as exc:
            broken[market] = Failed.of(market, None, exc)
    if market in broken:
        failure = broken[market]
        failed.append(Failed(plugin_id, "project", failure.problem, failure.hint))
        return True
    return False


def forced_specs(paths: Paths, declared: set[str]) -> list[resolver.PluginRequest]:
    """The plugins managed policy forces on (`enabledPlugins: {"name@market": true}`) that
    the project does not declare: sync installs them too, as Claude Code enables them."""
    rules = policy.managed(paths)
    forced = [r for r in rules.plugins if r.enabled and r.plugin not in declared]
    known = policy_plugins.markets(paths) if forced else {}
    found = []
    for rule in forced:
        name, _, market = rule.plugin.partition("@")
        if market in known and known[market].origin == policy_plugins.UNKNOWN:
            progress.warn(  # an older registry's entry: it may have been a project's
                f"managed policy requires {rule.plugin} ({rule.origin}), but the marketplace "
                f"registered as {market!r} was added by an older plugman that did not record "
                "who asked for it: plugman does not install it; if you added it, add it "
                f"again: plugman marketplace add {known[market].location} --name {market}"
            )
        elif market in known and not policy_plugins.forced(rules, rule.plugin, known):
            progress.warn(  # a same-name marketplace a project declared: not the one meant
                f"managed policy requires {rule.plugin} ({rule.origin}), but the marketplace "
                f"registered as {market!r} ({known[market].location}) is not the one the "
                "managed settings mean: plugman does not install it"
            )
        elif market in known:
            found.append(resolver.PluginRequest(rule.plugin, name, market))
        else:  # Claude Code's own marketplaces, or one nobody declared: not plugman's to fetch
            progress.warn(
                f"managed policy requires {rule.plugin} ({rule.origin}), but no marketplace "
                f"named {market!r} is known: add it (plugman marketplace add SOURCE)"
            )
    return found

"""What `plugman sync` does with a plugin the managed policy blocks
(docs/claude-format.md#blocked-plugins): it is skipped, not refused as a whole, so the same
command installs the rest and redeploys every agent (the blocked plugin then leaves them).

A skipped plugin is never fetched or installed; one installed before stays in the record and
is not delivered (`plugman.config.scopes`, `list` says why). `skipped` maps each one's id to
the refusal (the rule and the file it is written in), which is the warning. The committed
plugman.lock keeps its pin: the lock is the team's, and one machine's policy stays out of it.
"""

from __future__ import annotations

from plugman.core import progress
from plugman.core.paths import Paths
from plugman.core.session import Session
from plugman.core.state import InstallRecord
from plugman.plugins import lockfile, registry
from plugman.plugins.lockfile import LockEntry


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

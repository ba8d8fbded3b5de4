"""`plugman sync`: make the project scope match its plugman.toml and plugman.lock and bring the
linked agents up to date, in one transaction (what syncing does: plugman.plugins.lifecycle.sync)."""

from __future__ import annotations

import contextlib
import os

from plugman.agents import deploy
from plugman.core.errors import PlugmanError
from plugman.core.paths import Paths
from plugman.core.session import session
from plugman.plugins.lifecycle import sync as syncing
from plugman.plugins.lifecycle.updates import DryRunError, Updated
from plugman.runtime.launch import notices


def sync(
    paths: Paths,
    mode: str = "default",
    *,
    dry_run: bool = False,
    allow_hidden: bool = False,
    allow_downgrade: bool = False,
) -> Updated:
    """Make the project scope match its declaration (`default`, `locked`) or its lock (`frozen`);
    with `dry_run`, say what would change (and what each plugin gains) and change nothing;
    `allow_hidden`: this machine's user lets in hidden text (a lock never does). An older
    release than the one installed is refused unless `allow_downgrade` or plugman.lock pins
    exactly it (plugman.plugins.lifecycle.sync._no_rollback)."""
    done = Updated([], [], set(), [])
    pins = syncing.checked_pins(paths, mode)  # every input checked before anything is done
    with contextlib.suppress(DryRunError), session(paths) as work:
        allow = {"allow_hidden": allow_hidden, "allow_downgrade": allow_downgrade}
        syncing.synced(work, mode, pins, done, dry_run=dry_run, **allow)
        deploy.refresh(work, os.environ)
    if done.changes and not dry_run:
        notices.prune(
            paths
        )  # a synced plugin's update notice is done (plugman.runtime.launch.notices)
    return done


def frozen_for_serving(paths: Paths) -> Updated:
    """What a gateway replica does before it serves (`plugman mcp serve --frozen`): refuse when
    plugman.lock and plugman.toml disagree, else install exactly the lock (`sync --frozen`),
    so every replica serves the same config; refuse when any pinned plugin failed to install."""
    pins = syncing.checked_pins(paths, "frozen")
    found = syncing.disagreements(paths, pins)
    if found:
        raise PlugmanError(
            "plugman.lock and plugman.toml disagree: " + "; ".join(found),
            where=str(paths.project_lock),
            hint="run: plugman lock, and commit the new plugman.lock (every replica serves it)",
        )
    done = sync(paths, "frozen")
    if done.failed:
        names = ", ".join(failed.id for failed in done.failed)
        raise PlugmanError(
            f"plugman.lock could not be installed exactly ({names}): not serving",
            where=str(paths.project_lock),
            hint="run: plugman sync --frozen, and see why",
        )
    return done

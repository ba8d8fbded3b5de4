"""`plugman update`: bring installed plugins up to their catalogs and the linked agents up to
date, in one transaction (what updating does: plugman.plugins.lifecycle.updates)."""

from __future__ import annotations

import contextlib
import os

from plugman.agents import deploy
from plugman.core.paths import Paths
from plugman.core.session import session
from plugman.core.state import SCOPES, Scope
from plugman.plugins.lifecycle import updates
from plugman.plugins.lifecycle.updates import DryRunError, Updated
from plugman.runtime.launch import notices


def update(
    paths: Paths,
    names: list[str],
    scope: Scope | None = None,
    *,
    fetch_catalogs: bool = True,
    dry_run: bool = False,
    allow_hidden: bool = False,
    allow_signer_change: bool = False,
    allow_downgrade: bool = False,
) -> Updated:
    """Bring installed plugins (all, or the named ones) up to their catalogs, in `scope` or
    in every scope here, after refreshing the marketplaces they come from; with `dry_run`,
    say what would change and change nothing (the catalogs are still refreshed). New content
    with hidden text is refused unless `allow_hidden` (an earlier allowance was for the old
    content), and then recorded as allowed. New content signed by another signer than the
    recorded one (or no longer signed) is refused unless `allow_signer_change`; a first signer
    is recorded. An older release than the installed one (plugman.plugins.lifecycle.rollback) is
    refused unless `allow_downgrade`."""
    scopes = (scope,) if scope else SCOPES
    if fetch_catalogs:
        updates.refresh(paths, scopes, names)
    done = Updated([], [], set(), [])
    allow = (allow_hidden, allow_signer_change, allow_downgrade)
    with contextlib.suppress(DryRunError), session(paths) as work:
        updates.updated(work, names, scope, scopes, done, dry_run, allow)
        if done.changes:
            deploy.refresh(work, os.environ)
    if done.changes and not dry_run:
        notices.prune(paths)  # an updated plugin's notice is done
    return done

"""`plugman import claude --apply`: do what the import's plan says and bring the linked agents
up to date, in one transaction; `--undo`: take away what the recorded Claude imports added (the
plugins, through `plugman uninstall`'s command, the marketplaces) and give Claude Code back its
own installs (what an import plans, records and does: plugman.plugins.importing.claude)."""

from __future__ import annotations

from pathlib import Path

from plugman.commands import redeploy
from plugman.commands.uninstall import uninstall
from plugman.core.errors import PlugmanError
from plugman.core.paths import Paths
from plugman.core.session import session
from plugman.core.state import InstallRecord
from plugman.plugins.catalog import marketplaces, registry
from plugman.plugins.importing import claude as claude_import
from plugman.plugins.importing import retire as claude_retire
from plugman.plugins.importing.claude import Imported, Plan


def apply(paths: Paths, found: Plan) -> Imported:
    """Do what `found` says (plugman.plugins.importing.claude.plan), in one transaction, recorded
    for `undo`; the linked agents' files follow after the retiring, Claude's own installs no
    longer keeping plugman's out."""
    with session(paths) as work:
        done = claude_import.applied(work, found)
        redeploy.if_linked(work)
    return done


def undo(paths: Paths) -> list[str]:
    """Take away what the recorded imports added and is still there; what was done, in words."""
    body = claude_import.recorded(paths)
    if body is None:
        raise PlugmanError(
            "there is no Claude import to undo", hint="run: plugman import claude --apply"
        )
    done = []
    for entry in reversed(body.plugins):
        project = Path(entry.project) if entry.project else paths.project_dir
        here = paths._replace(project_dir=project)
        if entry.id in InstallRecord.load(here, entry.scope).plugins:
            uninstall(here, [entry.id], entry.scope)
            done.append(f"uninstalled {entry.id} ({entry.scope})")
    for name in reversed(body.marketplaces):
        if name in registry.known(paths):
            try:
                marketplaces.remove(paths, name)
            except PlugmanError as error:  # plugins installed from it since: it stays
                done.append(f"kept marketplace {name}: {error.message}")
            else:
                done.append(f"removed marketplace {name}")
    with session(paths) as work:  # plugman's entries are out: Claude's files as it left them
        for retired in reversed(body.retired):
            done += claude_retire.restore(work.tx, Path(retired.claude_dir), retired)
        work.tx.write(claude_import.record_path(paths), None)
    return done

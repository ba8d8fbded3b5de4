"""`plugman import claude`: a Claude Code user's marketplaces and plugins into plugman
(plugman.plugins.importing.claude); a dry run unless --apply, undone by --undo."""

from __future__ import annotations

import os

from plugman import output
from plugman.cli.argv import JSON, VALUE, Command, Context, Group, Option
from plugman.cli.common import paths_of
from plugman.commands import claude_import as command
from plugman.core.errors import UsageError
from plugman.core.state import SCOPES, as_scope
from plugman.plugins.importing import claude as claude_import

CLAUDE_HELP = (
    "Bring Claude Code's marketplaces and installed plugins (per scope, with their enabled "
    "state) into plugman: a dry run that says what it would do and what it cannot, and why. "
    "With --apply it does it in one transaction and records what it added; --undo takes "
    "exactly that away.\n\n"
    "It reads ~/.claude (or $CLAUDE_CONFIG_DIR): plugins/known_marketplaces.json, "
    "plugins/installed_plugins.json and settings.json, and the project's .claude/settings.json "
    "and .claude/settings.local.json. Plugins another project installed are imported when you "
    "run it in that project.\n\n"
    "Where Claude Code is linked (plugman agents add claude-code), plugman delivers its copy "
    "of each plugin imported to Claude, so the import retires Claude's own install of it in "
    "the same transaction, as `claude plugin uninstall --keep-data` would (a project one is "
    "turned off for this machine in .claude/settings.local.json, as `claude plugin disable "
    "--scope local` would): one copy per name. --keep-claude-installs keeps Claude's instead.\n\n"
    "Exit codes: 0 done (or nothing to do), 1 error, 2 usage error."
)


def claude(
    ctx: Context,
    scope: str = "all",
    apply: bool = False,
    undo: bool = False,
    keep: bool = False,
    as_json: bool = False,
) -> None:
    if apply and undo:
        raise UsageError("--apply and --undo exclude each other", hint="pass one of them")
    if keep and undo:
        raise UsageError(
            "--keep-claude-installs and --undo exclude each other",
            hint="--undo gives back whatever the import retired; pass one of them",
        )
    chosen = as_scope(scope)
    if scope != "all" and chosen is None:
        raise UsageError(
            f"--scope {scope}: import claude takes user, project, local or all",
            hint="run: plugman import claude --scope all",
        )
    paths = paths_of(ctx)
    if undo:
        output.emit(output.import_undone(command.undo(paths), as_json))
        return
    scopes = SCOPES if chosen is None else (chosen,)
    found = claude_import.plan(paths, os.environ, scopes, keep)
    done = command.apply(paths, found) if apply else claude_import.Imported(found, False, [])
    output.emit(output.imported(done, claude_import.undo_commands(paths), as_json))


IMPORT_APP = Group(
    "import",
    "",
    (
        Command(
            "claude",
            "",
            claude,
            (),
            (
                Option(
                    ("--scope", "-s"),
                    "user, project, local or all.",
                    VALUE,
                    default="all",
                    metavar="SCOPE",
                ),
                Option(("--apply",), "Do it (default: a dry run)."),
                Option(("--undo",), "Take away what the last imports added."),
                Option(
                    ("--keep-claude-installs",),
                    "Leave Claude Code's own installs of the plugins "
                    "imported in place; plugman then gives "
                    "Claude Code no copy of those (default: they "
                    "are retired, and --undo gives them back).",
                    dest="keep",
                ),
                JSON,
            ),
            epilog=CLAUDE_HELP,
        ),
    ),
)

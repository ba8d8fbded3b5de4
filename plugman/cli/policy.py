"""`plugman policy explain`: the managed policy's verdict on a plugin, an MCP server or a
marketplace, and the rule and file that decided it (plugman.plugins.catalog.policy_explain)."""

from __future__ import annotations

from plugman import output
from plugman.cli.argv import JSON, Argument, Command, Context, Group
from plugman.cli.common import paths_of
from plugman.cli.running import Exit
from plugman.plugins.catalog import policy_explain

EXPLAIN_HELP = (
    "Say whether managed policy (plugman's managed-settings.toml and Claude Code's "
    "managed-settings.json, its managed-settings.d/ and managed-mcp.json) allows PLUGIN "
    "(name@marketplace), SERVER or MARKETPLACE (a known name or a source), which rule decided "
    "and in which file and key.\n\n"
    "Exit codes: 0 allowed, 1 refused (or an error), 2 usage error."
)


def explain(
    ctx: Context,
    subject: str,
    as_json: bool = False,
) -> None:
    found = policy_explain.explain(paths_of(ctx), subject)
    output.emit(output.policy_explained(found, as_json))
    if not found.allowed:
        raise Exit(1)


APP = Group(
    "policy",
    "",
    (
        Command(
            "explain",
            "",
            explain,
            (Argument("subject", metavar="PLUGIN|SERVER|MARKETPLACE"),),
            (JSON,),
            epilog=EXPLAIN_HELP,
        ),
    ),
)

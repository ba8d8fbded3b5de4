"""`plugman policy explain`: the managed policy's verdict on a plugin, an MCP server or a
marketplace, and the rule and file that decided it (plugman.plugins.catalog.policy_explain)."""

from __future__ import annotations

from plugman import output
from plugman.cli.argv import JSON, MANY, VALUE, Argument, Command, Context, Group, Option
from plugman.cli.common import paths_of
from plugman.cli.running import Exit
from plugman.plugins.catalog import policy_explain

EXPLAIN_HELP = (
    "Say whether managed policy (plugman's managed-settings.toml and Claude Code's "
    "managed-settings.json, its managed-settings.d/ and managed-mcp.json) allows PLUGIN "
    "(name@marketplace), SERVER or MARKETPLACE (a known name or a source), which rule decided "
    "and in which file and key.\n\n"
    "With --tool, --group or --gateway: whether a caller in those groups may use SERVER (its "
    "prompts and resources), or TOOL of it (the server's own name for it), through `plugman "
    "mcp serve` over HTTP, by managed gatewayAccess; SERVER__TOOL, the name the gateway lists, "
    "names both. No --group: a caller with no groups, such as the shared token's. "
    "Example: plugman policy explain notes --tool delete_note --group eng --group ops\n\n"
    "Exit codes: 0 allowed, 1 refused (or an error), 2 usage error."
)


def explain(
    ctx: Context,
    subject: str,
    tool: str | None = None,
    group: list[str] | None = None,
    gateway: bool = False,
    as_json: bool = False,
) -> None:
    if gateway or tool is not None or group:
        found = policy_explain.gateway(paths_of(ctx), subject, tool, tuple(group or ()))
    else:
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
            (
                Option(
                    ("--tool",),
                    "The gateway's question, on this tool of SERVER (its own name).",
                    VALUE,
                ),
                Option(
                    ("--group",),
                    "The gateway's question, for a caller in this group (a groups claim value).",
                    MANY,
                ),
                Option(
                    ("--gateway",),
                    "The gateway's question (gatewayAccess) without --tool or --group: may a "
                    "caller with no groups use SERVER?",
                ),
                JSON,
            ),
            epilog=EXPLAIN_HELP,
        ),
    ),
)

"""`plugman audit`: the offline CI gate (plugman.doctor.audit), rendered by plugman.output."""

from __future__ import annotations

import os

from plugman import output
from plugman.cli.argv import VALUE, Command, Context, Option
from plugman.cli.common import paths_of
from plugman.cli.running import Exit
from plugman.core import state
from plugman.core.errors import UsageError
from plugman.doctor.audit import audit as run


def audit(
    ctx: Context,
    scope: state.Scope | None = None,
    fmt: str = "text",
    as_json: bool = False,
) -> None:
    """What it checks: every plugin the lock and the install records pin is in the store
    and hashes to its pin; the agent files plugman deployed are as it wrote them;
    no plugin was let in with hidden text; every MCP server (a plugin's or your own) launches
    an exact version of what it downloads (npx, pnpm dlx, bunx, uvx, pipx run: a version;
    docker run: a digest). Each finding says what to run to fix it.

    Exit codes: 0 clean, 1 a finding (or a file the audit needs cannot be read), 2 usage
    error (an unknown format or scope, no project)."""
    if fmt not in output.FORMATS:
        raise UsageError(
            f"invalid value for '--format': {fmt!r} is not one of "
            + ", ".join(map(repr, output.FORMATS)),
            hint="see: plugman audit --help",
        )
    result = run(paths_of(ctx), os.environ, scope)
    output.emit(output.audited(result, "json" if as_json else fmt))
    if result.findings:
        raise Exit(1)


AUDIT = Command(
    "audit",
    "",
    audit,
    (),
    (
        Option(
            ("--scope", "-s"),
            "user, project or local (default: all three).",
            VALUE,
            choices=("user", "project", "local"),
        ),
        Option(
            ("--format",),
            "text, json, sarif or github (workflow commands).",
            VALUE,
            default="text",
            metavar="FORMAT",
            dest="fmt",
        ),
        Option(("--json",), "The same as --format json.", dest="as_json"),
    ),
)

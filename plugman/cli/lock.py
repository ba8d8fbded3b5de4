"""`plugman lock`: resolve plugman.toml and write plugman.lock (the group's own command, as it
always was: plugman.cli.plugins.lock), and `plugman lock export`, the lock as an SBOM
(plugman.plugins.supply_chain.sbom)."""

from __future__ import annotations

from pathlib import Path

from plugman import output
from plugman.cli import plugins
from plugman.cli.argv import JSON, VALUE, Command, Context, Group, Option
from plugman.cli.common import paths_of
from plugman.core.errors import UsageError
from plugman.plugins.supply_chain import sbom


def lock(ctx: Context, as_json: bool = False) -> None:
    """With no subcommand: resolve plugman.toml (installing nothing) and write plugman.lock."""
    plugins.lock(ctx, as_json)


# The help's paragraphs.
EXPORT_HELP = (
    "Write plugman.lock as an SBOM: every locked plugin with its source, version, content "
    "hash, signer, and the MCP server packages it launches (npx, uvx, pipx run, docker run) "
    "or remote servers it reaches.\n\n"
    "The same plugman.lock gives the same bytes: no timestamp unless SOURCE_DATE_EPOCH sets "
    "one (SPDX, which requires one, then says 1970-01-01T00:00:00Z), and a serial number made "
    "from the lock. It reads the locked trees from the store: after a clone, run plugman sync "
    "--frozen first. With --json and --output, a JSON summary of what was written.\n\n"
    "Exit codes: 0 written, 1 no plugman.lock or a locked plugin not installed, 2 usage error."
)


def export(
    ctx: Context,
    form: str = "cyclonedx",
    to: Path | None = None,
    as_json: bool = False,
) -> None:
    chosen = form.lower()
    if chosen not in sbom.FORMATS:
        raise UsageError(
            f"--format {form}: lock export writes cyclonedx or spdx",
            hint="run: plugman lock export --format cyclonedx (or --format spdx)",
        )
    paths = paths_of(ctx)
    document = sbom.export(paths, "spdx" if chosen == "spdx" else "cyclonedx")
    if to is None:
        output.emit(document.data.decode())
        return
    output.emit(output.sbom_written(sbom.save(document, to), as_json))


LOCK_APP = Group(
    "lock",
    "",
    (
        Command(
            "export",
            "",
            export,
            (),
            (
                Option(
                    ("--format",),
                    "cyclonedx (CycloneDX 1.7 JSON) or spdx (SPDX 2.3 JSON).",
                    VALUE,
                    default="cyclonedx",
                    metavar="FORMAT",
                    dest="form",
                ),
                Option(
                    ("--output", "-o"),
                    "Write it to FILE (atomically: all or nothing) instead of stdout.",
                    VALUE,
                    type="path",
                    metavar="FILE",
                    dest="to",
                ),
                JSON,
            ),
            epilog=EXPORT_HELP,
        ),
    ),
    runs=lock,
    options=(JSON,),
)

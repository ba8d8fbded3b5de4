"""`plugman config resolve|explain` and `plugman trust list|approve|revoke`."""

from __future__ import annotations

import os

from plugman import output
from plugman.cli.argv import JSON, SHOW_SECRETS, Argument, Command, Context, Group, Option
from plugman.cli.common import paths_of


def explain_command(
    ctx: Context, name: str, as_json: bool = False, show_secrets: bool = False
) -> None:
    """Why server NAME resolves as it does: the winner, what it shadows, what was dropped.

    NAME may be an installed plugin (NAME or NAME@MARKETPLACE): then each of its servers.
    """
    # lazy: config.resolution not loaded by plugman __complete (+221 ms)
    from plugman.config.resolution import resolve

    found = resolve(paths_of(ctx), os.environ).explain(name)
    output.emit(output.explained(found, as_json, show_secrets))


def trust_list(ctx: Context, as_json: bool = False) -> None:
    """What needs approval here: the project's servers and hooks and those of plugins `sync`
    installed, approved or pending, with what each approval covers: this project, the command,
    args or URL, and the files the command runs (with their digests)."""
    # lazy: config.trust not loaded by plugman __complete (+136 ms)
    from plugman.config import trust

    paths = paths_of(ctx)
    output.emit(output.trusted(trust.listing(paths), as_json, trust.stale(paths)))


def trust_approve(
    ctx: Context,
    names: list[str] | None = None,
    everything: bool = False,
    as_json: bool = False,
) -> None:
    """Approve entries as they are now (a later change needs approval again). Without NAME or
    --all, nothing is approved: the pending entries are listed and the exit code is 2."""
    # lazy: commands.trust not loaded by plugman config resolve (+97 ms)
    from plugman.commands import trust

    rows = trust.approve(paths_of(ctx), names or [], everything, os.environ)
    output.emit(output.trust_changed(rows, "approve", as_json))


def trust_revoke(
    ctx: Context,
    names: list[str] | None = None,
    everything: bool = False,
    as_json: bool = False,
) -> None:
    """Withdraw approvals (without NAME or --all: list the approved entries, exit code 2)."""
    # lazy: commands.trust not loaded by plugman config resolve (+97 ms)
    from plugman.commands import trust

    rows = trust.revoke(paths_of(ctx), names or [], everything, os.environ)
    output.emit(output.trust_changed(rows, "revoke", as_json))


# what `trust approve` and `trust revoke` name
TRUSTED = Argument(
    "names",
    "Server names, hook EVENT:MATCHER names, or plugins (all they bring).",
    many=True,
    required=False,
)

CONFIG_APP = Group(
    "config",
    "",
    (
        Command(
            "explain",
            "",
            explain_command,
            (Argument("name"),),
            (
                JSON,
                SHOW_SECRETS,
            ),
        ),
    ),
)

TRUST_APP = Group(
    "trust",
    "",
    (
        Command("list", "", trust_list, (), (JSON,)),
        Command(
            "approve",
            "",
            trust_approve,
            (TRUSTED,),
            (
                Option(("--all",), "Every pending entry.", dest="everything"),
                JSON,
            ),
        ),
        Command(
            "revoke",
            "",
            trust_revoke,
            (TRUSTED,),
            (
                Option(("--all",), "Every approval here.", dest="everything"),
                JSON,
            ),
        ),
    ),
)

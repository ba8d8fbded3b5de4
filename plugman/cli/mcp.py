"""`plugman mcp add|add-json|remove|list|get|login|logout|token|run` and `plugman connectors sync`
(`run`, the server launcher, is a fast command: plugman.cli.fast, plugman.runtime.launch).

Exit codes of `login` and `logout`: 0 done (logout also when there was no login to forget);
1 the login failed (refused, timed out, the server unreachable or not asking for one);
2 usage: an unknown NAME, or a server that is not http or sse.
Exit codes of `token`: 0 done; 1 the secret store cannot be opened; 2 `--rotate` while
PLUGMAN_GATEWAY_TOKEN provides the token, or a value there too short to use.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from plugman import output
from plugman.cli import mcp_vars, runtime, serve
from plugman.cli.common import Json, paths_of
from plugman.core.errors import UsageError
from plugman.core.state import Scope

mcp_app = typer.Typer(no_args_is_help=True)  # its help: plugman.cli.commands
connectors_app = typer.Typer(no_args_is_help=True)  # its help: plugman.cli.commands

COMMAND = "plugman.command"
McpScope = Annotated[Scope, typer.Option("--scope", "-s", help="user, project or local.")]
Secrets = Annotated[bool, typer.Option("--show-secrets", help="Show secret values unmasked.")]


class DashDashCommand(TyperCommand):
    """Everything after the first `--` is the server's command line, never plugman options."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if "--" in args:
            cut = args.index("--")
            ctx.meta[COMMAND] = args[cut + 1 :]
            args = args[:cut]
        return super().parse_args(ctx, args)


@mcp_app.command("add", cls=DashDashCommand)
def add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Server name: letters, digits, '_' and '-'.")],
    target: Annotated[
        list[str] | None, typer.Argument(help="URL (remote), or after -- : CMD [ARGS...].")
    ] = None,
    transport: Annotated[
        str | None, typer.Option("--transport", "-t", help="stdio, http (default), sse or ws.")
    ] = None,
    env: Annotated[
        list[str] | None, typer.Option("--env", "-e", help="KEY=VALUE for a stdio server.")
    ] = None,
    header: Annotated[
        list[str] | None, typer.Option("--header", "-H", help='"Name: value" for a remote one.')
    ] = None,
    scope: McpScope = "local",
    source: Annotated[
        str | None,
        typer.Option("--from", metavar="SERVER_JSON", help="A server.json: path or URL."),
    ] = None,
    package: Annotated[
        int | None, typer.Option("--package", min=1, help="With --from: its Nth package.")
    ] = None,
    remote: Annotated[
        int | None, typer.Option("--remote", min=1, help="With --from: its Nth remote.")
    ] = None,
    prefer: Annotated[
        str | None,
        typer.Option("--prefer", help="With --from: npm, pypi, nuget, oci or remote."),
    ] = None,
    as_json: Json = False,
) -> None:
    """Add a server: `plugman mcp add NAME URL` or `plugman mcp add NAME -- CMD [ARGS...]`."""
    from plugman.commands import servers
    from plugman.config import registry_entry, server_entries

    picks = (package, remote, prefer)
    if source is None:
        if any(p is not None for p in picks):
            raise UsageError("--package, --remote and --prefer choose from a --from server.json")
        entry = server_entries.build_entry(
            target or [], ctx.meta.get(COMMAND), transport, env or [], header or []
        )
        change = servers.add(paths_of(ctx), name, entry, scope, os.environ)
        output.emit(output.mcp_changed("mcp add", change, as_json))
        return
    if target or COMMAND in ctx.meta or transport or env or header:
        raise UsageError(
            "--from takes the whole server from its server.json: no URL, command, -t, -e or -H",
            hint=f"plugman mcp add {name} --from SERVER_JSON [--package N | --remote N]",
        )
    server_entries.check_name(name)
    found = registry_entry.imported(source, name, registry_entry.Pick(*picks))
    change = servers.add(paths_of(ctx), name, found.entry, scope, os.environ)
    output.emit(output.mcp_imported(change, found, as_json))
    kept = [] if as_json else mcp_vars.ask_for(ctx, found.needs)
    if not as_json and (notes := output.mcp_import_warnings(change, found, kept)):
        output.emit(notes, err=True)


@mcp_app.command("add-json")
def add_json(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Server name.")],
    entry: Annotated[str, typer.Argument(help="The server's entry as JSON (no mcpServers).")],
    scope: McpScope = "local",
    as_json: Json = False,
) -> None:
    """Add a server from its JSON entry, checked like any MCP config."""
    from plugman.commands import servers
    from plugman.config import server_entries

    parsed = server_entries.parse_json(name, entry)
    change = servers.add(paths_of(ctx), name, parsed, scope, os.environ)
    for warning in change.warnings:
        output.emit(f"warning: {warning}", err=True)
    output.emit(output.mcp_changed("mcp add-json", change, as_json))


@mcp_app.command("remove")
def remove(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Server name.")],
    scope: Annotated[
        Scope | None, typer.Option("--scope", "-s", help="user, project or local (default: find).")
    ] = None,
    as_json: Json = False,
) -> None:
    """Remove a server from the scope that has it."""
    from plugman.commands import servers

    change = servers.remove(paths_of(ctx), name, scope, os.environ)
    output.emit(output.mcp_changed("mcp remove", change, as_json))


@mcp_app.command("list")
def listing(ctx: typer.Context, as_json: Json = False, show_secrets: Secrets = False) -> None:
    """Every scope's servers and their status (active, shadowed, or why dropped), plugins'
    included; exit 1 when a file of yours they are read from is broken (its problems are shown:
    where, and what it leaves out)."""
    from plugman.config import server_list

    found = server_list.listing(paths_of(ctx), os.environ)
    errors = found.broken
    if as_json:
        rows = [output.status_row(row, show_secrets) for row in found.rows]
        problems = [output.diagnostic_dict(d) for d in found.diagnostics]
        output.emit(output.envelope("mcp list", servers=rows, diagnostics=problems))
    else:
        output.emit(output.mcp_listed(found.rows, show_secrets, broken=errors))
        if found.diagnostics:
            output.emit(output.problems(found.diagnostics), err=True)
    if errors:
        raise typer.Exit(1)


@mcp_app.command("get")
def get(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Server name.")],
    as_json: Json = False,
    show_secrets: Secrets = False,
) -> None:
    """Every scope's entry called NAME, and what resolution made of it."""
    from plugman.config import server_list

    rows = server_list.get(paths_of(ctx), os.environ, name)
    entries = [output.status_row(row, show_secrets) for row in rows]
    output.emit(
        output.envelope("mcp get", name=name, entries=entries)
        if as_json
        else output.mcp_got(rows, show_secrets)
    )


@mcp_app.command("login")
def login(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="A resolved http or sse server (see mcp list).")],
    no_browser: Annotated[
        bool,
        typer.Option("--no-browser", help="Print the authorization URL on stderr; open nothing."),
    ] = False,
    timeout: Annotated[
        float, typer.Option("--timeout", min=1.0, help="Seconds to wait for the login.")
    ] = 300.0,
    as_json: Json = False,
) -> None:
    """Log in to a remote server with OAuth; its tokens go to the secret store."""
    from plugman.runtime import oauth

    result = oauth.login(
        paths_of(ctx), name, browser=not no_browser, timeout=timeout, announce=output.announced
    )
    output.emit(output.logged_in(result, as_json))


@mcp_app.command("logout")
def logout(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="A resolved http or sse server.")],
    as_json: Json = False,
) -> None:
    """Forget a remote server's stored OAuth tokens."""
    from plugman.runtime import oauth

    output.emit(output.logged_out(oauth.logout(paths_of(ctx), name), as_json))


@mcp_app.command("token")
def token(
    ctx: typer.Context,
    rotate: Annotated[
        bool, typer.Option("--rotate", help="Replace the token (restart running gateways).")
    ] = False,
    show: Annotated[
        bool, typer.Option("--show", help="Print the token itself on stdout, and nothing else.")
    ] = False,
    as_json: Json = False,
) -> None:
    """The bearer token HTTP clients send to `mcp serve --auth token` (made when missing)."""
    from plugman.runtime import gateway_token

    found = gateway_token.obtain(paths_of(ctx), os.environ, rotate=rotate)
    text, note = output.gateway_token(found, show=show, as_json=as_json)
    output.emit(text)
    if note:
        output.emit(note, err=True)


@connectors_app.command("sync")
def sync(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="A JSON file or an https:// URL.")],
    as_json: Json = False,
) -> None:
    """Replace the cached claude.ai connectors with the list in SOURCE."""
    from plugman.config import connectors

    cache = connectors.sync(paths_of(ctx), source)
    output.emit(
        output.envelope("connectors sync", **cache) if as_json else output.connectors_synced(cache)
    )


mcp_app.add_typer(mcp_vars.vars_app, name="vars")
mcp_app.command("probe")(runtime.probe_command)
mcp_app.command("tools")(runtime.tools_command)
mcp_app.command("serve")(serve.serve)

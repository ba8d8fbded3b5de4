"""`plugman mcp add|add-json|remove|list|get|login|logout|token|run` and `plugman connectors sync`
(`run`, the server launcher, is a fast command: plugman.cli.fast, plugman.runtime.launch.server).

Exit codes of `login` and `logout`: 0 done (logout also when there was no login to forget);
1 the login failed (refused, timed out, the server unreachable or not asking for one);
2 usage: an unknown NAME, or a server that is not http or sse.
Exit codes of `token`: 0 done; 1 the secret store cannot be opened; 2 `--rotate` while
PLUGMAN_GATEWAY_TOKEN provides the token, or a value there too short to use.
"""

from __future__ import annotations

import os

from plugman import output
from plugman.cli import mcp_vars, runtime, serve
from plugman.cli.argv import (
    JSON,
    MANY,
    SHOW_SECRETS,
    VALUE,
    Argument,
    Command,
    Context,
    Group,
    Option,
)
from plugman.cli.common import paths_of
from plugman.cli.running import Exit
from plugman.core.errors import UsageError
from plugman.core.state import Scope


def add(
    ctx: Context,
    name: str,
    target: list[str] | None = None,
    transport: str | None = None,
    env: list[str] | None = None,
    header: list[str] | None = None,
    scope: Scope = "local",
    source: str | None = None,
    package: int | None = None,
    remote: int | None = None,
    prefer: str | None = None,
    as_json: bool = False,
) -> None:
    """Add a server: `plugman mcp add NAME URL` or `plugman mcp add NAME -- CMD [ARGS...]`."""
    # lazy: commands.servers and the rest not loaded by plugman mcp run (+121 ms)
    from plugman.commands import servers
    from plugman.config.servers import entries as server_entries
    from plugman.config.servers import registry_entry

    picks = (package, remote, prefer)
    if source is None:
        if any(p is not None for p in picks):
            raise UsageError("--package, --remote and --prefer choose from a --from server.json")
        entry = server_entries.build_entry(
            target or [], ctx.rest, transport, env or [], header or []
        )
        change = servers.add(paths_of(ctx), name, entry, scope, os.environ)
        output.emit(output.mcp_changed("mcp add", change, as_json))
        return
    if target or ctx.rest is not None or transport or env or header:
        raise UsageError(
            "--from takes the whole server from its server.json: no URL, command, -t, -e or -H",
            hint=f"plugman mcp add {name} --from SERVER_JSON [--package N | --remote N]",
        )
    server_entries.check_name(name)
    found = registry_entry.imported(source, name, registry_entry.Pick(*picks))
    given: dict[str, str] = {}

    def ask() -> dict[str, str]:  # once the entry is checked; the values kept with it
        given.update(mcp_vars.ask_for(ctx, found.needs))
        return given

    paths = paths_of(ctx)
    change = servers.add(paths, name, found.entry, scope, os.environ, None if as_json else ask)
    output.emit(output.mcp_imported(change, found, as_json))
    if not as_json and (notes := output.mcp_import_warnings(change, found, list(given))):
        output.emit(notes, err=True)


def add_json(
    ctx: Context,
    name: str,
    entry: str,
    scope: Scope = "local",
    as_json: bool = False,
) -> None:
    """Add a server from its JSON entry, checked like any MCP config."""
    # lazy: commands.servers, config.servers.entries not loaded by plugman mcp run (+115 ms)
    from plugman.commands import servers
    from plugman.config.servers import entries as server_entries

    parsed = server_entries.parse_json(name, entry)
    change = servers.add(paths_of(ctx), name, parsed, scope, os.environ)
    for warning in change.warnings:
        output.emit(f"warning: {warning}", err=True)
    output.emit(output.mcp_changed("mcp add-json", change, as_json))


def remove(
    ctx: Context,
    name: str,
    scope: Scope | None = None,
    as_json: bool = False,
) -> None:
    """Remove a server from the scope that has it."""
    # lazy: commands.servers not loaded by plugman mcp run (+114 ms)
    from plugman.commands import servers

    change = servers.remove(paths_of(ctx), name, scope, os.environ)
    output.emit(output.mcp_changed("mcp remove", change, as_json))


def listing(ctx: Context, as_json: bool = False, show_secrets: bool = False) -> None:
    """Every scope's servers and their status (active, shadowed, or why dropped), plugins'
    included; exit 1 when a file of yours they are read from is broken (its problems are shown:
    where, and what it leaves out)."""
    # lazy: config.servers.listing not loaded by plugman mcp run (+7 ms)
    from plugman.config.servers import listing as server_list

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
        raise Exit(1)


def get(
    ctx: Context,
    name: str,
    as_json: bool = False,
    show_secrets: bool = False,
) -> None:
    """Every scope's entry called NAME, and what resolution made of it."""
    # lazy: config.servers.listing not loaded by plugman mcp run (+7 ms)
    from plugman.config.servers import listing as server_list

    rows = server_list.get(paths_of(ctx), os.environ, name)
    entries = [output.status_row(row, show_secrets) for row in rows]
    output.emit(
        output.envelope("mcp get", name=name, entries=entries)
        if as_json
        else output.mcp_got(rows, show_secrets)
    )


def login(
    ctx: Context,
    name: str,
    no_browser: bool = False,
    timeout: float = 300.0,
    as_json: bool = False,
) -> None:
    """Log in to a remote server with OAuth; its tokens go to the secret store."""
    # lazy: runtime.oauth.login not loaded by plugman mcp run (+200 ms)
    from plugman.runtime.oauth import login as oauth

    result = oauth.login(
        paths_of(ctx), name, browser=not no_browser, timeout=timeout, announce=output.announced
    )
    output.emit(output.logged_in(result, as_json))


def logout(
    ctx: Context,
    name: str,
    as_json: bool = False,
) -> None:
    """Forget a remote server's stored OAuth tokens."""
    # lazy: runtime.oauth.login not loaded by plugman mcp run (+200 ms)
    from plugman.runtime.oauth import login as oauth

    output.emit(output.logged_out(oauth.logout(paths_of(ctx), name), as_json))


def token(
    ctx: Context,
    rotate: bool = False,
    show: bool = False,
    as_json: bool = False,
) -> None:
    """The bearer token HTTP clients send to `mcp serve --auth token` (made when missing)."""
    # lazy: runtime.gateway.token not loaded by plugman mcp run (+15 ms)
    from plugman.runtime.gateway import token as gateway_token

    found = gateway_token.obtain(paths_of(ctx), os.environ, rotate=rotate)
    text, note = output.gateway_token(found, show=show, as_json=as_json)
    output.emit(text)
    if note:
        output.emit(note, err=True)


def sync(
    ctx: Context,
    source: str,
    as_json: bool = False,
) -> None:
    """Replace the cached claude.ai connectors with the list in SOURCE."""
    # lazy: config.connectors not loaded by plugman mcp run (+151 ms)
    from plugman.config import connectors

    cache = connectors.sync(paths_of(ctx), source)
    output.emit(
        output.envelope("connectors sync", **cache) if as_json else output.connectors_synced(cache)
    )


# how long `mcp probe` and `mcp tools` give each server
TIMEOUT = Option(
    ("--timeout",),
    "Seconds each server may take to answer.",
    VALUE,
    default=30.0,
    type="float",
    low=0.1,
)

MCP_APP = Group(
    "mcp",
    "",
    (
        Command(
            "add",
            "",
            add,
            (
                Argument("name", "Server name: letters, digits, '_' and '-'."),
                Argument(
                    "target",
                    "URL (remote), or after -- : CMD [ARGS...].",
                    many=True,
                    required=False,
                ),
            ),
            (
                Option(("--transport", "-t"), "stdio, http (default), sse or ws.", VALUE),
                Option(("--env", "-e"), "KEY=VALUE for a stdio server.", MANY),
                Option(("--header", "-H"), '"Name: value" for a remote one.', MANY),
                Option(
                    ("--scope", "-s"),
                    "user, project or local.",
                    VALUE,
                    choices=("user", "project", "local"),
                    default="local",
                ),
                Option(
                    ("--from",),
                    "A server.json: path or URL.",
                    VALUE,
                    metavar="SERVER_JSON",
                    dest="source",
                ),
                Option(("--package",), "With --from: its Nth package.", VALUE, type="int", low=1),
                Option(("--remote",), "With --from: its Nth remote.", VALUE, type="int", low=1),
                Option(("--prefer",), "With --from: npm, pypi, nuget, oci or remote.", VALUE),
                JSON,
            ),
            rest=True,
        ),
        Command(
            "add-json",
            "",
            add_json,
            (
                Argument("name", "Server name."),
                Argument("entry", "The server's entry as JSON (no mcpServers)."),
            ),
            (
                Option(
                    ("--scope", "-s"),
                    "user, project or local.",
                    VALUE,
                    choices=("user", "project", "local"),
                    default="local",
                ),
                JSON,
            ),
        ),
        Command(
            "remove",
            "",
            remove,
            (Argument("name", "Server name."),),
            (
                Option(
                    ("--scope", "-s"),
                    "user, project or local (default: find).",
                    VALUE,
                    choices=("user", "project", "local"),
                ),
                JSON,
            ),
        ),
        Command(
            "list",
            "",
            listing,
            (),
            (
                JSON,
                SHOW_SECRETS,
            ),
        ),
        Command(
            "get",
            "",
            get,
            (Argument("name", "Server name."),),
            (
                JSON,
                SHOW_SECRETS,
            ),
        ),
        Command(
            "login",
            "",
            login,
            (Argument("name", "A resolved http or sse server (see mcp list)."),),
            (
                Option(("--no-browser",), "Print the authorization URL on stderr; open nothing."),
                Option(
                    ("--timeout",),
                    "Seconds to wait for the login.",
                    VALUE,
                    default=300.0,
                    type="float",
                    low=1.0,
                ),
                JSON,
            ),
        ),
        Command(
            "logout", "", logout, (Argument("name", "A resolved http or sse server."),), (JSON,)
        ),
        Command(
            "token",
            "",
            token,
            (),
            (
                Option(("--rotate",), "Replace the token (restart running gateways)."),
                Option(("--show",), "Print the token itself on stdout, and nothing else."),
                JSON,
            ),
        ),
        Command(
            "probe",
            "",
            runtime.probe_command,
            (Argument("names", "Servers to probe (default: all).", many=True, required=False),),
            (
                JSON,
                TIMEOUT,
                Option(
                    ("--local-batch",),
                    "stdio servers started at once.",
                    VALUE,
                    default=10,
                    type="int",
                    low=1,
                ),
                Option(
                    ("--remote-batch",),
                    "Remote servers connected at once.",
                    VALUE,
                    default=20,
                    type="int",
                    low=1,
                ),
            ),
        ),
        Command(
            "tools",
            "",
            runtime.tools_command,
            (),
            (
                JSON,
                Option(("--builtin",), "A built-in tool name that wins over MCP tools.", MANY),
                TIMEOUT,
            ),
        ),
        Command(
            "serve",
            "",
            serve.serve,
            (),
            serve.OPTIONS,
        ),
        Group(
            "vars",
            "Values for the ${VAR} references in MCP server entries (kept in the secret store).",
            (
                Command("list", "", mcp_vars.listing, (), (JSON,)),
                Command(
                    "set",
                    "",
                    mcp_vars.set_value,
                    (Argument("name", "The variable, as in ${NAME}."),),
                    (JSON,),
                ),
                Command(
                    "unset",
                    "",
                    mcp_vars.unset,
                    (Argument("name", "The variable, as in ${NAME}."),),
                    (JSON,),
                ),
            ),
        ),
    ),
)

CONNECTORS_APP = Group(
    "connectors",
    "",
    (Command("sync", "", sync, (Argument("source", "A JSON file or an https:// URL."),), (JSON,)),),
)

"""`plugman mcp serve`: every resolved MCP server behind one MCP server (stdio or HTTP).

Mounted by the application as `mcp_app.command("serve")(serve)`. stdout is the protocol
channel over stdio, so nothing else is ever printed there; with `--transport http` one line,
`listening on http://HOST:PORT/mcp`, goes to stderr once connections are accepted (with
`--auth token`, a second one gives the token's fingerprint, never the token).

Exit codes: 0 stopped by the client or a signal; 1 a failure (the port is in use, the secret
store cannot be opened); 2 usage, including `--transport http` on an address that is not
loopback without `--auth token` (refused before anything starts).
"""

from __future__ import annotations

from typing import Annotated

import typer

from plugman import output
from plugman.cli.common import paths_of


def serve(
    ctx: typer.Context,
    transport: Annotated[
        str, typer.Option("--transport", "-t", help="stdio (default) or http (streamable HTTP).")
    ] = "stdio",
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="HTTP port (0: any free port).")
    ] = 8700,
    host: Annotated[str, typer.Option("--host", help="HTTP address to listen on.")] = "127.0.0.1",
    call_timeout: Annotated[
        float, typer.Option("--call-timeout", min=0.1, help="Seconds a tool call may take.")
    ] = 60.0,
    deny_destructive: Annotated[
        bool,
        typer.Option("--deny-destructive", help="Refuse every tool marked destructiveHint."),
    ] = False,
    auth: Annotated[
        str,
        typer.Option(
            "--auth",
            help="HTTP: none, or token (clients send the bearer token `plugman mcp token` "
            "keeps). Required on any address but loopback.",
        ),
    ] = "none",
    first_list_wait: Annotated[
        float | None,
        typer.Option(
            "--first-list-wait",
            min=0,
            help="Seconds from the start during which a list waits for servers still starting "
            "that the gateway remembers nothing of (default 5, or "
            "PLUGMAN_GATEWAY_FIRST_LIST_WAIT; 0: never).",
        ),
    ] = None,
    stateless: Annotated[
        bool,
        typer.Option(
            "--stateless",
            help="HTTP: no sessions, so any of several gateways behind a load balancer can "
            "answer any request (2025-era clients then get no list_changed notifications).",
        ),
    ] = False,
) -> None:
    """Serve the tools, resources and prompts of every resolved MCP server as one server.

    Tools are listed as <server>__<tool> (the agent adds its own mcp__<its name>__); PreToolUse
    and PostToolUse hooks see mcp__<server>__<tool> and run around calls. Servers still
    starting are listed with what they offered last time. Logs: <state>/logs/gateway.log.
    """
    from plugman.runtime.gateway_run import Options, serve_paths

    options = Options(
        transport,
        host,
        port,
        call_timeout,
        deny_destructive,
        auth=auth,
        stateless=stateless,
        first_list_wait=first_list_wait,
    )
    serve_paths(paths_of(ctx), options, announce=output.announced)

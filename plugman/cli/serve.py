"""`plugman mcp serve`: every resolved MCP server behind one MCP server (stdio or HTTP).

Mounted by the application as `mcp_app.command("serve")(serve)`. stdout is the protocol
channel over stdio, so nothing else is ever printed there; with `--transport http` one line,
`listening on http://HOST:PORT/mcp`, goes to stderr once connections are accepted.
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
) -> None:
    """Serve the tools, resources and prompts of every resolved MCP server as one server.

    Tools are named mcp__<server>__<tool>; PreToolUse and PostToolUse hooks run around calls.
    Logs: <state>/logs/gateway.log.
    """
    from plugman.runtime.gateway_run import Options, serve_paths

    options = Options(transport, host, port, call_timeout, deny_destructive)
    serve_paths(paths_of(ctx), options, announce=output.announced)

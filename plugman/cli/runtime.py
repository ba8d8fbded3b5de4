"""`plugman mcp probe` and `plugman mcp tools`: the resolved MCP servers, connected for real.

Exit codes (like pip and npm: 1 when what was asked for did not work):
- probe: 1 when a probed server failed or needs auth, or a server asked for by NAME is pending
  approval or disabled; 0 otherwise (servers held back when none were named are only listed).
- tools: 0 whenever the pool could be assembled; servers that failed are listed as not in it.

Mounted by the application as `mcp_app.command("probe")(probe_command)` and
`mcp_app.command("tools")(tools_command)`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from plugman import output
from plugman.cli.common import Json, paths_of

Timeout = Annotated[
    float,
    typer.Option("--timeout", min=0.1, help="Seconds each server may take to answer."),
]


def probe_command(
    ctx: typer.Context,
    names: Annotated[
        list[str] | None, typer.Argument(help="Servers to probe (default: all).")
    ] = None,
    as_json: Json = False,
    timeout: Timeout = 30.0,
    local_batch: Annotated[
        int, typer.Option("--local-batch", min=1, help="stdio servers started at once.")
    ] = 10,
    remote_batch: Annotated[
        int, typer.Option("--remote-batch", min=1, help="Remote servers connected at once.")
    ] = 20,
) -> None:
    """Connect to each server, list its tools, resources and prompts, and disconnect."""
    from plugman.runtime import probe

    wanted = names or []
    results = probe.probe_paths(
        paths_of(ctx),
        wanted,
        timeout=timeout,
        local_batch=local_batch,
        remote_batch=remote_batch,
    )
    output.emit(output.probed(results, as_json))
    if probe.failed(results, wanted):
        raise typer.Exit(1)


def tools_command(
    ctx: typer.Context,
    as_json: Json = False,
    builtin: Annotated[
        list[str] | None,
        typer.Option("--builtin", help="A built-in tool name that wins over MCP tools."),
    ] = None,
    timeout: Timeout = 30.0,
) -> None:
    """The namespaced tool pool an agent would see, its collisions and its token cost."""
    from plugman.runtime import pool, probe

    results = probe.probe_paths(paths_of(ctx), timeout=timeout)
    assembled = pool.assemble(results, builtin or [])
    output.emit(output.tool_pool(assembled, results, as_json))

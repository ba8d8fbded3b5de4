"""`plugman mcp probe` and `plugman mcp tools`: the resolved MCP servers, connected for real.

Exit codes (like pip and npm: 1 when what was asked for did not work):
- probe: 1 when a probed server failed or needs auth, or a server asked for by NAME is pending
  approval or disabled; 0 otherwise (servers held back when none were named are only listed).
- tools: 0 whenever the pool could be assembled; servers that failed are listed as not in it.

Mounted by the application as `mcp_app.command("probe")(probe_command)` and
`mcp_app.command("tools")(tools_command)`.
"""

from __future__ import annotations

from plugman import output
from plugman.cli.argv import Context
from plugman.cli.common import paths_of
from plugman.cli.running import Exit


def probe_command(
    ctx: Context,
    names: list[str] | None = None,
    as_json: bool = False,
    timeout: float = 30.0,
    local_batch: int = 10,
    remote_batch: int = 20,
) -> None:
    """Connect to each server, list its tools, resources and prompts, and disconnect."""
    # lazy: runtime.gateway.probe not loaded by plugman mcp run (+133 ms)
    from plugman.runtime.gateway import probe

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
        raise Exit(1)


def tools_command(
    ctx: Context,
    as_json: bool = False,
    builtin: list[str] | None = None,
    timeout: float = 30.0,
) -> None:
    """The namespaced tool pool an agent would see, its collisions and its token cost."""
    # lazy: runtime.gateway.pool not loaded by plugman mcp run (+97 ms)
    from plugman.runtime.gateway import pool, probe

    results = probe.probe_paths(paths_of(ctx), timeout=timeout)
    assembled = pool.assemble(results, builtin or [])
    output.emit(output.tool_pool(assembled, results, as_json))

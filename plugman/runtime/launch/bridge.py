"""`plugman mcp run NAME` for a remote server: one stdio MCP server in front of it.

An agent that cannot hold a remote server's secret (a sensitive plugin option or an `mcp vars`
value in a header) or its OAuth login starts `plugman mcp run NAME` instead
(`plugman.runtime.launch.server`), which connects to the server as plugman's probe and gateway do
(`connect.open_client`: its headers expanded with the secrets from the store, `headersHelper`,
the stored login of `plugman mcp login` through `oauth_provider.authorizer`) and serves it
on stdin/stdout as it is: the same tool, resource and prompt names, every request forwarded
and answered with the server's own result. The connection is made before the first answer, so
a server that refuses (a wrong key, a login needed) ends the bridge with the reason on stderr
and exit 1, as a stdio server that cannot start would.

Unlike the gateway, no name is prefixed, no hook runs and nothing is cached: one backend, as
thin as the SDK allows. The MCP SDK (~1 s to import) is imported here only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio

CONNECT_TIMEOUT = 30.0
CALL_TIMEOUT = 600.0  # a tool call's own limit is the agent's


def serve(name: str, entry: Mapping[str, Any], *, env: Mapping[str, str], cwd: Path,
          auth: Any, shared: bool) -> tuple[str, str] | None:  # fmt: skip
    """Serve remote server `name` over this process's stdio until the agent closes stdin; on a
    failure, (state, reason) as plugman.runtime.transport.failure says them (`needs-auth`,
    `failed`)."""
    # lazy: runtime.connect takes ~10 ms to import, only this path needs it
    from plugman.runtime.transport.connect import Trace
    from plugman.runtime.transport.failure import failure

    trace = Trace()
    try:
        anyio.run(_serve, name, entry, env, cwd, auth, shared, trace)
    except Exception as exc:  # the SDK's exception groups: one reason, in words
        return failure(exc, trace, CONNECT_TIMEOUT)
    return None


async def _serve(
    name: str,
    entry: Mapping[str, Any],
    env: Mapping[str, str],
    cwd: Path,
    auth: Any,
    shared: bool,
    trace: Any,
) -> None:
    # lazy: mcp takes ~640 ms to import, only this path needs it
    from mcp.server.lowlevel.server import NotificationOptions, Server
    from mcp.server.stdio import stdio_server

    # lazy: runtime.connect takes ~10 ms to import, only this path needs it
    from plugman.runtime.transport.connect import open_client

    with Path(os.devnull).open("w") as errlog:
        async with open_client(
            name, entry, errlog=errlog, timeout=CONNECT_TIMEOUT, trace=trace, env=env, cwd=cwd,
            auth=auth, shared=shared,
        ) as client:  # fmt: skip
            server: Server[Any] = Server(
                name,
                instructions=client.instructions,
                on_list_tools=lambda ctx, p: client.list_tools(cursor=_cursor(p)),
                on_call_tool=lambda ctx, p: client.call_tool(
                    p.name, dict(p.arguments or {}), read_timeout_seconds=CALL_TIMEOUT
                ),
                on_list_resources=lambda ctx, p: client.list_resources(cursor=_cursor(p)),
                on_list_resource_templates=lambda ctx, p: client.list_resource_templates(
                    cursor=_cursor(p)
                ),
                on_read_resource=lambda ctx, p: client.read_resource(str(p.uri)),
                on_list_prompts=lambda ctx, p: client.list_prompts(cursor=_cursor(p)),
                on_get_prompt=lambda ctx, p: client.get_prompt(p.name, dict(p.arguments or {})),
            )
            options = server.create_initialization_options(NotificationOptions())
            async with stdio_server() as (read, write):
                await server.run(read, write, options)


def _cursor(params: Any) -> str | None:
    cursor = getattr(params, "cursor", None)
    return cursor if isinstance(cursor, str) else None

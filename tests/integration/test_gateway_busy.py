"""A busy backend is not a dead one: a ping that waits behind calls the server is answering does
not end its session (plugman.runtime.gateway.backends). Found by bench/gateway_fleet.py: with
1,000 clients queued on one stdio backend, the ping timed out behind the queue and every queued
call failed with "the connection was lost during the call"."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio

SERVER = """
import time
from mcp.server.mcpserver import MCPServer

server = MCPServer("busy")

@server.tool()
async def work(n: int) -> str:
    time.sleep(0.25)  # holds the server's only loop: a ping waits behind the calls queued
    return f"done {n}"

server.run()
"""


def test_a_ping_late_behind_answered_calls_keeps_the_session(tmp_path: Path) -> None:
    from plugman.runtime.gateway.backends import Backend
    from plugman.runtime.gateway.forward import send
    from plugman.runtime.gateway.health import Health

    script = tmp_path / "busy.py"
    script.write_text(SERVER, encoding="utf-8")

    async def ignore(backend: Backend, kinds: frozenset[str]) -> None:
        return None

    with (tmp_path / "busy.log").open("w") as errlog:
        backend = Backend(
            "busy",
            {"command": sys.executable, "args": [str(script)]},
            errlog=errlog,
            env=dict(os.environ),
            cwd=tmp_path,
            # 12 calls of 0.25 s queue 3 s of work: the ping waits far past its 0.5 s
            health=Health(ping_every=0.05, ping_timeout=0.5, connect_timeout=30),
            on_change=ignore,
        )
        results: list[str] = []

        async def one(n: int) -> None:
            async def work(client: Any) -> Any:
                return await client.call_tool("work", {"n": n})

            result = await send(backend, work, 30)
            results.append(result.content[0].text)

        async def main() -> None:
            async with anyio.create_task_group() as group:
                group.start_soon(backend.run)
                await backend.first_round.wait()
                assert backend.state == "up", backend.reason
                async with anyio.create_task_group() as calls:
                    for n in range(12):
                        calls.start_soon(one, n)
                assert backend.state == "up", backend.reason
                group.cancel_scope.cancel()

        anyio.run(main)
    assert sorted(results) == sorted(f"done {n}" for n in range(12))

"""A stdio MCP server started before the SDK is loaded, and the SDK's session streams around it.

`mcp` takes ~0.85 CPU-s to import, and a server's start-up mostly waits (`npx`/`uvx` fetching,
a runtime booting). The SDK's `stdio_client` can only spawn a server once the SDK is imported,
so the two would add up; here the server is spawned first, the SDK loads in a worker thread
(`load_sdk`: the event loop keeps starting the other servers meanwhile), and `streams` bridges
the running process's pipes to the session's memory streams as `stdio_client` does after its
spawn, with the SDK's own parsing and shutdown (close stdin, 2 s, SIGTERM the process group,
2 s, SIGKILL).

The spawn is the SDK's on POSIX: the command in its own session (so the shutdown reaches its
whole process group), stderr to `errlog`, the SDK's default variables (HOME, LOGNAME, PATH,
SHELL, TERM, USER) under the given environment. On Windows the SDK spawns it (a Job Object),
after it is loaded.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.lowlevel
import anyio.to_thread

SDK = "mcp"
DEFAULT_INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")  # mcp.client.stdio's


class _Loaded:
    sdk = False


async def load_sdk() -> None:
    """Import the SDK in a worker thread, so the event loop keeps running while it loads.
    Concurrent callers each wait in a thread of their own on the import's module lock."""
    if not _Loaded.sdk:
        await anyio.to_thread.run_sync(_import_sdk, abandon_on_cancel=True)
        _Loaded.sdk = True


def _import_sdk() -> None:
    """The import with the cyclic garbage collector paused: its thousands of pydantic objects
    would trigger a dozen collections that find nothing (~15 % of the import's CPU); frozen
    after, as modules live as long as the process."""
    paused = gc.isenabled()
    gc.disable()
    try:
        importlib.import_module(SDK)
    finally:
        if paused:
            gc.freeze()
            gc.enable()


def default_env() -> dict[str, str]:
    """The variables the SDK passes a stdio server whatever its `env` (functions left out)."""
    found = {key: os.environ.get(key) for key in DEFAULT_INHERITED}
    return {k: v for k, v in found.items() if v is not None and not v.startswith("()")}


async def spawn(
    command: str,
    args: Sequence[str],
    env: Mapping[str, str],
    errlog: TextIO,
    cwd: str | Path | None,
) -> Any:
    """The server's process (an `anyio.abc.Process`), started as the SDK starts it."""
    full = default_env() | dict(env)
    if sys.platform == "win32":  # pragma: no cover - the SDK's Job Object
        await load_sdk()
        # lazy: loaded by load_sdk above
        from mcp.client.stdio import _create_platform_compatible_process, _get_executable_command

        resolved = await _get_executable_command(command)
        return await _create_platform_compatible_process(resolved, list(args), full, errlog, cwd)
    return await anyio.open_process(
        [command, *args], env=full, stderr=errlog, cwd=cwd, start_new_session=True
    )


async def discard(process: Any) -> None:
    """Stop a server whose session never began (a failed or cancelled SDK load), as the SDK
    stops one; shielded, so a cancelled caller cannot leak it."""
    with anyio.CancelScope(shield=True):
        try:
            await load_sdk()
            # lazy: loaded by load_sdk above
            from mcp.client.stdio import _stop_server_process
        except BaseException:
            process.kill()
            raise
        await _stop_server_process(process)


@asynccontextmanager
async def streams(process: Any, opened: list[bool]) -> AsyncIterator[Any]:
    """The SDK's transport streams over a running server (`stdio_client`'s body after its
    spawn, mcp 2.3, with its helpers); appends True to `opened` once entered. Needs the SDK
    loaded (`load_sdk`)."""
    # lazy: the SDK is loaded by then (load_sdk); this module is imported before it
    from mcp.client import stdio as sdk
    from mcp.shared.message import SessionMessage

    opened.append(True)
    reader, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, writer = anyio.create_memory_object_stream[SessionMessage](0)
    state = {"shutting_down": False}
    writer_done = anyio.Event()

    async def stdout_reader() -> None:
        try:
            async with reader:
                try:
                    await _read_lines(process, reader, sdk._parse_line)
                finally:
                    await sdk._drain_stdout(process)
        except anyio.ClosedResourceError:
            return  # our own shutdown closed the stdout stream under the read: the reader's end
        except (anyio.BrokenResourceError, ConnectionError):
            if not state["shutting_down"]:
                sdk.logger.exception("Reading from the MCP server's stdout failed mid-session")

    async def stdin_writer() -> None:
        try:
            async with writer:
                async for message in writer:
                    json = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((json + "\n").encode("utf-8"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await reader.aclose()  # the session sees the connection end, not a hung request
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()  # unblock the reader into its drain
        write_stream.close()
        with anyio.move_on_after(sdk._WRITER_FLUSH_TIMEOUT) as flush:
            await writer_done.wait()
        if flush.cancelled_caught:
            await anyio.lowlevel.cancel_shielded_checkpoint()
        await sdk._stop_server_process(process)
        await sdk._aclose_all(read_stream, write_stream, reader, writer)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(stdout_reader)
        group.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            state["shutting_down"] = True
            with anyio.CancelScope(shield=True):  # every wait inside is bounded
                await shutdown()
            group.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()


async def _read_lines(process: Any, reader: Any, parse: Any) -> None:
    """Each stdout line, parsed, to the session; no read-ahead while a delivery is blocked."""
    from anyio.streams.text import TextReceiveStream  # lazy: with the SDK, only this path

    buffer = ""
    async for chunk in TextReceiveStream(process.stdout, encoding="utf-8", errors="strict"):
        lines = (buffer + chunk).split("\n")
        buffer = lines.pop()
        for line in lines:
            try:
                await reader.send(parse(line))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # the session is gone; only the drain remains

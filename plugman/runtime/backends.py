"""One server behind the gateway: its connection, what it offers, its health (spec §7.6).

A backend is one task: connect (plugman.runtime.connect, legacy mode), list the tools (every
page, at most MAX_PAGES), resources, resource templates and prompts, then watch. Watching means
a ping every `Health.ping_every` seconds (bounded by `ping_timeout`), re-listing what the server
says changed (`notifications/*/list_changed`, through `on_message`), and ending the session when
a call saw the connection close. The session also ends when the client context exits on its
own (a killed HTTP server cancels it at once).

When a session that was up ends, everything the backend offered is withdrawn (the gateway tells
its clients), then it reconnects after `base` seconds, doubling up to `cap`, at most `attempts`
times in a row; success re-adds everything and resets the count. A first connection that fails
is retried the same way. After the last failed attempt the backend stays down (logged).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import anyio

from plugman.core.errors import PlugmanError
from plugman.runtime.connect import Trace, open_client
from plugman.runtime.failure import failure, leaves
from plugman.runtime.naming import split_server
from plugman.runtime.oauth_provider import AuthFor

if TYPE_CHECKING:
    from mcp import Client

log = logging.getLogger("plugman.gateway")

BACKOFF_ENV = "PLUGMAN_GATEWAY_BACKOFF"
MAX_PAGES = 100
KINDS = frozenset({"tools", "resources", "prompts"})
Listener = Callable[["Backend", frozenset[str]], Awaitable[None]]


@dataclass(frozen=True)
class Health:
    connect_timeout: float = 30.0
    ping_every: float = 1.0
    ping_timeout: float = 10.0
    base: float = 1.0
    cap: float = 30.0
    attempts: int = 5

    @classmethod
    def from_env(cls, env: Mapping[str, str], connect_timeout: float = 30.0) -> Health:
        """The defaults, with the first reconnection delay from PLUGMAN_GATEWAY_BACKOFF."""
        text = env.get(BACKOFF_ENV, "").strip()
        if not text:
            return cls(connect_timeout=connect_timeout)
        try:
            base = float(text)
        except ValueError:
            base = math.nan
        if not math.isfinite(base) or base <= 0:
            raise PlugmanError(f"{BACKOFF_ENV}={text!r} is not a positive number of seconds")
        return cls(connect_timeout=connect_timeout, base=base)

    def delay(self, attempt: int) -> float:
        """Seconds to wait before reconnection attempt `attempt` (1-based)."""
        return float(min(self.base * 2 ** (attempt - 1), self.cap))


class DroppedError(Exception):
    """A call saw the backend's connection close."""


class Backend:
    def __init__(
        self,
        name: str,
        entry: Mapping[str, Any],
        *,
        errlog: TextIO,
        env: Mapping[str, str],
        cwd: Path,
        health: Health,
        on_change: Listener,
        auth_for: AuthFor | None = None,
    ) -> None:
        self.name, self.entry = name, entry
        self.plugin, self.server = split_server(name)
        self.errlog, self.env, self.cwd, self.health = errlog, env, cwd, health
        self.on_change = on_change
        self.auth_for = auth_for  # a stored OAuth login, asked again at every connection
        self.state = "connecting"  # connecting | up | down | failed
        self.reason: str | None = None
        self.client: Client | None = None
        self.tools: list[Any] = []  # mcp.types.Tool, as the server lists them
        self.resources: list[Any] = []
        self.templates: list[Any] = []
        self.prompts: list[Any] = []
        self.first_round = anyio.Event()  # set once the first attempt is up or has failed
        self._stale: set[str] = set()
        self._dropped: str | None = None
        self._wake = anyio.Event()

    async def run(self) -> None:
        """Connect, serve, reconnect with backoff; return once the attempts are spent."""
        attempt = 0
        while True:
            came_up = await self._session()
            self.first_round.set()
            if came_up:
                attempt = 0
            if attempt >= self.health.attempts:
                self.state = "failed"
                log.error(
                    "%s: down for good after %d attempts: %s", self.name, attempt, self.reason
                )
                return
            attempt += 1
            self.state = "down"
            wait = self.health.delay(attempt)
            log.warning(
                "%s: down (%s); attempt %d in %.1f s", self.name, self.reason, attempt, wait
            )
            await anyio.sleep(wait)

    def dropped(self, client: Client, reason: str) -> None:
        """A call on `client` saw the connection close: end that session now, not at the next
        ping (a call failing late, on a session already replaced, changes nothing)."""
        if client is self.client:
            self._dropped = reason
            self._wake.set()

    async def on_message(self, message: Any) -> None:
        """Server notifications and transport errors, from the client's receive loop."""
        from mcp import types

        kind = None
        if isinstance(message, types.ToolListChangedNotification):
            kind = "tools"
        elif isinstance(message, types.ResourceListChangedNotification):
            kind = "resources"
        elif isinstance(message, types.PromptListChangedNotification):
            kind = "prompts"
        if kind is not None:
            self._stale.add(kind)  # re-listed by the watch loop: never wait on the receive loop
            self._wake.set()
        elif isinstance(message, Exception):
            log.debug("%s: %s", self.name, message)

    async def _session(self) -> bool:
        """One connection, until it ends; whether it came up."""
        came_up = False
        trace = Trace()
        self._dropped = None
        try:
            async with open_client(
                self.name,
                self.entry,
                errlog=self.errlog,
                timeout=self.health.connect_timeout,
                trace=trace,
                env=self.env,
                cwd=self.cwd,
                on_message=self.on_message,
                auth=None if self.auth_for is None else self.auth_for(self.name, self.entry),
            ) as client:
                await self._list(client, KINDS)
                self.client, self.state, self.reason, came_up = client, "up", None, True
                log.info("%s: up, %d tools", self.name, len(self.tools))
                await self.on_change(self, KINDS)
                self.first_round.set()
                try:
                    await self._watch(client)
                except Exception:
                    await self._withdraw()  # before the (maybe slow) stdio shutdown
                    raise
        except Exception as exc:
            self.reason = _reason(exc, trace, self.health.connect_timeout, came_up)
        await self._withdraw()
        return came_up

    async def _withdraw(self) -> None:
        self.client = None
        if self.state == "up":
            self.state = "down"
            self.tools, self.resources, self.templates, self.prompts = [], [], [], []
            await self.on_change(self, KINDS)

    async def _watch(self, client: Client) -> None:
        while True:
            with anyio.move_on_after(self.health.ping_every):
                await self._wake.wait()
            self._wake = anyio.Event()
            if self._dropped is not None:
                raise DroppedError(self._dropped)
            if self._stale:
                kinds = frozenset(self._stale)
                self._stale.clear()
                await self._list(client, kinds)
                await self.on_change(self, kinds)
            with anyio.fail_after(self.health.ping_timeout):
                await client.send_ping()  # deprecated at 2026-07-28 only: backends are legacy

    async def _list(self, client: Client, kinds: frozenset[str]) -> None:
        """Re-list `kinds`; a failing tools/list ends the session, the others only warn."""
        offers = client.server_capabilities
        if "tools" in kinds:
            self.tools = await _pages(client.list_tools, "tools") if offers.tools else []
        if "resources" in kinds and offers.resources:
            self.resources = await self._optional(client.list_resources, "resources")
            self.templates = await self._optional(
                client.list_resource_templates, "resource_templates"
            )
        if "prompts" in kinds and offers.prompts:
            self.prompts = await self._optional(client.list_prompts, "prompts")

    async def _optional(self, method: Callable[..., Awaitable[Any]], attribute: str) -> list[Any]:
        from mcp import MCPError

        try:
            return await _pages(method, attribute)
        except MCPError as exc:
            log.warning("%s: listing %s failed: %s", self.name, attribute, exc)
            return []


async def _pages(method: Callable[..., Awaitable[Any]], attribute: str) -> list[Any]:
    items: list[Any] = []
    cursor = None
    for _ in range(MAX_PAGES):
        page = await method(cursor=cursor, cache_mode="bypass")  # a proxy keeps no cache
        items += getattr(page, attribute)
        cursor = page.next_cursor
        if not cursor:
            break
    return items


def _reason(exc: BaseException, trace: Trace, timeout: float, was_up: bool) -> str:
    for leaf in leaves(exc):
        if isinstance(leaf, DroppedError):
            return f"connection lost: {leaf}"
        if was_up and isinstance(leaf, TimeoutError):
            return "did not answer a ping in time"
    return failure(exc, trace, timeout)[1]

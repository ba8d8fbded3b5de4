"""One server behind the gateway: its connection, what it offers, its health.

A backend is one task: connect (plugman.runtime.transport.connect, legacy mode), list the tools
(every page, at most MAX_PAGES), resources, resource templates and prompts, then watch. Watching
means a ping every `Health.ping_every` seconds (bounded by `ping_timeout`; a ping that times out
while the server answered calls is a busy server, not a dead one: its queue, not its death, held the
ping, and the session stays), re-listing what the
server says changed (`notifications/*/list_changed`, through `on_message`), and ending the session
when a call saw the connection close. The session also ends when the client context exits on its own
(a killed HTTP server cancels it at once).

When a session that was up ends, everything the backend offered is withdrawn (the gateway tells
its clients), then it reconnects after `base` seconds, doubling up to `cap`, at most `attempts`
times in a row; success re-adds everything and resets the count. A first connection that fails
is retried the same way. After the last failed attempt it stays down (logged) until MAX_ERRORS
failed calls in a row (plugman.runtime.gateway.forward) reconnect it at once; a session the server
forgot (HTTP 404) is initialized again at once, what it offers kept listed (`expired`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import anyio

from plugman.runtime.gateway.health import MAX_ERRORS, Health
from plugman.runtime.gateway.naming import split_server
from plugman.runtime.oauth.provider import AuthFor
from plugman.runtime.transport.connect import Trace, open_client
from plugman.runtime.transport.failure import failure, leaves, session_expired

if TYPE_CHECKING:
    from mcp import Client

log = logging.getLogger("plugman.gateway")

MAX_PAGES = 100
KINDS = frozenset({"tools", "resources", "prompts"})
Listener = Callable[["Backend", frozenset[str]], Awaitable[None]]


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
        shared: bool = False,
    ) -> None:
        self.name = name
        self.entry = entry
        self.plugin, self.server = split_server(name)
        self.errlog = errlog
        self.env = env
        self.cwd = cwd
        self.health = health
        self.on_change = on_change
        self.auth_for = auth_for  # a stored OAuth login, asked again at every connection
        self.shared = shared  # from a plugin or a project: see plugman.runtime.transport.headers
        self.state = "connecting"  # connecting | up | down | failed
        self.reason: str | None = None
        self.client: Client | None = None
        self.tools: list[Any] = []  # mcp.types.Tool, as the server lists them
        self.resources: list[Any] = []
        self.templates: list[Any] = []
        self.prompts: list[Any] = []
        self.first_round = anyio.Event()  # set once the first attempt is up or has failed
        self.instructions: str | None = None  # the server's, from its last initialize
        self.trace = Trace()  # the current session's
        self.errors = 0  # consecutive terminal connection errors seen by calls
        self.answered = 0  # calls the server answered (a ping late behind them is no death)
        self._stale: set[str] = set()
        self._dropped: str | None = None
        self._renewing = False  # the session ends to be re-established at once
        self._wake = anyio.Event()
        self._now = anyio.Event()  # reconnect without waiting out the backoff
        self._changed = anyio.Event()  # set (and replaced) whenever `client` changes

    async def run(self) -> None:
        """Connect, serve, reconnect with backoff; once the attempts are spent, stay down until
        calls ask for a reconnection (see `call_failed`)."""
        attempt = 0
        while True:
            came_up = await self._session()
            self.first_round.set()
            if came_up:
                attempt = 0
            if self._renewing:
                self._renewing = False
                if came_up:  # its session expired: a new one now, keeping what it offers
                    log.info("%s: session expired; initializing a new one", self.name)
                    self.state = "renewing"
                    continue
            if attempt >= self.health.attempts:
                self._set_state("failed")
                log.error(
                    "%s: down for good after %d attempts: %s", self.name, attempt, self.reason
                )
                await self._now.wait()
                attempt = 0
            attempt += 1
            self._set_state("down")
            wait = 0.0 if self._now.is_set() else self.health.delay(attempt)
            log.warning(
                "%s: down (%s); attempt %d in %.1f s", self.name, self.reason, attempt, wait
            )
            with anyio.move_on_after(wait):
                await self._now.wait()
            self._now = anyio.Event()
            self.state = "connecting"

    def dropped(self, client: Client, reason: str) -> None:
        """A call on `client` saw the connection close: end that session now, not at the next
        ping (a call failing late, on a session already replaced, changes nothing)."""
        if client is self.client:
            self._dropped = reason
            self._wake.set()

    def expired(self, client: Client) -> None:
        """`client`'s HTTP session expired: end it and initialize a new one at once."""
        if client is self.client:
            self._renewing = True
            self.dropped(client, "session expired (HTTP 404, session not found)")

    def call_failed(self, client: Client | None, why: str) -> None:
        """A call saw a terminal connection error, or found no connection. MAX_ERRORS in a row
        close the transport (if one is open) and reconnect now, whatever the backoff."""
        self.errors += 1
        if self.errors < MAX_ERRORS:
            return
        self.errors = 0
        log.warning(
            "%s: %d connection errors in a row (%s); reconnecting", self.name, MAX_ERRORS, why
        )
        if client is not None and client is self.client:
            self.dropped(client, f"{MAX_ERRORS} connection errors in a row: {why}")
        self._now.set()

    def call_succeeded(self) -> None:
        self.errors = 0
        self.answered += 1

    async def current(self, timeout: float, old: Client | None = None) -> Client | None:
        """The connected client (other than `old`), waiting at most `timeout` while the backend
        is connecting or renewing its session; None if it is down."""
        if self.client is not None and self.client is not old:
            return self.client  # the common case, without a cancel scope
        with anyio.move_on_after(timeout):
            while self.client is None or self.client is old:
                if self.state in ("down", "failed") and not self._renewing:
                    return None
                await self._changed.wait()
        return None if self.client is old else self.client

    def _set_state(self, state: str) -> None:
        self.state = state
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def on_message(self, message: Any) -> None:
        """Server notifications and transport errors, from the client's receive loop."""
        from mcp import types  # lazy: mcp takes ~935 ms to import, only this path needs it

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
        trace = self.trace = Trace()
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
                shared=self.shared,
            ) as client:
                relay_results(client)
                await self._list(client, KINDS)
                self.client = client
                self.state = "up"
                self.reason = None
                came_up = True
                self.instructions = client.instructions
                self.errors = 0
                self._notify()
                log.info("%s: up, %d tools", self.name, len(self.tools))
                await self.on_change(self, KINDS)
                self.first_round.set()
                try:
                    await self._watch(client, trace)
                except Exception:
                    await self._withdraw()  # before the (maybe slow) stdio shutdown
                    raise
        except Exception as exc:
            self.reason = _reason(exc, trace, self.health.connect_timeout, came_up)
        await self._withdraw()
        return came_up

    async def _withdraw(self) -> None:
        self.client = None
        self._notify()
        if self._renewing:
            return  # reconnecting at once: keep what it offers listed
        if self.state in ("up", "renewing"):
            self._set_state("down")
            self.tools = []
            self.resources = []
            self.templates = []
            self.prompts = []
            await self.on_change(self, KINDS)

    async def _watch(self, client: Client, trace: Trace) -> None:
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
            mark, answered = len(trace.statuses), self.answered
            try:
                with anyio.fail_after(self.health.ping_timeout):
                    await client.send_ping()  # deprecated at 2026-07-28 only: backends are legacy
            except TimeoutError:
                if self.answered != answered:  # busy answering calls: alive
                    log.info("%s: a ping waited behind calls; the server is busy", self.name)
                    continue
                raise
            except Exception as exc:
                if session_expired(exc, trace.statuses[mark:]):
                    self.expired(client)
                    raise DroppedError("session expired (HTTP 404, session not found)") from None
                raise

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
        from mcp import MCPError  # lazy: mcp takes ~935 ms to import, only this path needs it

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


def relay_results(client: Client) -> None:
    """Make `client` relay each tool's result unchecked: the gateway passes the result on to a
    client that checks it against the same (relayed) output schema, and the check here costs
    about 0.1 ms a call. The SDK has no option for this; both of its `call_tool` paths call
    the session's public `validate_tool_result`, which is replaced on this one session."""

    async def unchecked(name: str, result: Any) -> None:
        """Nothing to check: the client the result is relayed to checks it."""

    client.session.validate_tool_result = unchecked  # type: ignore[method-assign]

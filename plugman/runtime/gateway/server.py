"""`plugman mcp serve`: one MCP server in front of every resolved MCP server.

Each resolved server is a backend (plugman.runtime.gateway.backends), connected concurrently and
kept up by its own task; the catalog (plugman.runtime.gateway.catalog) is rebuilt whenever one
changes, and every client is told (`notifications/*/list_changed` on 2025-era connections, a
`subscriptions/listen` event on 2026-era ones) when what it can list really changed. Calls go
through plugman.runtime.gateway.calls (hooks, timeouts, cuts). Resource reads and prompt gets are
routed to their backend as they are.

The first list is complete for a client that lists once (Codex never lists again):

- `initialize` is answered at once (its instructions: plugman.runtime.gateway.instructions).
- A backend still starting that the gateway remembers (plugman.runtime.gateway.memory: its catalog
  from an earlier session, with the same entry) is listed at once with that catalog. A call, read or
  prompt get on it waits for the backend (at most the connect timeout), then goes by its real
  catalog; when that differs from the remembered one, clients are told; when the backend fails its
  first attempt, what was remembered is withdrawn (and clients told).
- Every list asked within `Health.first_list_wait` seconds of the start waits (until then at
  most) for the backends still starting that nothing is remembered of, answering as soon as
  each is up or has failed once. What comes up later is announced as above.
- A request naming what no backend offers yet (a client that knew the names from an earlier
  session) waits, at most the connect timeout, until every backend is up or has failed once.

Over HTTP, each caller (plugman.runtime.gateway.principal, set by the auth layer) lists and uses
only what managed `gatewayAccess` grants its groups (plugman.config.gateway_access): tools by
their server and own name, prompts and resources by their server. What it may not use is not
listed, and asking for it by name gets the answer a name nothing offers gets (logged as a
refusal). Listings are kept per grant until the catalog changes; with no rule written, or no
caller (stdio, loopback HTTP without --auth), nothing is filtered.

Nothing is printed: logs go to `<state>/logs/gateway.log`, a stdio server's stderr to
`<state>/logs/<name>.stderr` (both appended to); stdout is the protocol channel. The low-level
MCP server in front of the Gateway (`mcp_server`: its handlers are the Gateway's methods) is
built here and advertises `listChanged` for tools, prompts and resources on every transport;
the transports (stdio, streamable HTTP) live in plugman.runtime.gateway.run. `mcp` is imported
only inside functions, like the rest of plugman.runtime.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import anyio

from plugman import __version__
from plugman.config.gateway_access import Access, Grant
from plugman.core.jsonvalue import JSONObject
from plugman.runtime.gateway.backends import KINDS, Backend
from plugman.runtime.gateway.calls import Called, Guard, call_tool, refused
from plugman.runtime.gateway.catalog import Catalog, Route, build
from plugman.runtime.gateway.forward import UnansweredError, send
from plugman.runtime.gateway.health import Health
from plugman.runtime.gateway.instructions import compose
from plugman.runtime.gateway.memory import Memory, dumped
from plugman.runtime.gateway.naming import gateway_prefix
from plugman.runtime.gateway.observe import Call, CallLog
from plugman.runtime.gateway.principal import principal_of
from plugman.runtime.oauth.provider import AuthFor

if TYPE_CHECKING:
    from mcp import types
    from mcp.server.lowlevel.server import Server
    from mcp.server.session import ServerSession

log = logging.getLogger("plugman.gateway")

NAME = "plugman-gateway"  # the server name clients see
NOTIFY_TIMEOUT = 5.0
MAX_SESSIONS = 1000
MAX_VIEWS = 1024  # per-caller listings kept for the current catalog
LISTED = {"tools": ("tools",), "prompts": ("prompts",), "resources": ("resources", "templates")}
Context = Any  # mcp.server.context.ServerRequestContext


class Gateway:
    def __init__(
        self,
        servers: Mapping[str, Mapping[str, Any]],
        *,
        guard: Guard,
        health: Health,
        errlogs: Mapping[str, TextIO],
        env: Mapping[str, str],
        cwd: Path,
        auth_for: AuthFor | None = None,
        shared: frozenset[str] = frozenset(),
        memory: Memory | None = None,
        calls: CallLog | None = None,
        tracing: bool = False,
        access: Access | None = None,
        authenticated: bool = False,
    ) -> None:
        # lazy: mcp takes ~641 ms to import, only this path needs it
        from mcp.server.subscriptions import InMemorySubscriptionBus

        self.guard = guard
        self.health = health
        self.calls = calls  # the call log (and metrics): plugman.runtime.gateway.observe
        self.tracing = tracing  # --otel: the trace id in the call log, attributes on the span
        self.memory = memory or Memory()
        self.backends = {
            name: Backend(
                name,
                entry,
                errlog=errlogs[name],
                env=env,
                cwd=cwd,
                health=health,
                on_change=self._changed,
                auth_for=auth_for,
                shared=name in shared,
            )
            for name, entry in servers.items()
        }
        recalled = {name: self.memory.recall(name, entry) for name, entry in servers.items()}
        self.recalled = {name: found for name, found in recalled.items() if found is not None}
        self.unknown = [b for b in self.backends.values() if b.name not in self.recalled]
        self.catalog = build(self.backends.values(), self.recalled)
        self.deadline = 0.0  # until then, a list waits for the `unknown` backends
        self.sessions: list[ServerSession] = []
        self.stateless = False  # HTTP --stateless: a session ends with its request
        # --redis: tells the other replicas what changed here (plugman.runtime.gateway.shared)
        self.publish: Callable[[str], Awaitable[None]] | None = None
        self.access = access or Access(None)  # gatewayAccess (plugman.config.gateway_access)
        self.authenticated = authenticated  # HTTP --auth: a caller may be refused things
        self.views: dict[tuple[str, Grant], list[Any]] = {}  # per-caller listings of `catalog`
        self.bus = InMemorySubscriptionBus()
        self.server = mcp_server(self)

    def start(self, group: anyio.abc.TaskGroup) -> None:
        self.deadline = anyio.current_time() + self.health.first_list_wait
        for backend in self.backends.values():
            group.start_soon(backend.run, name=f"backend {backend.name}")
            if backend.name in self.recalled:
                group.start_soon(self._first_round, backend, name=f"recalled {backend.name}")

    async def _first_round(self, backend: Backend) -> None:
        """A remembered backend whose first attempt failed: what was remembered is withdrawn."""
        await backend.first_round.wait()
        if backend.client is None and self.recalled.pop(backend.name, None) is not None:
            log.info("%s: not up; its remembered catalog is withdrawn", backend.name)
            await self._changed(backend, KINDS)

    def settled(self) -> bool:
        """Every backend is up or has failed its first attempt (readiness: /readyz)."""
        return all(backend.first_round.is_set() for backend in self.backends.values())

    async def ready(self) -> None:
        """Within `first_list_wait` of the start, until every backend nothing is remembered of
        is up or has failed once."""
        left = self.deadline - anyio.current_time()
        if left > 0:
            with anyio.move_on_after(left):
                for backend in self.unknown:
                    await backend.first_round.wait()

    async def up(self, route: Route) -> None:
        """A route from a remembered catalog: until its backend is up or has failed once (at
        most the connect timeout)."""
        if route.recalled:
            with anyio.move_on_after(self.health.connect_timeout + 5):
                await route.backend.first_round.wait()

    async def settling(self) -> None:
        """Until every backend is up or has failed once (at most the connect timeout): for a
        request naming what no backend offers yet, which may be one still connecting."""
        with anyio.move_on_after(self.health.connect_timeout + 5):
            for backend in self.backends.values():
                await backend.first_round.wait()

    def instructions(self) -> str:
        """plugman.runtime.gateway.instructions: each backend's own, or what it said last time.
        Behind --auth with gatewayAccess rules, only those of the servers every caller may use
        (initialize is answered before anyone's groups are looked at, and is the same for all:
        it names no server a caller may not see)."""
        shown = list(self.backends.values())
        if self.authenticated and not self.access.open:
            everyone = self.access.grant(())
            shown = [b for b in shown if everyone.server(b.name)]
        return compose(
            (b.name, b.instructions if b.client else self.memory.instructions(b.name, b.entry))
            for b in shown
        )

    # --- what clients can list changes ------------------------------------------------------

    async def _changed(self, backend: Backend, kinds: frozenset[str]) -> None:
        if backend.client is not None:
            self.recalled.pop(backend.name, None)  # its real catalog from now on
            self.memory.keep(backend.name, backend.entry, backend.instructions, backend)
            self.server.instructions = self.instructions()  # for the next initialize
        before, self.catalog = self.catalog, build(self.backends.values(), self.recalled)
        self.views.clear()
        for conflict in sorted(set(self.catalog.conflicts) - set(before.conflicts)):
            log.warning("%s", conflict)
        for kind in sorted(kinds):
            if any(_listed(before, k) != _listed(self.catalog, k) for k in LISTED[kind]):
                log.info(
                    "%s: %s changed; telling %d clients", backend.name, kind, len(self.sessions)
                )
                await self.notify(kind)
                if self.publish is not None:
                    await self.publish(kind)

    async def notify(self, kind: str) -> None:
        """Tell every client that the `kind` list (tools, prompts or resources) changed."""
        # lazy: mcp takes ~798 ms to import, only this path needs it
        from mcp.server import subscriptions as events

        event: events.ServerEvent = events.ToolsListChanged()
        if kind == "prompts":
            event = events.PromptsListChanged()
        elif kind == "resources":
            event = events.ResourcesListChanged()
        await self.bus.publish(event)
        for session in list(self.sessions):
            send = getattr(session, f"send_{kind.rstrip('s')}_list_changed")
            try:
                with anyio.fail_after(NOTIFY_TIMEOUT):
                    await send()
            except Exception as exc:  # a client gone: forget it
                log.info("dropping a client session: %r", exc)
                if session in self.sessions:
                    self.sessions.remove(session)

    async def joined(self, ctx: Context, params: Any) -> None:
        """`notifications/initialized`: a 2025-era client to notify from now on (not when
        stateless: its session ends with this request)."""
        if self.stateless:
            return
        self.sessions.append(ctx.session)
        del self.sessions[:-MAX_SESSIONS]

    # --- requests -----------------------------------------------------------------------------

    async def list_tools(self, ctx: Context, params: Any) -> types.ListToolsResult:
        from mcp import types  # lazy: mcp takes ~1033 ms to import, only this path needs it

        await self.ready()
        return types.ListToolsResult(tools=self._listing(ctx, "tools"))

    async def call(self, ctx: Context, params: types.CallToolRequestParams) -> Any:
        if self.calls is None:
            return (await self._call(ctx, params))[0].result
        started = time.perf_counter()
        outcome, server, tool = "cancelled", "", params.name  # the client left, or a shutdown
        try:
            called, server, tool = await self._call(ctx, params)
            outcome = called.outcome
            return called.result
        finally:
            self.calls.record(self._seen(ctx, outcome, server, tool, started))

    def _seen(self, ctx: Context, outcome: str, server: str, tool: str, started: float) -> Call:
        """The call as the call log sees it (plugman.runtime.gateway.observe)."""
        principal = principal_of(ctx)
        trace = None
        if self.tracing:
            # lazy: the OpenTelemetry glue, only with --otel
            from plugman.runtime.gateway.telemetry import current_trace, mark

            mark(server, outcome)
            trace = current_trace()
        sub = principal.subject if principal is not None else None
        return Call(sub, server, tool, time.perf_counter() - started, outcome, trace)

    async def _call(
        self, ctx: Context, params: types.CallToolRequestParams
    ) -> tuple[Called, str, str]:
        """The call, the backend it went to and the backend's name for the tool (a tool
        gatewayAccess hides from the caller is answered as unknown, and logged as refused)."""
        route = self.catalog.tools.get(params.name)  # the hot path: no await before the call
        if route is None or route.recalled:
            route = await self._route("tools", params.name)
        grant = self._grant(ctx)
        if route is not None and not self._allowed(grant, route):
            self._refused(ctx, "tool", params.name)
            await self.settling()  # as an unknown name waits: no hint that it exists
            hidden = refused(f"Unknown tool: {params.name}", "refused")
            return hidden, route.backend.name, route.name
        if route is not None:
            called = await call_tool(route, dict(params.arguments or {}), self.guard)
            return called, route.backend.name, route.name
        down = self._down(params.name)
        if down is None:
            return refused(f"Unknown tool: {params.name}", "unknown"), "", params.name
        tool = params.name.removeprefix(gateway_prefix(down.name))
        if grant is not None and not grant.server(down.name):
            return refused(f"Unknown tool: {params.name}", "refused"), down.name, tool
        down.call_failed(None, "not connected")  # a client still calling it hastens the retry
        why = f"{down.name} is not connected: {down.reason or down.state}"
        return refused(why, "unavailable"), down.name, tool

    def _grant(self, ctx: Context) -> Grant | None:
        """What the caller of this request may use (plugman.config.gateway_access); None:
        everything (no gatewayAccess rule, or the local user over stdio or unauthenticated
        loopback HTTP). Behind --auth, a request that passed the gate but carries no caller
        (an auth layer that names none) is a caller with no groups: only `*` rules admit it."""
        if self.access.open:
            return None
        principal = principal_of(ctx)
        if principal is None:
            return self.access.grant(()) if self.authenticated else None
        return self.access.grant(principal.groups)

    @staticmethod
    def _allowed(grant: Grant | None, route: Route) -> bool:
        return grant is None or grant.tool(route.backend.name, route.name)

    def _listing(self, ctx: Context, kind: str) -> list[Any]:
        """What the caller may list of `kind` (tools, prompts, resources or templates), kept
        per caller's grant until the catalog changes."""
        grant = self._grant(ctx)
        if grant is None:
            return self.catalog.listing(kind)
        found = self.views.get((kind, grant))
        if found is None:
            if len(self.views) >= MAX_VIEWS:
                self.views.clear()
            found = self.views[(kind, grant)] = self.catalog.visible(kind, grant)
        return found

    def _refused(self, ctx: Context, kind: str, name: str) -> None:
        """Log a request for what gatewayAccess hides from its caller (answered as unknown)."""
        principal = principal_of(ctx)
        who = (principal.subject, principal.issuer, principal.groups) if principal else None
        log.warning("gatewayAccess refused %s %r to %r: no rule grants it", kind, name, who)

    def _down(self, tool: str) -> Backend | None:
        """The backend, not connected now, whose tools `tool` would be one of."""
        matching = [
            (len(prefix), backend)
            for backend in self.backends.values()
            if backend.client is None and tool.startswith(prefix := gateway_prefix(backend.name))
        ]
        return max(matching, key=lambda pair: pair[0])[1] if matching else None

    async def _route(self, kind: str, name: str) -> Route | None:
        """The route of tool or prompt `name` (`kind`: tools or prompts), once its backend is up
        if it was recalled; after the backends settled if nothing offers it yet."""
        route: Route | None = getattr(self.catalog, kind).get(name)
        if route is not None and route.recalled:
            await self.up(route)
            route = getattr(self.catalog, kind).get(name)
        if route is None:
            await self.settling()
            route = getattr(self.catalog, kind).get(name)
        return route

    async def list_resources(self, ctx: Context, params: Any) -> types.ListResourcesResult:
        from mcp import types  # lazy: mcp takes ~1033 ms to import, only this path needs it

        await self.ready()
        return types.ListResourcesResult(resources=self._listing(ctx, "resources"))

    async def list_templates(self, ctx: Context, params: Any) -> types.ListResourceTemplatesResult:
        from mcp import types  # lazy: mcp takes ~1033 ms to import, only this path needs it

        await self.ready()
        return types.ListResourceTemplatesResult(resource_templates=self._listing(ctx, "templates"))

    async def read(self, ctx: Context, params: types.ReadResourceRequestParams) -> Any:
        from mcp import MCPError  # lazy: mcp takes ~1033 ms to import, only this path needs it

        uri, grant = str(params.uri), self._grant(ctx)
        route = self.catalog.resource_route(uri, grant)
        if route is not None and route.recalled:
            await self.up(route)
            route = self.catalog.resource_route(uri, grant)
        if route is None:
            await self.settling()
            route = self.catalog.resource_route(uri, grant)
        if route is None:
            if grant is not None and self.catalog.resource_route(uri) is not None:
                self._refused(ctx, "resource", uri)
            raise MCPError(-32002, f"Resource not found: {uri}")
        return await self._forward(
            route, lambda client: client.read_resource(uri, cache_mode="bypass")
        )

    async def list_prompts(self, ctx: Context, params: Any) -> types.ListPromptsResult:
        from mcp import types  # lazy: mcp takes ~1033 ms to import, only this path needs it

        await self.ready()
        return types.ListPromptsResult(prompts=self._listing(ctx, "prompts"))

    async def prompt(self, ctx: Context, params: types.GetPromptRequestParams) -> Any:
        from mcp import MCPError  # lazy: mcp takes ~1033 ms to import, only this path needs it

        route = await self._route("prompts", params.name)
        grant = self._grant(ctx)
        if route is not None and grant is not None and not grant.server(route.backend.name):
            self._refused(ctx, "prompt", params.name)
            route = None
        if route is None:
            raise MCPError(-32602, f"Unknown prompt: {params.name}")
        arguments = dict(params.arguments or {})
        return await self._forward(route, lambda client: client.get_prompt(route.name, arguments))

    async def _forward(self, route: Route, request: Any) -> Any:
        """A resource read or prompt get on the route's backend (plugman.runtime.gateway.forward);
        failures as MCP errors."""
        from mcp import MCPError  # lazy: mcp takes ~1033 ms to import, only this path needs it

        backend, timeout = route.backend, self.guard.call_timeout
        try:
            return await send(backend, request, timeout)
        except UnansweredError as exc:
            raise MCPError(-32603, str(exc)) from None
        except MCPError as exc:
            raise MCPError(exc.code, f"{backend.name}: {exc.message}", exc.data) from exc
        except TimeoutError:
            raise MCPError(-32001, f"{backend.name} did not answer within {timeout:g} s") from None


def _listed(catalog: Catalog, kind: str) -> list[JSONObject]:
    """What a client lists of `kind`, as JSON: a remembered item equals the same one listed."""
    return [dumped(item) for item in catalog.listing(kind)]


def mcp_server(gateway: Gateway) -> Server[Any]:
    """The low-level MCP server whose handlers are `gateway`'s methods, advertising
    `listChanged` on every transport."""
    from mcp import types  # lazy: mcp takes ~1033 ms to import, only this path needs it
    from mcp.server.lowlevel.server import NotificationOptions, Server
    from mcp.server.subscriptions import ListenHandler

    class GatewayServer(Server[Any]):
        def create_initialization_options(self, *args: Any, **kwargs: Any) -> Any:
            options = args[0] if args else kwargs.pop("notification_options", None)
            changed = options or NotificationOptions(True, True, True)
            return super().create_initialization_options(changed, *args[1:], **kwargs)

    server = GatewayServer(
        NAME,
        version=__version__,
        instructions=gateway.instructions(),
        on_list_tools=gateway.list_tools,
        on_call_tool=gateway.call,
        on_list_resources=gateway.list_resources,
        on_list_resource_templates=gateway.list_templates,
        on_read_resource=gateway.read,
        on_list_prompts=gateway.list_prompts,
        on_get_prompt=gateway.prompt,
        on_subscriptions_listen=ListenHandler(gateway.bus),
    )
    server.add_notification_handler(
        "notifications/initialized", types.NotificationParams, gateway.joined
    )
    return server

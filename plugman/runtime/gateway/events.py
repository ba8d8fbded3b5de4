"""2025-era SSE events kept in Redis, so a client whose stream broke can resume with
`Last-Event-ID` on any replica (the SDK's `EventStore`, `--redis` without `--stateless`).

The supported way to keep 2025-era `list_changed` pushes across replicas: stateful replicas
(no `--stateless`), the load balancer hashing on the `Mcp-Session-Id` header (HAProxy
`balance hdr(Mcp-Session-Id)`, nginx `hash $http_mcp_session_id consistent`), and `--redis`,
which gives every session this event store and fans list changes out between replicas
(plugman.runtime.gateway.shared). A session lives on the replica that created it; when its GET
stream breaks and the client comes back with `Last-Event-ID` to another replica (its own was
restarted, or the balancer moved it), that replica answers the events it missed from Redis and
ends the stream; its other requests then answer 404 and the client opens a new session.

Only the GET stream's events are kept (`list_changed` notifications): the gateway answers each
request with one JSON body, so no request stream is ever resumed, and no tool result goes to
Redis. In Redis, per session and stream: a Redis stream
`plugman:events:<session>:<stream>` of at most `MAX_EVENTS` events, and the session's owner
(`plugman:session:<session>`: the caller's `Principal.key`, `-` without one), both expiring
`TTL` seconds after the last event (sliding, as the SDK's 30-minute session idle timeout). An
event id is `<stream, base64url>.<Redis stream id>`. Everything read back is hostile input: a
`Last-Event-ID`, session id or stored message that does not parse is skipped (the first one
logged), a resume by another caller than the session's owner answers 404, and replay happens
only within the session the request names. With Redis down, events get ids that replay
nothing, and a resume replays nothing (the SDK then serves the live stream).
"""

from __future__ import annotations

import base64
import binascii
import contextvars
import functools
import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from plugman.runtime.gateway.principal import in_scope
from plugman.runtime.gateway.shared import Link, SharedError

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

log = logging.getLogger("plugman.gateway")

TTL = 30 * 60  # seconds after the last event
MAX_EVENTS = 500  # per stream
NOBODY = "-"  # the owner of a session opened without a Principal (--auth token, or none)
SESSION = re.compile(r"[0-9a-f]{32}")  # the SDK's session ids: uuid4().hex
EVENT_ID = re.compile(r"([A-Za-z0-9_-]{1,172})\.([0-9]{1,20}-[0-9]{1,20})")
UNSTORED = "unstored"  # the id of an event Redis did not keep: it replays nothing
GET_STREAM = "_GET_stream"  # the SDK's GET_STREAM_KEY: the one stream events are kept of
# Who sends the request being served: set by `Resume`, read when the SDK opens a session.
CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("plugman_caller", default=NOBODY)
Send = Callable[[Any], Awaitable[None]]  # ASGI


def _stream_key(session: str, token: str) -> str:
    return f"plugman:events:{session}:{token}"


def _owner_key(session: str) -> str:
    return f"plugman:session:{session}"


def _token(stream_id: str) -> str:
    return base64.urlsafe_b64encode(stream_id.encode()).decode().rstrip("=")


def _stream_of(token: str) -> str:
    padded = token + "=" * (-len(token) % 4)
    return base64.urlsafe_b64decode(padded).decode()


class Events:
    """The events of every session of this replica, in Redis through `link`."""

    def __init__(self, link: Link) -> None:
        self.link = link
        self.ignored = 0

    async def store(self, session: str, owner: str, stream_id: str, data: bytes) -> str:
        """Keep one event (`data` empty: the SDK's priming event) and return its id."""
        token = _token(stream_id)
        key = _stream_key(session, token)

        async def add(client: Any) -> Any:
            async with client.pipeline(transaction=False) as pipe:
                pipe.xadd(key, {b"m": data}, maxlen=MAX_EVENTS, approximate=False)
                pipe.expire(key, TTL)
                pipe.set(_owner_key(session), owner, ex=TTL)
                return (await pipe.execute())[0]

        try:
            found = await self.link.do(add)
        except SharedError:
            return UNSTORED
        entry = found.decode() if isinstance(found, bytes) else str(found)
        return f"{token}.{entry}"

    async def owner(self, session: str) -> str | None:
        try:
            found = await self.link.do(lambda client: client.get(_owner_key(session)))
        except SharedError:
            return None
        return found.decode(errors="replace") if isinstance(found, bytes) else None

    async def after(
        self, session: str, last_event_id: str
    ) -> tuple[str, list[tuple[str, Any]]] | None:
        """The stream `last_event_id` names in `session`, and its events after it (the SDK's
        messages, each with its id); None when there is no such stream."""
        match = EVENT_ID.fullmatch(last_event_id)
        if match is None:
            self._skip("a Last-Event-ID that is not one of ours")
            return None
        token, entry = match.groups()
        try:
            stream_id = _stream_of(token)
        except (binascii.Error, UnicodeDecodeError, ValueError):
            self._skip("a Last-Event-ID naming no stream")
            return None
        key = _stream_key(session, token)

        async def read(client: Any) -> Any:
            async with client.pipeline(transaction=False) as pipe:
                pipe.exists(key)
                pipe.xrange(key, min=f"({entry}", max="+", count=MAX_EVENTS)
                return await pipe.execute()

        try:
            exists, entries = await self.link.do(read)
        except SharedError:
            return None
        if not exists:
            return None
        return stream_id, self._messages(token, entries)

    def _messages(self, token: str, entries: Any) -> list[tuple[str, Any]]:
        # lazy: mcp_types comes with the SDK (~0.6 s), only a resume needs it
        from mcp_types import jsonrpc_message_adapter

        found: list[tuple[str, Any]] = []
        for entry_id, fields in entries if isinstance(entries, list) else []:
            data = fields.get(b"m") if isinstance(fields, dict) else None
            if data == b"":
                continue  # a priming event: no message
            try:
                message = jsonrpc_message_adapter.validate_json(data or b"")
            except ValueError:
                self._skip("a stored event that is not a JSON-RPC message")
                continue
            found.append((f"{token}.{entry_id.decode()}", message))
        return found

    def _skip(self, what: str) -> None:
        self.ignored += 1
        if self.ignored == 1:
            log.warning("resume: ignoring %s, and any like it", what)


class SessionEvents:
    """The SDK's `EventStore` for one session (the SDK gives one store to every session, and
    names every session's GET stream alike, so each transport gets its own)."""

    def __init__(self, events: Events, session: str, owner: str) -> None:
        self.events, self.session, self.owner = events, session, owner

    async def store_event(self, stream_id: str, message: Any) -> str:
        if stream_id != GET_STREAM:
            return UNSTORED  # a request's answer: a JSON body (json_response), never resumed
        data = (
            b"" if message is None else message.model_dump_json(by_alias=True, exclude_unset=True)
        )
        encoded = data.encode() if isinstance(data, str) else data
        return await self.events.store(self.session, self.owner, stream_id, encoded)

    async def replay_events_after(
        self, last_event_id: str, send_callback: Callable[[Any], Awaitable[None]]
    ) -> str | None:
        # lazy: the SDK (~0.7 s), only a resume needs it
        from mcp.server.streamable_http import EventMessage

        found = await self.events.after(self.session, last_event_id)
        if found is None:
            return None
        stream_id, messages = found
        for event_id, message in messages:
            await send_callback(EventMessage(message, event_id))
        return stream_id


def session_manager(events: Events | None, **options: Any) -> StreamableHTTPSessionManager:
    """The SDK's session manager; with `events`, each session it opens keeps its events there."""
    # lazy: mcp takes ~750 ms to import, only the HTTP path needs it
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    if events is None:
        return StreamableHTTPSessionManager(**options)
    manager: StreamableHTTPSessionManager = _resumable()(**options)
    manager.plugman_events = events  # type: ignore[attr-defined]
    return manager


@functools.cache
def _resumable() -> Any:
    # lazy: mcp takes ~750 ms to import, only the HTTP path needs it
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    class Resumable(StreamableHTTPSessionManager):
        plugman_events: Events

        def _admit_session(self, requestor: Any) -> Any:
            transport = super()._admit_session(requestor)
            if transport is not None and transport.mcp_session_id:
                store = SessionEvents(self.plugman_events, transport.mcp_session_id, CALLER.get())
                transport._event_store = cast(Any, store)  # the pinned SDK's one attribute for it
            return transport

    return Resumable


def caller_of(scope: Any) -> str:
    principal = in_scope(scope)
    return NOBODY if principal is None else principal.key


class Resume:
    """ASGI, around McpApp: notes who calls (the owner of a session it opens), and answers a
    resume (GET with `Last-Event-ID`) of a session another replica holds from Redis."""

    def __init__(self, app: Any, manager: StreamableHTTPSessionManager, events: Events) -> None:
        self.app, self.manager, self.events = app, manager, events

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        caller = caller_of(scope)
        headers = dict(scope["headers"])
        session = headers.get(b"mcp-session-id", b"").decode("latin-1")
        last = headers.get(b"last-event-id")
        if scope["method"] == "GET" and last and session and not self._here(session):
            await self._replay(scope, receive, send, session, last.decode("latin-1"), caller)
            return
        reset = CALLER.set(caller)
        try:
            await self.app(scope, receive, send)
        finally:
            CALLER.reset(reset)

    def _here(self, session: str) -> bool:
        return session in getattr(self.manager, "_server_instances", {})

    async def _replay(
        self, scope: Any, receive: Any, send: Send, session: str, last: str, caller: str
    ) -> None:
        # lazy: starlette comes with the SDK, only a resume needs it
        from mcp.server.transport_security import TransportSecurityMiddleware
        from starlette.requests import Request

        refused = await TransportSecurityMiddleware(
            self.manager.security_settings
        ).validate_request(Request(scope, receive), is_post=False)
        if refused is not None:
            await refused(scope, receive, send)
            return
        found = None
        if SESSION.fullmatch(session) and await self.events.owner(session) == caller:
            found = await self.events.after(session, last)
        if found is None:
            await _not_found(send)
            return
        _, messages = found
        body = b"".join(_sse(event_id, message) for event_id, message in messages)
        headers = [
            (b"content-type", b"text/event-stream"),
            (b"cache-control", b"no-cache, no-transform"),
            (b"mcp-session-id", session.encode()),
            (b"content-length", str(len(body)).encode()),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _sse(event_id: str, message: Any) -> bytes:
    data = message.model_dump_json(by_alias=True, exclude_unset=True)
    return f"id: {event_id}\nevent: message\ndata: {data}\n\n".encode()


_NOT_FOUND = json.dumps(
    {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}}
).encode()


async def _not_found(send: Send) -> None:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(_NOT_FOUND)).encode()),
    ]
    await send({"type": "http.response.start", "status": 404, "headers": headers})
    await send({"type": "http.response.body", "body": _NOT_FOUND})

"""What replicas of the HTTP gateway share in Redis besides rate limits (`--redis URL`, else
`PLUGMAN_REDIS_URL`): 2025-era SSE events to resume on any replica
(plugman.runtime.gateway.events), `list_changed` fan-out between replicas (`Fanout`, here), and,
with `--shared-oauth`, the backends' OAuth logins, encrypted (plugman.runtime.oauth.sealed).

`Link` owns the asyncio connection (redis-py) for events and fan-out, with short socket
timeouts. The URL may carry a password: it is registered as sensitive (so the gateway log masks
it) and only `redact.url(url)` is ever shown. The OAuth logins use a synchronous client of the
same URL, because the secret-store interface they go through is synchronous.

Redis down never crashes a replica, nor fails a call that does not need it: the first failure
logs one line, and for `RETRY` seconds nothing waits on Redis (no replay, no fan-out, logins
from the local secret store); then it is tried again, and one line says it is back.

`list_changed` across replicas (`Fanout`): when a replica's catalog changes, it tells its own
clients, then publishes `{"origin": <replica id>, "kind": <tools|prompts|resources>}` on
`CHANNEL`. Every replica listens; a message with its own origin is skipped (its clients were
told already), any other known kind is told to its own clients (2025-era sessions and 2026-era
`subscriptions/listen` streams) and never published again, so messages do not loop. A message
from Redis is hostile input: anything but a small JSON object with a string origin and a known
kind is ignored; the first such message is logged, the rest only counted.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import anyio

from plugman.config.redact import sensitive
from plugman.config.redact import url as redacted
from plugman.core.errors import UsageError

if TYPE_CHECKING:
    from redis.asyncio import Redis

log = logging.getLogger("plugman.gateway")

VARIABLE = "PLUGMAN_REDIS_URL"
TIMEOUT = 0.5  # seconds for a connection or a reply: a replica never waits long on Redis
RETRY = 5.0  # seconds after a failure during which Redis is not tried again
CHANNEL = b"plugman:list-changed"
KINDS = ("tools", "prompts", "resources")
MAX_MESSAGE = 256  # bytes: a fan-out message is far smaller
FLEET_HINT = "pip install 'plugman[fleet]'"
T = TypeVar("T")


class SharedError(Exception):
    """Redis did not do what was asked (down, slow, or holding the wrong type)."""


def redis_url(given: str | None, env: dict[str, str]) -> str | None:
    """The Redis URL from `--redis`, else the environment; its password registered as
    sensitive (masked in every log line and output)."""
    found = given or env.get(VARIABLE) or None
    if found is None:
        return None
    try:
        parts = urlsplit(found)
        password = parts.password
    except ValueError:
        raise UsageError(
            "the Redis URL is not a URL", where="--redis", hint="redis://[:PASSWORD@]HOST:PORT/DB"
        ) from None
    if parts.scheme not in ("redis", "rediss", "unix"):
        raise UsageError(
            f"not a Redis URL: {redacted(found)}",
            where="--redis",
            hint="redis://[:PASSWORD@]HOST:PORT/DB (rediss:// for TLS)",
        )
    if password:
        sensitive(password)
    return found


def fleet(module: str) -> Any:
    """Import a module of the `fleet` extra, or say how to install it."""
    import importlib  # lazy: only the fleet options load these modules

    try:
        return importlib.import_module(module)
    except ImportError:
        raise UsageError(
            f"--redis needs {module.split('.')[0]}, which is not installed", hint=FLEET_HINT
        ) from None


class Link:
    """The asyncio Redis connection of the events and the fan-out, and whether Redis is up."""

    def __init__(self, url: str) -> None:
        asyncio_redis = fleet("redis.asyncio")
        self.shown = redacted(url)
        self.client: Redis = asyncio_redis.Redis.from_url(
            url, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT
        )
        self.errors: tuple[type[BaseException], ...] = (
            fleet("redis.exceptions").RedisError,
            OSError,
            TimeoutError,
        )
        self.down = False
        self.resume_at = 0.0

    async def do(self, action: Callable[[Redis], Awaitable[T]]) -> T:
        """`action` on the connection; SharedError when Redis is down, was down less than RETRY
        seconds ago, or refuses it."""
        if self.down and time.monotonic() < self.resume_at:
            raise SharedError("redis is down")
        try:
            with anyio.fail_after(TIMEOUT * 4):
                result = await action(self.client)
        except self.errors as exc:
            self.failed(exc)
            raise SharedError(type(exc).__name__) from None
        self.up()
        return result

    def failed(self, exc: BaseException) -> None:
        refused = fleet("redis.exceptions").ResponseError
        if isinstance(exc, refused):  # the server answered: not down, just refused
            return
        self.resume_at = time.monotonic() + RETRY
        if not self.down:
            self.down = True
            log.warning(
                "redis %s not answering (%s): no shared events or list changes until it answers",
                self.shown,
                type(exc).__name__,
            )

    def up(self) -> None:
        if self.down:
            self.down = False
            log.info("redis %s answering again: events and list changes shared", self.shown)

    async def close(self) -> None:
        try:
            await self.client.aclose()
        except self.errors:
            return


class Fanout:
    """`list_changed` between replicas over Redis pub/sub (see the module's docstring)."""

    def __init__(self, link: Link, tell: Callable[[str], Awaitable[None]]) -> None:
        self.link = link
        self.tell = tell  # Gateway.notify: this replica's own clients only
        self.origin = secrets.token_hex(8)
        self.ignored = 0

    async def publish(self, kind: str) -> None:
        """Tell the other replicas that `kind` changed here (nothing when Redis is down)."""
        payload = json.dumps({"origin": self.origin, "kind": kind})
        try:
            await self.link.do(lambda client: client.publish(CHANNEL, payload))
        except SharedError:
            return

    async def run(self) -> None:
        """Listen until cancelled; subscribe again after Redis fails."""
        while True:
            try:
                await self._listen()
            except self.link.errors as exc:
                self.link.failed(exc)
            await anyio.sleep(RETRY)

    async def _listen(self) -> None:
        async with self.link.client.pubsub(ignore_subscribe_messages=True) as pubsub:
            await pubsub.subscribe(CHANNEL)
            self.link.up()
            while True:
                message = await pubsub.get_message(timeout=1.0)
                if message is not None and message.get("type") == "message":
                    await self.received(message.get("data"))

    async def received(self, data: Any) -> None:
        """One message from the channel: told to this replica's clients if it is another
        replica's change of a known kind."""
        kind = self._kind(data)
        if kind is not None:
            log.info("%s changed on another replica; telling this one's clients", kind)
            await self.tell(kind)

    def _kind(self, data: Any) -> str | None:
        try:
            if not isinstance(data, bytes | str) or len(data) > MAX_MESSAGE:
                raise ValueError("not a short message")
            found = json.loads(data)
            if not isinstance(found, dict) or not isinstance(found.get("origin"), str):
                raise ValueError("no origin")
            if found["origin"] == self.origin:
                return None  # this replica's own change: its clients were told
            if found.get("kind") not in KINDS:
                raise ValueError("an unknown kind")
        except ValueError as exc:
            self.ignored += 1
            if self.ignored == 1:
                log.warning("ignoring a message on %s (%s), and any like it", CHANNEL.decode(), exc)
            return None
        kind: str = found["kind"]
        return kind

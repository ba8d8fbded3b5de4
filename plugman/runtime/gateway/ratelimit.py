"""Rate limits of the gateway over HTTP, per caller and per caller and tool, shared by every
replica through Redis (`plugman mcp serve --rate-limit 60/minute --tool-rate-limit 10/minute
--redis URL`).

- What counts: toward `--rate-limit`, every request to the MCP endpoint that passed
  authentication (each POST is one JSON-RPC message, since batches are refused: see
  plugman.runtime.gateway.inbound; a 2025-era client's `initialize` and notifications count, as
  does opening its GET stream); toward `--tool-rate-limit`, each `tools/call`, per tool, by the
  name the body gives. A request refused by the first limit is not counted by the second.
- Who: the caller's `Principal.key` (plugman.runtime.gateway.principal), an opaque hash of
  issuer and subject; with `--auth token` everyone sharing the token is one caller; with
  `--auth none` on loopback, one local caller.
- How: the `limits` library's moving window (a window of the limit's length ending now; no
  burst at a fixed window's edge). Limits are written as `limits` parses them: `60/minute`,
  `10 per second`, `1000/hour`.
- Where: in Redis when a URL is given (`--redis`, else `PLUGMAN_REDIS_URL`: give a password
  there, never on the command line), so every replica counts against the same window: one
  round trip per request, whatever the limits checked (`BOTH`, a Lua script doing what the
  `limits` library's moving-window script does for each window in turn, on the keys `limits`
  uses, so `limits` reads the same windows for `Retry-After`; with `limits`' own `hit` per
  limit a `tools/call` took two round trips: bench/limit_check.py's check of both, 0.37 ms at
  p50, is 0.14 ms in one). A refusal costs one more (the window's state, for `Retry-After`).
  The connection pool is one per replica (`limits`' client), kept. Keys are
  `plugman:rl:user/<key>/...` and `plugman:rl:tool/<key>/<sha256 of the tool name>/...`:
  nothing a caller writes (a `sub`, a tool name with `:`, `*` or a newline) reaches a key.
  Without Redis the counters are in this process's memory (two `hit` calls of `limits`): each
  replica then allows the limit on its own.
- Over a limit: HTTP 429 with `Retry-After` (seconds until the window frees a slot) and a
  JSON-RPC error; logged as `rate limited: <limit> <subject> [<tool>]` (the subject as the
  identity provider gave it, escaped; never a token), at most one line a second.
- Redis unreachable (refused, timed out after 0.5 s, restarted): `--redis-failure open` (the
  default) serves the request unlimited and logs one warning per 30 s; `closed` answers 503
  with `Retry-After: 1`. After a failure Redis is not asked again for one second (every
  request meanwhile gets the same answer at once), so a dead Redis never stalls calls; once it
  answers again limits apply again, without restarting the replica. A restarted Redis without
  persistence starts every window afresh. Open is the default because a limit here protects
  backends' fair use, not access (authentication and policy do that): a Redis outage should
  not take every replica of an organization's gateway down with it; choose closed where the
  limit guards a cost that must never be exceeded.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from plugman.config.redact import url as masked
from plugman.core.errors import UsageError
from plugman.runtime.gateway import inbound
from plugman.runtime.gateway.inbound import Receive, Send
from plugman.runtime.gateway.principal import Principal, in_scope

if TYPE_CHECKING:
    from limits import RateLimitItem
    from limits.aio.strategies import MovingWindowRateLimiter

log = logging.getLogger("plugman.gateway")

FAILURES = ("open", "closed")
VARIABLE = "PLUGMAN_REDIS_URL"
PREFIX = "plugman:rl"
SCHEMES = {"redis": "async+redis", "rediss": "async+rediss", "unix": "async+redis+unix"}
# KEYS: the windows to hit in order; ARGV: now, then each window's limit and expiry (seconds).
# Each window as `limits`' acquire_moving_window.lua (cost 1); stops at the first full one.
# Returns 0 when every window took the hit, else the (1-based) index of the full window: the
# windows before it were counted, as two `hit` calls in a row would have.
BOTH = """
local now = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
    local limit = tonumber(ARGV[2 * i])
    local expiry = tonumber(ARGV[2 * i + 1])
    local entry = redis.call('lindex', key, limit - 1)
    if entry and tonumber(entry) >= now - expiry then
        return i
    end
    redis.call('lpush', key, ARGV[1])
    redis.call('ltrim', key, 0, limit - 1)
    redis.call('expire', key, expiry)
end
return 0
"""
TIMEOUT = 0.5  # seconds: Redis connect and read
PAUSE = 1.0  # seconds Redis is not asked again after a failure
SHOWN = 80  # characters of a tool name in a log line or a 429's message
WARN_EVERY = 30.0  # seconds between two warnings that Redis is unreachable
LOCAL = Principal("local", "plugman")  # --auth none, on loopback
TOO_MANY = -32029  # JSON-RPC server error: rate limited
UNAVAILABLE = -32030  # JSON-RPC server error: the limits' store is unreachable


@dataclass(frozen=True)
class Rules:
    """The limits `plugman mcp serve` was given (None: no such limit)."""

    per_user: str | None = None
    per_tool: str | None = None
    redis_url: str | None = None
    failure: str = "open"

    @property
    def any(self) -> bool:
        return bool(self.per_user or self.per_tool)


@dataclass(frozen=True)
class Window:
    """One limit a request counts toward, and whose: `named` identifies the window."""

    item: RateLimitItem
    named: tuple[str, ...]
    tool: str | None  # the tool's name, for a per-tool window

    @property
    def key(self) -> str:
        """The window's key as `limits` spells it (before its storage's prefix)."""
        return self.item.key_for(*self.named)


@dataclass(frozen=True)
class Verdict:
    status: int  # 429 or 503
    retry_after: int
    message: str


class Limiter:
    """The limits of `Rules`, checked per request (`check`)."""

    def __init__(self, rules: Rules) -> None:
        _check_failure(rules.failure)
        self.user = _item(rules.per_user, "user", "--rate-limit")
        self.tool = _item(rules.per_tool, "tool", "--tool-rate-limit")
        self.closed = rules.failure == "closed"
        self.where = masked(rules.redis_url) if rules.redis_url else "memory"
        self.strategy = _strategy(rules.redis_url)
        # limits' Redis client (its connection pool), and BOTH registered on it
        self.bridge: Any = getattr(self.strategy.storage, "bridge", None)
        self.script: Any = None if self.bridge is None else self._register()
        self.errors = _store_errors(bool(rules.redis_url))
        self.paused_until = 0.0
        self.warned_at = -WARN_EVERY
        self.logged_at = 0.0
        self.unlogged = 0

    @property
    def described(self) -> str:
        """What is limited, and where it is counted (a Redis URL's password masked)."""
        per = [
            f"{_spelled(item)} {who}"
            for item, who in ((self.user, "per caller"), (self.tool, "per caller and tool"))
            if item is not None
        ]
        where = "in this process's memory" if self.where == "memory" else f"in {self.where}"
        failure = "closed" if self.closed else "open"
        return f"{', '.join(per)}, counted {where} (--redis-failure {failure})"

    async def check(self, principal: Principal | None, asked: inbound.Inbound) -> Verdict | None:
        """None when the request may go on; else why not."""
        if time.monotonic() < self.paused_until:
            return self._unavailable()
        caller = principal or LOCAL
        windows = self._windows(caller, asked)
        try:
            full = await self._hit(windows)
            if full is not None:
                return await self._refused(full.item, caller, full.tool, full.named)
        except self.errors as exc:
            return self._failed(exc)
        if self.paused_until:
            self.paused_until = 0.0
            log.warning("rate limits: Redis at %s answers again", self.where)
        return None

    def _register(self) -> Any:
        return self.bridge.get_connection().register_script(BOTH)

    def _windows(self, caller: Principal, asked: inbound.Inbound) -> list[Window]:
        """The windows this request counts toward, in order: the caller's, then its tool's."""
        windows = [] if self.user is None else [Window(self.user, (caller.key,), None)]
        if self.tool is not None and asked.method == "tools/call" and asked.tool is not None:
            windows.append(Window(self.tool, (caller.key, tool_key(asked.tool)), asked.tool))
        return windows

    async def _hit(self, windows: list[Window]) -> Window | None:
        """Count the request in each window in turn, up to the first that is full (returned)."""
        if self.script is None or not windows:
            for window in windows:
                if not await self.strategy.hit(window.item, *window.named):
                    return window
            return None
        keys = [self.bridge.prefixed_key(window.key) for window in windows]
        args: list[float] = [time.time()]
        for window in windows:
            args += [window.item.amount, window.item.get_expiry()]
        full = int(await self.script(keys, args))
        return windows[full - 1] if full else None

    async def _refused(
        self, item: RateLimitItem, caller: Principal, tool: str | None, named: tuple[str, ...]
    ) -> Verdict:
        wait = item.get_expiry()
        try:
            reset, _ = await self.strategy.get_window_stats(item, *named)
            wait = min(wait, max(1, math.ceil(reset - time.time())))
        except self.errors:
            wait = item.get_expiry()
        tool = None if tool is None else _cut(tool)
        self._log_refusal(item, caller, tool)
        what = f" for {tool!r}" if tool is not None else ""
        return Verdict(429, wait, f"rate limit exceeded{what}: {_spelled(item)}")

    def _log_refusal(self, item: RateLimitItem, caller: Principal, tool: str | None) -> None:
        now = time.monotonic()
        if now - self.logged_at < 1.0:
            self.unlogged += 1
            return
        more = f" (and {self.unlogged} more refused)" if self.unlogged else ""
        shown = "" if tool is None else f" {tool!r}"
        subject = f"{caller.subject!r} of {caller.issuer!r}"
        log.warning("rate limited: %s %s%s%s", _spelled(item), subject, shown, more)
        self.logged_at, self.unlogged = now, 0

    def _failed(self, exc: BaseException) -> Verdict | None:
        now = time.monotonic()
        self.paused_until = now + PAUSE
        if now - self.warned_at >= WARN_EVERY:
            self.warned_at = now
            then = "refusing requests (503)" if self.closed else "serving requests unlimited"
            why = type(exc).__name__
            log.warning("rate limits: Redis at %s unreachable (%s): %s", self.where, why, then)
        return self._unavailable()

    def _unavailable(self) -> Verdict | None:
        if not self.closed:
            return None
        return Verdict(503, 1, "rate limits unavailable: their store does not answer")


class Limits:
    """ASGI middleware: each request to the MCP endpoint (an `Inbound` in its scope) checked
    against the `Limiter`; 429 or 503 instead of the app when it says so."""

    def __init__(self, app: Any, limiter: Limiter) -> None:
        self.app = app
        self.limiter = limiter

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        asked = inbound.in_scope(scope) if scope["type"] == "http" else None
        verdict = None if asked is None else await self.limiter.check(in_scope(scope), asked)
        if verdict is None or asked is None:
            await self.app(scope, receive, send)
            return
        code = TOO_MANY if verdict.status == 429 else UNAVAILABLE
        after = [(b"retry-after", str(verdict.retry_after).encode())]
        await inbound.refuse(send, verdict.status, code, verdict.message, asked.id, after)


def tool_key(name: str) -> str:
    """The part of a per-tool key that names the tool: a hash of it, never its spelling."""
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def limiter(rules: Rules) -> Limiter | None:
    """The limiter `rules` ask for (None: no limits); a UsageError when they cannot be used."""
    _check_failure(rules.failure)
    return Limiter(rules) if rules.any else None


def _check_failure(failure: str) -> None:
    if failure not in FAILURES:
        raise UsageError(f"unknown --redis-failure {failure!r}", hint="use open or closed")


def _item(text: str | None, namespace: str, flag: str) -> RateLimitItem | None:
    if not text:
        return None
    limits = _fleet("limits")
    try:
        item = limits.parse(text)
    except ValueError:
        raise UsageError(
            f"{flag}: {text!r} is not a rate limit",
            hint="write it as COUNT/PERIOD: 60/minute, 10/second, 1000/hour, 100 per 5 minutes",
        ) from None
    made: RateLimitItem = type(item)(item.amount, item.multiples, namespace=namespace)
    return made


def _strategy(redis_url: str | None) -> MovingWindowRateLimiter:
    strategies = _fleet("limits.aio.strategies")
    storage = _fleet("limits.aio.storage")
    if not redis_url:
        return strategies.MovingWindowRateLimiter(storage.MemoryStorage())  # type: ignore[no-any-return]
    scheme, sep, rest = redis_url.partition("://")
    if not sep or scheme not in SCHEMES:
        raise UsageError(
            f"--redis: {masked(redis_url)!r} is not a Redis URL",
            where="--redis",
            hint="use redis://[:PASSWORD@]HOST:PORT[/DB], rediss://... (TLS) or unix:///PATH",
        )
    retry = _fleet("redis.asyncio.retry").Retry(_fleet("redis.backoff").NoBackoff(), 0)
    options: dict[str, Any] = {
        "socket_timeout": TIMEOUT,
        "socket_connect_timeout": TIMEOUT,
        "retry": retry,
    }
    store = storage.RedisStorage(
        f"{SCHEMES[scheme]}://{rest}",
        wrap_exceptions=True,
        implementation="redispy",
        key_prefix=PREFIX,
        **options,
    )
    return strategies.MovingWindowRateLimiter(store)  # type: ignore[no-any-return]


def _store_errors(redis: bool) -> tuple[type[BaseException], ...]:
    """What a store that does not answer raises: `limits`' wrapped errors, and redis-py's own
    (`BOTH` is called on the client, outside `limits`' wrapping)."""
    errors = (_fleet("limits.errors").StorageError, OSError, TimeoutError)
    return (*errors, _fleet("redis.exceptions").RedisError) if redis else errors


def _fleet(module: str) -> Any:
    """A module of the `fleet` extra, imported only where limits are asked for."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UsageError(
            "rate limits need the limits and redis packages",
            hint="pip install 'plugman[fleet]'",
        ) from None


def _cut(name: str) -> str:
    """A caller's tool name as logged and answered: at most SHOWN characters of it."""
    return name if len(name) <= SHOWN else name[:SHOWN] + "..."


def _spelled(item: RateLimitItem) -> str:
    period = item.GRANULARITY.name
    per = period if item.multiples == 1 else f"{item.multiples} {period}s"
    return f"{item.amount}/{per}"

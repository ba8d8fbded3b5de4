"""`plugman mcp probe`: connect to each resolved MCP server, list what it offers, disconnect.

Concurrency: stdio servers at most `local_batch` (LOCAL_BATCH) at a time, remote ones at most
`remote_batch` (REMOTE_BATCH, as Claude Code) at a time, both groups at once; a slot is reused
as soon as its server is done. Claude Code starts 3 stdio servers at a time; plugman starts 10,
as the gateway starts every backend at once: a server's start-up mostly waits (`npx`/`uvx`
fetching, a runtime booting), and one that computes is bounded by the cores either way, so ten
servers that each wait 1 s are probed in about 2 s rather than 5 (bench/probe_cli_speed.py).
Each server has its own `anyio.fail_after(timeout)` (plus the SDK's read timeout) and its own
catch, so one failing server never affects another. A stdio server's stderr goes to
`<state>/logs/<name>.stderr`. Shutdown is the SDK's: close stdin, wait 2 s, SIGTERM the
server's process group, wait 2 s, SIGKILL; so a hung server costs at most about timeout + 4 s.

`duration_ms` is the time until the outcome was known: after listing for a connected server,
at most the deadline for a failed one; the stdio shutdown that follows is not counted.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from plugman.core.errors import PlugmanError
from plugman.core.jsonvalue import JSONObject, ServerEntry
from plugman.core.paths import Paths
from plugman.runtime.gateway.listing import Listing, ToolInfo, describe
from plugman.runtime.oauth import auth_cache
from plugman.runtime.oauth.provider import REMOTE, AuthFor, authorizer
from plugman.runtime.transport import headers
from plugman.runtime.transport.connect import Trace, open_client, transport_of
from plugman.runtime.transport.failure import failure

if TYPE_CHECKING:
    from plugman.config.merge import Dropped, Origin

LOCAL_BATCH = 10  # stdio servers started at once (see above)
REMOTE_BATCH = 20
TAIL_LINES = 3
TAIL_CHARS = 400
FAILED = ("failed", "needs-auth")


@dataclass
class ProbeResult:
    name: str
    transport: str
    state: str  # connected | failed | needs-auth | pending-approval | disabled
    reason: str | None = None
    protocol_version: str | None = None
    server_name: str | None = None
    server_version: str | None = None
    tools: list[ToolInfo] = field(default_factory=list)
    resources: list[JSONObject] = field(default_factory=list)
    prompts: list[JSONObject] = field(default_factory=list)
    duration_ms: int | None = None
    stderr_log: str | None = None
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Options:
    timeout: float
    log_dir: Path
    env: Mapping[str, str] | None
    cwd: Path | None
    auth_for: AuthFor | None = None
    shared: frozenset[str] = frozenset()


async def probe(
    servers: Mapping[str, Mapping[str, Any]],
    *,
    timeout: float,
    local_batch: int = LOCAL_BATCH,
    remote_batch: int = REMOTE_BATCH,
    log_dir: Path,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    auth_for: AuthFor | None = None,
    shared: frozenset[str] = frozenset(),
) -> list[ProbeResult]:
    """Probe every server concurrently; results in the order of `servers`. `auth_for` gives
    a remote server's stored OAuth login (plugman.runtime.oauth.provider.authorizer); `shared`
    names the servers from a plugin or a project (plugman.runtime.transport.headers)."""
    quiet_sdk_logging()
    log_dir.mkdir(parents=True, exist_ok=True)
    options = _Options(timeout, log_dir, env, cwd, auth_for, shared)
    local, remote = anyio.CapacityLimiter(local_batch), anyio.CapacityLimiter(remote_batch)
    results: dict[str, ProbeResult] = {}

    async def run(name: str, entry: Mapping[str, Any]) -> None:
        kind = _kind(entry)
        async with local if kind == "stdio" else remote:
            results[name] = await _probe_one(name, entry, kind, options)

    async with anyio.create_task_group() as group:
        for name, entry in servers.items():
            group.start_soon(run, name, entry)
    return [results[name] for name in servers]


def _kind(entry: Mapping[str, Any]) -> str:
    try:
        return transport_of(entry)
    except PlugmanError:
        return str(entry.get("type"))


async def _probe_one(
    name: str, entry: Mapping[str, Any], kind: str, options: _Options
) -> ProbeResult:
    result = ProbeResult(name, kind, "failed")
    trace = Trace()
    log = log_path(options.log_dir, name) if kind == "stdio" else None
    started = time.monotonic()
    try:
        with _ErrLog(log) as errlog, anyio.fail_after(options.timeout):
            async with open_client(
                name,
                entry,
                errlog=errlog,
                timeout=options.timeout,
                trace=trace,
                env=options.env,
                cwd=options.cwd,
                auth=None if options.auth_for is None else options.auth_for(name, entry),
                shared=name in options.shared,
            ) as client:
                _fill(result, await describe(client))
                result.state = "connected"
                result.duration_ms = _ms(started)
    except BaseException as exc:  # groups nest; anything but cancellation is this server's
        if not _is_failure(exc):
            raise
        result.state, result.reason = failure(exc, trace, options.timeout, _tail(log))
        if result.state == "needs-auth":
            result.reason = f"{result.reason}; run: plugman mcp login {name}"
        result.duration_ms = min(_ms(started), round(options.timeout * 1000))
    result.stderr_log = str(log) if log else None
    return result


def _fill(result: ProbeResult, found: Listing) -> None:
    for name, value in vars(found).items():
        setattr(result, name, value)


def _is_failure(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return any(_is_failure(inner) for inner in exc.exceptions)
    return isinstance(exc, Exception) and not isinstance(exc, anyio.get_cancelled_exc_class())


class _ErrLog:
    """A stdio server's stderr file (it must have a file descriptor); stderr for remote ones."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.file: Any = None

    def __enter__(self) -> Any:
        if self.path is None:
            return sys.__stderr__ or sys.stderr
        self.file = self.path.open("w", encoding="utf-8", errors="replace")
        return self.file

    def __exit__(self, *exc: object) -> None:
        if self.file is not None:
            self.file.close()


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


def log_path(log_dir: Path, name: str) -> Path:
    """`<name>.stderr`, the name made file-safe (and told apart by a hash when it had to be)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name).lstrip(".") or "_"
    if safe != name:
        safe += "-" + hashlib.sha256(name.encode()).hexdigest()[:8]
    return log_dir / f"{safe}.stderr"


def _tail(log: Path | None) -> str:
    if log is None:
        return ""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()][-TAIL_LINES:]
    tail = " | ".join(lines)
    return tail if len(tail) <= TAIL_CHARS else "…" + tail[-TAIL_CHARS:]


def quiet_sdk_logging() -> None:
    """The SDK logs a traceback for every bad stdout line; keep it off the user's terminal."""
    for name in ("mcp", "client"):
        logger = logging.getLogger(name)
        if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
            logger.addHandler(logging.NullHandler())
        logger.propagate = False


# --- resolved config --------------------------------------------------------------------------

HELD = {"pending-approval": "pending-approval", "missing-variable": "failed"}  # else: disabled


def probe_paths(
    paths: Paths,
    names: Sequence[str] = (),
    *,
    timeout: float = 30.0,
    local_batch: int = LOCAL_BATCH,
    remote_batch: int = REMOTE_BATCH,
) -> list[ProbeResult]:
    """Probe this project's resolved servers (all, or `names`), plus a result for every server
    resolution held back: pending approval, disabled (policy, managed-exclusive, ...)."""
    # lazy: config.resolution takes ~10 ms to import, only this path needs it
    from plugman.config.resolution import resolve

    resolved = resolve(paths, os.environ)
    servers = {name: s.entry for name, s in resolved.servers.items()}
    layers = resolved.layers
    entries = {(s.name, s.origin): s.entry for s in (*(layers.managed or ()), *layers.servers)}
    held = _held(resolved.dropped, servers, entries)
    unknown = sorted(set(names) - set(servers) - set(held))
    if unknown:
        raise PlugmanError(
            f"no MCP server named {', '.join(unknown)}", hint="run: plugman config resolve"
        )
    wanted = set(names) if names else set(servers) | set(held)
    chosen = {name: entry for name, entry in servers.items() if name in wanted}
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(paths.project_dir)}
    urls = {n: str(e.get("url")) for n, e in chosen.items() if _kind(e) in REMOTE}
    skipped = auth_cache.cached(paths, urls)  # needed auth lately: not contacted again
    run = partial(
        probe,
        {name: entry for name, entry in chosen.items() if name not in skipped},
        timeout=timeout,
        local_batch=local_batch,
        remote_batch=remote_batch,
        log_dir=paths.state_dir / "logs",
        env=env,
        cwd=paths.project_dir,
        auth_for=authorizer(paths),
        shared=headers.shared(resolved.servers),
    )
    found = anyio.run(run) if set(chosen) - set(skipped) else []
    needing = {r.name: urls[r.name] for r in found if r.state == "needs-auth" and r.name in urls}
    auth_cache.update(paths, needing, [r.name for r in found if r.state == "connected"])
    found += [_cached(name, chosen[name], since) for name, since in skipped.items()]
    found += [result for name, result in held.items() if name in wanted]
    return sorted(found, key=lambda r: r.name)


def _cached(name: str, entry: Mapping[str, Any], since: float) -> ProbeResult:
    ago = max(0, round((time.time() - since) / 60))
    reason = f"HTTP 401 Unauthorized {ago} min ago (not retried for 15 min)"
    return ProbeResult(name, _kind(entry), "needs-auth", f"{reason}; run: plugman mcp login {name}")


def _held(
    dropped: list[Dropped],
    servers: Mapping[str, ServerEntry],
    entries: Mapping[tuple[str, Origin], ServerEntry],
) -> dict[str, ProbeResult]:
    held: dict[str, ProbeResult] = {}
    for item in dropped:
        if item.kind != "server" or item.name in servers or item.name in held:
            continue
        state = HELD.get(item.reason, "disabled")
        reason = item.detail if state == "pending-approval" else f"{item.reason}: {item.detail}"
        kind = _kind(entries.get((item.name, item.origin), {}))
        held[item.name] = ProbeResult(item.name, kind, state, reason)
    return held


def failed(results: Sequence[ProbeResult], names: Sequence[str] = ()) -> list[ProbeResult]:
    """The results that make `probe` exit 1: failed or needing auth; and, for servers asked for
    by name, also pending approval or disabled."""
    return [r for r in results if r.state in FAILED or (r.name in names and r.state != "connected")]

"""One log line per tool call through the gateway: who called what, how long it took and how it
ended, for an organization's log pipeline (and the metrics of plugman.runtime.gateway.telemetry).

Each `tools/call` gives one JSON object on one line:

    {"time": "2026-11-27T19:40:00.123Z", "replica": "gw-1", "sub": "alice", "server": "notes",
     "tool": "add", "ms": 2.41, "outcome": "ok", "trace": "4bf92f35..."}

- `time`: when the call ended (UTC, milliseconds); `ms`: how long the gateway took to answer it.
- `replica`: `mcp serve --replica NAME`, else PLUGMAN_REPLICA, else the host name (a pod's name
  in Kubernetes), so the lines of several replicas can be told apart once collected.
- `sub`: the caller's `sub` as the auth layer verified it (plugman.runtime.gateway.principal);
  null over stdio and over HTTP without authentication.
- `server`, `tool`: the backend and its own name for the tool ("" and the name asked for when no
  backend offers it: outcome `unknown`).
- `outcome`: ok, error, refused, timeout, unavailable, unknown (plugman.runtime.gateway.calls),
  or cancelled (the client went away, or the replica stopped, before the call ended).
- `trace`: the call's trace id when tracing is on (`--otel`), so a line leads to its trace.

Never a token, never the arguments or the result (they may hold secrets). Every value is
JSON-escaped: a `sub` or a tool name holding a newline or a quote stays inside its string and
cannot forge a second line; strings are cut at MAX_FIELD characters.

Where the lines go: always `<state>/logs/calls.jsonl` (appended to); with `--log-stderr` also
stderr, where a container platform collects them (over stdio stderr is not the protocol channel,
so this is safe on either transport).
"""

from __future__ import annotations

import json
import socket
import sys
import time
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TextIO

if TYPE_CHECKING:
    from plugman.runtime.gateway.telemetry import Telemetry

REPLICA_ENV = "PLUGMAN_REPLICA"
FILE = "calls.jsonl"
MAX_FIELD = 256


def replica_name(given: str | None, env: Mapping[str, str]) -> str:
    """`--replica`, else PLUGMAN_REPLICA, else the host name."""
    return (given or env.get(REPLICA_ENV, "").strip() or socket.gethostname() or "gateway")[
        :MAX_FIELD
    ]


class Call(NamedTuple):  # a NamedTuple: a dataclass costs ~1 ms to define on the stdio path
    """One finished tool call, as the log line and the metrics see it."""

    sub: str | None
    server: str
    tool: str
    seconds: float
    outcome: str
    trace: str | None = None


class CallLog:
    """Writes one JSON line per call to each of `sinks` (flushed at once: a replica may be
    killed at any moment), and hands each call to `also` (the metrics) if given."""

    def __init__(
        self,
        replica: str,
        sinks: tuple[TextIO, ...],
        also: Callable[[Call], None] | None = None,
    ) -> None:
        self.replica = replica
        self.sinks = sinks
        self.also = also

    def record(self, call: Call) -> None:
        line = self.line(call, time.time())
        for sink in self.sinks:
            try:
                sink.write(line)
                sink.flush()
            except (OSError, ValueError):  # a closed stderr or a full disk never fails a call
                continue
        if self.also is not None:
            self.also(call)

    def line(self, call: Call, now: float) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
        fields = {
            "time": f"{stamp}.{int(now * 1000) % 1000:03d}Z",
            "replica": self.replica,
            "sub": _cut(call.sub),
            "server": _cut(call.server),
            "tool": _cut(call.tool),
            "ms": round(call.seconds * 1000, 2),
            "outcome": call.outcome,
        }
        if call.trace is not None:
            fields["trace"] = call.trace
        return json.dumps(fields, ensure_ascii=True) + "\n"


def _cut(text: str | None) -> str | None:
    return None if text is None else text[:MAX_FIELD]


class Seen(NamedTuple):
    """What `mcp serve` asks of the call log and telemetry."""

    replica: str | None = None  # --replica
    otel: bool = False  # --otel
    to_stderr: bool = False  # --log-stderr


def observed(
    log_dir: Path, env: Mapping[str, str], seen: Seen, stack: ExitStack
) -> tuple[CallLog, Telemetry | None]:
    """The call log (<state>/logs/calls.jsonl, and stderr if asked) and, with --otel, the
    telemetry it also records to; both closed (flushed) by `stack` when serving ends."""
    replica = replica_name(seen.replica, env)
    telemetry = None
    if seen.otel:
        from plugman.runtime.gateway.telemetry import start  # lazy: the SDK, only with --otel

        telemetry = start(env, replica)
        stack.callback(telemetry.shutdown)
    file = stack.enter_context((log_dir / FILE).open("a", encoding="utf-8"))
    sinks = (file, sys.stderr) if seen.to_stderr else (file,)
    return CallLog(replica, sinks, telemetry.record if telemetry else None), telemetry

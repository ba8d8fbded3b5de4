"""The gateway's first answers over stdio, from memory, before it imports what it serves with.

A client starting `plugman mcp serve` waits for `initialize`, then lists once (Codex never
again). The MCP SDK, pydantic and anyio take most of a second to import, so once the config is
resolved (which says what may be served), `answer` reads stdin itself and answers, in plain
JSON-RPC:

- `initialize` (a handshake protocol version the SDK negotiates, HANDSHAKE): the gateway's
  capabilities, name and instructions, each served server's from plugman.runtime.gateway.memory
  (a record kept for this very entry), as the full server would;
- `tools/list`, `prompts/list`, `resources/list` and `resources/templates/list` (no cursor),
  when every served server has a catalog remembered for its entry: the remembered catalogs,
  named and cut as plugman.runtime.gateway.catalog lists them. (When one has none, the full
  server answers: it waits for that one, or with `--first-list-wait 0` lists what is up by
  then, as it always did.)

Only servers of `servers` (the resolved config of this start) are listed: a remembered server
that is no longer resolved (removed, disabled, denied by policy, its approval revoked) or whose
entry changed lists nothing. Then `warm` imports the full server in a thread (once a list is
answered, or after WARM_AFTER seconds with no message: not before, as it would slow the answers
down on a busy machine). The first
message it does not answer (a call, anything else), or the imports done with no message
pending, hands over: the `Handover` holds what the full server must read first (the client's
`initialize` under REPLAY_ID, whose answer is not sent again, and every message not answered,
in order), and the full server reads the rest of stdin after it.

It runs only where stdin and stdout are pipes or sockets (as an agent starts the gateway), not
on Windows, nor with PLUGMAN_GATEWAY_EARLY=0 (the full server then answers everything, as
before), and imports nothing but the standard library's light modules.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import stat
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plugman import __version__
from plugman.runtime.gateway import memory
from plugman.runtime.gateway.instructions import compose
from plugman.runtime.gateway.naming import free_name
from plugman.runtime.gateway.pool import cut

NAME = "plugman-gateway"  # plugman.runtime.gateway.server.NAME
# mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS (a test keeps them equal)
HANDSHAKE = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
CAPABILITIES = {
    "prompts": {"listChanged": True},
    "resources": {"listChanged": True, "subscribe": False},
    "tools": {"listChanged": True},
}
# method: (the result's key, the memory's kind)
LISTS = {
    "tools/list": ("tools", "tools"),
    "prompts/list": ("prompts", "prompts"),
    "resources/list": ("resources", "resources"),
    "resources/templates/list": ("resourceTemplates", "templates"),
}
OFF_ENV = "PLUGMAN_GATEWAY_EARLY"
WARM_AFTER = 0.05  # seconds without a message before the imports start anyway
REPLAY_ID = "plugman-early-initialize"
CHUNK = 1 << 16
JSON = dict[str, Any]


@dataclass
class Handover:
    """What the full server reads before the rest of stdin, and what was answered."""

    replay: bytes = b""
    answered: list[str] = field(default_factory=list)
    seconds: float = 0.0  # from the process start to the first list answered, if one was


def usable(env: Mapping[str, str]) -> bool:
    """Whether stdin and stdout are pipes or sockets (plugman.runtime.gateway.pipes' test), and
    the early answers are not turned off (OFF_ENV=0)."""
    if sys.platform == "win32" or env.get(OFF_ENV, "").strip() == "0":
        return False
    try:
        return all(stat.S_ISFIFO(m) or stat.S_ISSOCK(m) for m in map(_mode, (0, 1)))
    except OSError:
        return False


def _mode(fd: int) -> int:
    return os.fstat(fd).st_mode


def answer(
    servers: Mapping[str, Mapping[str, Any]],
    memory_path: Path,
    *,
    warm: Callable[[], None],
) -> Handover:
    """Answer the first messages on fds 0 and 1 (see the module docstring)."""
    kept = memory.read(memory_path)
    records = {name: memory.record_of(kept, name, entry) for name, entry in servers.items()}
    said = compose((name, _text(record.get("instructions"))) for name, record in records.items())
    catalogs = {name: r for name, r in records.items() if _complete(r)}
    lists = listings(catalogs) if catalogs.keys() == servers.keys() else None
    return _Session(said, lists, warm).run()


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


REQUIRED = {
    "tools": ("name", "inputSchema"),
    "prompts": ("name",),
    "resources": ("name", "uri"),
    "templates": ("name", "uriTemplate"),
}


def _complete(record: JSON) -> bool:
    """A record whose every kind is a list of items carrying what the SDK requires of them."""
    for kind, keys in REQUIRED.items():
        items = record.get(kind)
        if not isinstance(items, list):
            return False
        for item in items:
            if not isinstance(item, dict) or not all(
                isinstance(item.get(k), str | dict) for k in keys
            ):
                return False
    return True


def listings(records: Mapping[str, JSON]) -> dict[str, list[JSON]]:
    """What each list holds of these remembered catalogs (by server name), as
    plugman.runtime.gateway.catalog.build lists them: server name order, tools and prompts under
    their (salted if taken) gateway names, tool descriptions cut, the first server keeping a
    resource URI or template."""
    found: dict[str, list[JSON]] = {kind: [] for kind in memory.KINDS}
    names: dict[str, set[str]] = {"tools": set(), "prompts": set()}
    claimed: dict[str, set[str]] = {"resources": set(), "templates": set()}
    for server in sorted(records):
        record = records[server]
        for kind, taken in names.items():
            for item in record[kind]:
                name, _ = free_name(server, item["name"], taken)
                taken.add(name)
                renamed = {**item, "name": name}
                if kind == "tools":
                    renamed.pop("description", None)
                    if item.get("description"):
                        renamed["description"] = cut(item["description"])
                found[kind].append(renamed)
        for kind, key in (("resources", "uri"), ("templates", "uriTemplate")):
            for item in record[kind]:
                if item[key] not in claimed[kind]:
                    claimed[kind].add(item[key])
                    found[kind].append(item)
    return found


class _Session:
    """The early conversation on fds 0 and 1."""

    def __init__(self, said: str, lists: dict[str, list[JSON]] | None, warm: Callable[[], None]):
        self.said = said
        self.lists = lists
        self.warm = warm
        self.buffer = b""
        self.handover = Handover()
        self.replay: list[bytes] = []
        self.wake_read, self.wake_write = os.pipe()
        self.warmed = False
        self.started = False
        self.thread = threading.Thread(target=self._warm, name="gateway warm-up", daemon=True)

    def run(self) -> Handover:
        try:
            self._converse()
        finally:
            os.close(self.wake_read)  # the write end is the warm-up thread's (or closed here)
            if self.started:  # the full server imports the same: never two threads at once
                self.thread.join()
            else:
                os.close(self.wake_write)
        self.handover.replay = b"".join(self.replay) + self.buffer
        return self.handover

    def _converse(self) -> None:
        first = self._line()
        if first is None:
            return
        message = _parsed(first)
        if message is None or not _handshake(message):
            self.replay.append(first)
            return
        version = message["params"]["protocolVersion"]
        self._send(message["id"], self._initialized(version))
        self.replay.append(_line({**message, "id": REPLAY_ID}))
        self.handover.answered.append("initialize")
        while (line := self._line()) is not None:
            if not self._answered(line):
                self.replay.append(line)
                return
            if self.handover.seconds:  # a list answered: the imports may start
                self._warming()

    def _warming(self) -> None:
        if not self.started:
            self.thread.start()
            self.started = True

    def _answered(self, line: bytes) -> bool:
        """Answer `line` here, or keep it as is (a notification) for the full server; False
        when the full server must answer it."""
        message = _parsed(line)
        method = message.get("method") if message else None
        if message is None or not isinstance(method, str):
            return False
        if "id" not in message and method.startswith("notifications/"):
            self.replay.append(line)
            return True
        params = message.get("params")
        if self.lists is None or method not in LISTS or "id" not in message:
            return False
        if isinstance(params, dict) and params.get("cursor") is not None:
            return False
        key, kind = LISTS[method]
        self._send(message["id"], {key: self.lists[kind]})
        self.handover.answered.append(method)
        if not self.handover.seconds:
            self.handover.seconds = _since_start()
        return True

    def _initialized(self, version: str) -> JSON:
        return {
            "capabilities": CAPABILITIES,
            "instructions": self.said,
            "protocolVersion": version,
            "serverInfo": {"name": NAME, "version": __version__},
        }

    def _warm(self) -> None:
        try:
            self.warm()
        finally:
            self.warmed = True
            with contextlib.suppress(OSError):  # the conversation is over: nobody reads
                os.write(self.wake_write, b".")
            os.close(self.wake_write)

    def _line(self) -> bytes | None:
        """The next line from stdin; None at its end, or when nothing is pending once the
        imports are done. They start after the first list, or when no line came for WARM_AFTER
        seconds (not before: a thread importing slows the answers down)."""
        while b"\n" not in self.buffer:
            waiting = self.started and not self.warmed
            timeout = 0 if self.warmed else None if waiting else WARM_AFTER
            ready, _, _ = select.select([0, self.wake_read] if waiting else [0], [], [], timeout)
            if 0 not in ready:
                if self.warmed:
                    return None
                self._warming()
                continue
            chunk = os.read(0, CHUNK)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line + b"\n"

    def _send(self, ident: Any, result: JSON) -> None:
        data = _line({"jsonrpc": "2.0", "id": ident, "result": result})
        while data:
            data = data[os.write(1, data) :]


def _handshake(message: JSON) -> bool:
    """An `initialize` request the SDK would accept, in a version it negotiates (else the full
    server answers it, as it does)."""
    params = message.get("params")
    if message.get("method") != "initialize" or "id" not in message or not isinstance(params, dict):
        return False
    client = params.get("clientInfo")
    return (
        params.get("protocolVersion") in HANDSHAKE
        and isinstance(params.get("capabilities"), dict)
        and isinstance(client, dict)
        and all(isinstance(client.get(key), str) for key in ("name", "version"))
    )


def _parsed(line: bytes) -> JSON | None:
    try:
        found = json.loads(line)
    except ValueError:
        return None
    return found if isinstance(found, dict) and found.get("jsonrpc") == "2.0" else None


def _line(message: JSON) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _since_start() -> float:
    """Seconds since this process started (Linux: /proc; elsewhere 0)."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0
    return max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK"))

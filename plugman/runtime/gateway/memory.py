"""What the gateway remembers of each backend between sessions: its instructions and its catalog.

A client reads the gateway's instructions once, in the initialize result, and many list once,
right after it (Codex never lists again), while a backend can take seconds to start. So what
each backend said (its instructions) and offered (its tools, prompts, resources and resource
templates, as it listed them) is remembered in `<state>/gateway-memory.json` whenever it comes
up or changes, and the next gateway lists it at once, while that backend is still starting.

Each record is keyed by the server's name and a hash of what its entry starts (type, command,
args, url): never its env or headers, whose values are secrets, and a changed command or URL is
a changed server (nothing recalled until it is up). Only what a server lists is kept: no tool
call, result or argument. Every write reads the file again first, so gateways of other projects
keep their records (the last writer of one record wins). A missing or unreadable file, or an
unreadable record, is an empty memory: the gateway then waits for the backend as if it had
never seen it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from plugman.core import fs
from plugman.core.jsonvalue import JSONObject

FILE = "gateway-memory.json"
STARTS = ("type", "command", "args", "url")
KINDS = ("tools", "prompts", "resources", "templates")


class Offer(Protocol):
    """What a backend offers (plugman.runtime.gateway.backends.Backend, or a Recalled one)."""

    @property
    def tools(self) -> list[Any]: ...
    @property
    def prompts(self) -> list[Any]: ...
    @property
    def resources(self) -> list[Any]: ...
    @property
    def templates(self) -> list[Any]: ...


class Recalled(NamedTuple):
    """A backend's catalog from an earlier session: mcp.types items, as the server listed them."""

    tools: list[Any]
    prompts: list[Any]
    resources: list[Any]
    templates: list[Any]


class Memory:
    """See the module docstring; with no `path`, in this process only."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._kept = read(path)

    def instructions(self, name: str, entry: Mapping[str, Any]) -> str | None:
        """What server `name` said last time it was up with this entry, if anything."""
        text = self._record(name, entry).get("instructions")
        return text if isinstance(text, str) else None

    def recall(self, name: str, entry: Mapping[str, Any]) -> Recalled | None:
        """Server `name`'s catalog last time it was up with this entry; None if none is kept
        (or it cannot be read)."""
        from mcp import types  # lazy: mcp takes ~563 ms to import, only this path needs it
        from pydantic import BaseModel

        record = self._record(name, entry)
        if not all(isinstance(record.get(kind), list) for kind in KINDS):
            return None
        shapes: tuple[type[BaseModel], ...] = (
            types.Tool,
            types.Prompt,
            types.Resource,
            types.ResourceTemplate,
        )
        try:
            lists = [
                [shape.model_validate(item) for item in record[kind]]
                for shape, kind in zip(shapes, KINDS, strict=True)
            ]
        except ValueError:  # pydantic's ValidationError: written by another version
            return None
        return Recalled(*lists)

    def keep(self, name: str, entry: Mapping[str, Any], said: str | None, offer: Offer) -> None:
        """Remember what server `name` says and offers now; the file is written only when
        something changed."""
        record: dict[str, Any] = {"entry": _key(entry), "instructions": said or ""}
        for kind in KINDS:
            items = getattr(offer, kind)
            record[kind] = [dumped(item) for item in items]
        if self._kept.get(name) == record:
            return
        if self.path is not None:
            self._kept = read(self.path)  # other gateways' records, as they are now
        self._kept[name] = record
        if self.path is None:
            return
        data = json.dumps(self._kept, indent=1, sort_keys=True) + "\n"
        with contextlib.suppress(OSError):  # a memory only: the next start waits instead
            fs.atomic_write(self.path, data.encode("utf-8"))

    def _record(self, name: str, entry: Mapping[str, Any]) -> JSONObject:
        return record_of(self._kept, name, entry)


def record_of(kept: Mapping[str, Any], name: str, entry: Mapping[str, Any]) -> JSONObject:
    """Server `name`'s record in `kept` (a memory file's content) if it was kept for this very
    entry; else an empty one."""
    found = kept.get(name)
    return found if isinstance(found, dict) and found.get("entry") == _key(entry) else {}


def dumped(item: Any) -> dict[str, Any]:
    """An mcp.types item as JSON, as it is remembered and compared."""
    found: dict[str, Any] = item.model_dump(mode="json", by_alias=True, exclude_none=True)
    return found


def read(path: Path | None) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text(encoding="utf-8")) if path else {}
    except (OSError, ValueError):
        found = {}
    return found if isinstance(found, dict) else {}


def _key(entry: Mapping[str, Any]) -> str:
    starts = {key: entry.get(key) for key in STARTS}
    return hashlib.sha256(json.dumps(starts, sort_keys=True, default=str).encode()).hexdigest()

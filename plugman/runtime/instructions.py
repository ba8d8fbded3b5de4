"""The gateway's `instructions`: a line about itself, then every backend server's own, as Claude
Code puts each server's instructions into its system prompt.

A client reads them once, in the initialize result, and the gateway answers initialize at once,
before its slow backends are up (MCP has no notification for changed instructions). So what each
backend said is remembered in `<state>/gateway-instructions.json` when it comes up, keyed by
server name and a hash of what the entry starts (type, command, args, url: never its env or
headers); a backend not up yet contributes what it said last time, and one whose entry changed
since contributes nothing until it is up. A missing or unreadable file is an empty memory.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from plugman.core import fs
from plugman.runtime.naming import server_prefix

HEADLINE = "Every MCP server plugman resolved for this project, behind one server."
LIMIT = 2048  # characters of one server's instructions (Claude Code's cap)
STARTS = ("type", "command", "args", "url")


def compose(sections: Iterable[tuple[str, str | None]]) -> str:
    """HEADLINE, then for each (server name, its instructions) with text, in order:

        ## <server name> (tools mcp__<server name>__*)
        <its instructions, cut at LIMIT characters>

    separated by blank lines. The name is the resolved one (`plugin:<plugin>:<server>` for a
    plugin's), as `mcp probe` shows it."""
    parts = [HEADLINE]
    for name, said in sections:
        text = (said or "").strip()
        if len(text) > LIMIT:
            text = text[:LIMIT] + "… [cut by plugman]"
        if text:
            parts.append(f"## {name} (tools {server_prefix(name)}*)\n{text}")
    return "\n\n".join(parts)


class Remembered:
    """What each server said last time it was up (see the module docstring); with no `path`,
    in this process only."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        try:
            found = json.loads(path.read_text(encoding="utf-8")) if path else {}
        except (OSError, ValueError):
            found = {}
        self._said: dict[str, Any] = found if isinstance(found, dict) else {}

    def get(self, name: str, entry: Mapping[str, Any]) -> str | None:
        kept = self._said.get(name)
        if isinstance(kept, dict) and kept.get("entry") == _key(entry):
            text = kept.get("text")
            return text if isinstance(text, str) else None
        return None

    def put(self, name: str, entry: Mapping[str, Any], text: str | None) -> None:
        """Remember `text`; the file is written only when something changed."""
        kept = {"entry": _key(entry), "text": text or ""}
        if self._said.get(name) == kept:
            return
        self._said[name] = kept
        if self.path is None:
            return
        data = json.dumps(self._said, indent=2, sort_keys=True) + "\n"
        with contextlib.suppress(OSError):  # a memory only: the next start asks again
            fs.atomic_write(self.path, data.encode("utf-8"))


def _key(entry: Mapping[str, Any]) -> str:
    starts = {key: entry.get(key) for key in STARTS}
    return hashlib.sha256(json.dumps(starts, sort_keys=True, default=str).encode()).hexdigest()

"""Which remote servers answered 401 lately: `<state>/mcp-needs-auth.json`.

As Claude Code does, a server that needed authorization is not contacted again for 15 minutes:
`mcp probe` (and `mcp tools`) report it as `needs-auth` from here. A successful login, or a
probe that connects, clears its entry. The file holds the server's name, a sha256 of its URL
(a URL may carry a key in its query) and a time: never a secret.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from plugman.core.fs import atomic_write
from plugman.core.paths import Paths

TTL = 15 * 60.0
FILE = "mcp-needs-auth.json"


def _path(paths: Paths) -> Path:
    return paths.state_dir / FILE


def url_hash(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()


def _load(paths: Paths) -> dict[str, dict[str, object]]:
    try:
        data = json.loads(_path(paths).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, dict)}


def _save(paths: Paths, data: dict[str, dict[str, object]]) -> None:
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    atomic_write(_path(paths), text.encode())


def cached(paths: Paths, urls: Mapping[str, str], now: float | None = None) -> dict[str, float]:
    """Of `urls` (name: url), the servers that needed auth less than TTL ago: name: since."""
    now = time.time() if now is None else now
    found: dict[str, float] = {}
    for name, entry in _load(paths).items():
        at = entry.get("at")
        if name not in urls or entry.get("url_sha256") != url_hash(urls[name]):
            continue
        if isinstance(at, int | float) and 0 <= now - at < TTL:
            found[name] = float(at)
    return found


def update(
    paths: Paths, needs_auth: Mapping[str, str], cleared: Iterable[str], now: float | None = None
) -> None:
    """Record `needs_auth` (name: url) as of now and drop `cleared` and expired entries."""
    now = time.time() if now is None else now
    data = _load(paths)
    before = dict(data)
    for name in cleared:
        data.pop(name, None)
    for name, entry in list(data.items()):
        at = entry.get("at")
        if not isinstance(at, int | float) or now - at >= TTL:
            del data[name]
    for name, url in needs_auth.items():
        data[name] = {"url_sha256": url_hash(url), "at": now}
    if data != before:
        _save(paths, data)


def clear(paths: Paths, name: str) -> None:
    update(paths, {}, [name])

"""`plugman connectors sync`: cache the user's claude.ai connectors as MCP servers.

The source (a file, or an http(s) URL) holds `[{"name", "url", "type"?}]` or
`{"connectors": [...]}`. Every connector is checked before anything is written; the cache
(`scopes.connectors_path`) is what plugman.config.scopes reads into the claude.ai scope.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from plugman.config.scopes import connectors_path
from plugman.core.download import download
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.paths import Paths
from plugman.core.session import session
from plugman.manifest.names import unsafe_reason

FORMAT = 1
TYPES = ("http", "sse")
REMOTE_SCHEMES = ("http://", "https://", "file://")


def sync(paths: Paths, source: str) -> dict[str, Any]:
    """Replace the connectors cache with what `source` lists; the cache written."""
    remote = source.lower().startswith(REMOTE_SCHEMES)
    where = source if remote else str(Path(source).absolute())
    found = None if remote else parse(_read_file(Path(source)), where)  # before any write
    with session(paths) as work:
        if found is None:
            staged = work.store.stage() / "connectors.json"
            download(source, staged)
            found = parse(staged.read_bytes(), where)
        cache = {"format": FORMAT, "source": where, "connectors": found}
        work.tx.write(connectors_path(paths), (json.dumps(cache, indent=2) + "\n").encode())
    return {**cache, "file": str(connectors_path(paths))}


def _read_file(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UsageError(
            f"cannot read {path}: {exc.strerror or exc}",
            hint="pass a JSON file or an https:// URL listing the connectors",
        ) from None


def parse(data: bytes, where: str) -> list[dict[str, Any]]:
    """The cache's connector list; a PlugmanError naming every problem."""
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise PlugmanError(f"{where} is not valid JSON: {exc}", hint=_SHAPE) from None
    if isinstance(value, dict):
        value = value.get("connectors")
    if not isinstance(value, list):
        raise PlugmanError(f"{where} holds no list of connectors", hint=_SHAPE)
    problems: list[str] = []
    found: list[dict[str, Any]] = []
    for index, item in enumerate(value):
        problem = _problem(item, {c["name"] for c in found})
        if problem:
            problems.append(f"  - connectors[{index}]: {problem}")
        else:
            kind = item.get("type", "http")
            found.append({"name": item["name"], "entry": {"type": kind, "url": item["url"]}})
    if problems:
        raise PlugmanError(f"{where} has invalid connectors:\n" + "\n".join(problems), hint=_SHAPE)
    return found


_SHAPE = 'expected [{"name": "...", "url": "https://...", "type": "http"}, ...]'


def _problem(item: Any, seen: set[str]) -> str | None:
    if not isinstance(item, dict):
        return "must be an object with 'name' and 'url'"
    name, url = item.get("name"), item.get("url")
    if not isinstance(name, str):
        return "'name' must be a string"
    reason = unsafe_reason(name)
    if reason:
        return f"name {name!r} {reason}"
    if name in seen:
        return f"name {name!r} is listed twice"
    if not isinstance(url, str) or not _is_http(url):
        return f"{name}: 'url' must be an http:// or https:// URL"
    if item.get("type", "http") not in TYPES:
        return f"{name}: 'type' must be http or sse"
    return None


def _is_http(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)

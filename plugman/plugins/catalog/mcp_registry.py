"""`plugman search --registry URL QUERY`: servers in an MCP Registry (the official one, or any
that serves its API), read from `GET {URL}/v0.1/servers?search=QUERY&version=latest&limit=N`,
following `metadata.nextCursor` until `limit` servers are listed. Each item is
`{server, _meta}`; a malformed item is skipped with a warning, never a failure."""

from __future__ import annotations

import json
from typing import Any, NamedTuple
from urllib.parse import urlencode

from plugman.core import progress
from plugman.core.download import check_url, read
from plugman.core.errors import FetchError

PAGE = 100  # the registry's largest page
MAX_PAGES = 50
OFFICIAL = "io.modelcontextprotocol.registry/official"


class RegistryHit(NamedTuple):
    """One server a registry search found."""

    name: str
    version: str
    description: str | None
    packages: tuple[str, ...]  # "npm @scope/name@1.2.3"
    remotes: tuple[str, ...]  # "streamable-http https://…"
    status: str | None  # the registry's own: active, deprecated, deleted

    def as_json(self) -> dict[str, Any]:
        return {**self._asdict(), "packages": list(self.packages), "remotes": list(self.remotes)}


def api_base(url: str) -> str:
    base = url.strip().rstrip("/")
    for suffix in ("/v0.1/servers", "/v0/servers", "/v0.1", "/v0"):
        base = base.removesuffix(suffix)
    return base


def search(url: str, query: str, limit: int = 30) -> list[RegistryHit]:
    """At most `limit` servers whose name matches `query`, newest version of each."""
    base, cursor = api_base(url), None
    check_url(base, local=False, what="MCP Registry")
    hits: list[RegistryHit] = []
    for _page in range(MAX_PAGES):
        params = {"search": query, "version": "latest", "limit": min(PAGE, limit - len(hits))}
        data = _page_of(f"{base}/v0.1/servers?{urlencode(params | _cursor(cursor))}", base)
        for index, item in enumerate(data["servers"]):
            hit = _hit(item)
            if hit is None:
                progress.warn(f"{base}: server {index} of a page is malformed; skipped")
            else:
                hits.append(hit)
        cursor = (data.get("metadata") or {}).get("nextCursor")
        if len(hits) >= limit or not isinstance(cursor, str) or not cursor:
            break
    return hits[:limit]


def _cursor(cursor: str | None) -> dict[str, str]:
    return {"cursor": cursor} if cursor else {}


def _page_of(url: str, base: str) -> dict[str, Any]:
    try:
        body = read(url)
    except FetchError as exc:
        raise FetchError(
            f"cannot search the MCP Registry at {base}: {exc.message}",
            hint="check --registry (e.g. https://registry.modelcontextprotocol.io) and the network",
        ) from None
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("servers"), list):
        raise FetchError(
            f"{base} did not answer as an MCP Registry: no 'servers' list in {url}",
            hint="--registry takes the registry's base URL, which serves /v0.1/servers",
        )
    if not isinstance(data.get("metadata", {}), dict):
        data["metadata"] = {}
    return data


def _hit(item: Any) -> RegistryHit | None:
    server = item.get("server") if isinstance(item, dict) else None
    if not isinstance(server, dict) or not isinstance(server.get("name"), str):
        return None
    meta = item.get("_meta")
    official = meta.get(OFFICIAL) if isinstance(meta, dict) else None
    status = official.get("status") if isinstance(official, dict) else None
    return RegistryHit(
        server["name"],
        str(server.get("version") or ""),
        _str(server.get("description")),
        tuple(_package(p) for p in _list(server.get("packages"))),
        tuple(f"{_str(r.get('type'))} {_str(r.get('url'))}" for r in _list(server.get("remotes"))),
        _str(status),
    )


def _list(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _package(package: dict[str, Any]) -> str:
    version = _str(package.get("version"))
    ident = f"{_str(package.get('identifier'))}" + (f"@{version}" if version else "")
    return f"{_str(package.get('registryType'))} {ident}"

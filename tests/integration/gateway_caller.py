"""Test only: `python -m tests.integration.gateway_caller PLUGMAN-ARGS...` runs plugman with one
ASGI layer inside the gateway's HTTP app (behind `--auth token`'s gate, just before the SDK's
session manager) that makes the caller of a request the one its `x-test-caller` and
`x-test-groups` (comma-separated) headers name, as the OIDC gate (identity's part of issue 37)
does from a verified token; it overrides what an auth layer set, the shared token's caller
included. `x-test-groups-raw` hands the groups on as one string, as a sloppy identity layer
might. A request without them keeps what the auth layer set (on this branch: no caller). Plus
what the gatewayAccess tests share: a backend only some groups may use, and the gateway and its
clients, started and stopped in bounds.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
ISSUER = "https://idp.test"

VAULT = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("vault", instructions="The vault keeps the-vault-instructions.")


@server.tool()
def echo(text: str) -> str:
    \"\"\"Return the text, from the vault.\"\"\"
    return f"vault: {text}"


@server.tool()
def unseal() -> str:
    \"\"\"Hand out the vault's key.\"\"\"
    return "the-vault-key"


@server.resource("vault://key", name="key", mime_type="text/plain")
def key() -> str:
    return "the-vault-key"


@server.resource("vault://item/{name}", name="item", mime_type="text/plain")
def item(name: str) -> str:
    return f"the-vault-item-{name}"


@server.prompt()
def confess() -> str:
    \"\"\"Tell every secret.\"\"\"
    return "the-vault-prompt"


server.run()
"""


def _install() -> None:
    from plugman.runtime.gateway import web
    from plugman.runtime.gateway.principal import SCOPE_KEY, Principal

    class Caller(web.McpApp):
        """The innermost layer (whatever auth layers run before it): the caller the headers
        name, in place of whatever an auth layer set."""

        async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                headers = {k.decode(): v.decode() for k, v in scope["headers"]}
                subject = headers.get("x-test-caller")
                if subject is not None:
                    raw = headers.get("x-test-groups-raw")
                    listed = headers.get("x-test-groups", "")
                    groups: Any = raw if raw is not None else tuple(filter(None, listed.split(",")))
                    scope[SCOPE_KEY] = Principal(subject, ISSUER, groups)
            await super().__call__(scope, receive, send)

    web.McpApp = Caller  # type: ignore[misc]


def gateway_argv(project: Path) -> list[str]:
    """This module as the gateway: `plugman mcp serve --transport http` with the test's
    caller layer, up to its `--port`."""
    module = [sys.executable, "-m", "tests.integration.gateway_caller"]
    return [*module, "--project", str(project), "mcp", "serve", "--transport", "http"]


@contextmanager
def serving(tmp_path: Path, home: Path) -> Iterator[tuple[str, str]]:
    """The gateway over HTTP behind `--auth token` with the test's caller layer: its URL and
    token; stopped, and checked to have printed nothing and left nothing, on exit."""
    from tests.integration.http_gateway import environment, http_gateway
    from tests.integration.test_gateway import leftovers
    from tests.integration.test_gateway_auth import token_of

    project = tmp_path / "project"
    env = environment(home, PYTHONPATH=str(REPO), PLUGMAN_GATEWAY_FIRST_LIST_WAIT="30")
    options = ("--auth", "token", "--stateless")
    with http_gateway(project, env, *options, command=gateway_argv(project)) as found:
        yield found.url, token_of(home)
    assert leftovers(home, set()) == []


@asynccontextmanager
async def caller(
    url: str, token: str, groups: str | None, *, raw: bool = False, subject: str = "alice"
) -> AsyncIterator[Any]:
    """An SDK client calling as `subject` in `groups` (comma-separated; None: no caller)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"}
    if groups is not None:
        headers["x-test-caller"] = subject
        headers["x-test-groups-raw" if raw else "x-test-groups"] = groups
    web = httpx2.AsyncClient(headers=headers, timeout=60)
    async with web, Client(streamable_http_client(url, http_client=web)) as client:
        yield client


async def names(client: Any, kind: str = "tools") -> set[str]:
    if kind == "tools":
        return {t.name for t in (await client.list_tools(cache_mode="refresh")).tools}
    if kind == "prompts":
        return {p.name for p in (await client.list_prompts()).prompts}
    if kind == "resources":
        return {str(r.uri) for r in (await client.list_resources()).resources}
    listed = await client.list_resource_templates()
    return {t.uri_template for t in listed.resource_templates}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


if __name__ == "__main__":
    _install()
    from plugman.cli import main

    os.environ.pop("PYTHONPATH", None)  # not for the backends
    raise SystemExit(main())

"""`plugman mcp serve --transport http` serving a team, for real: subprocess gateways with the
sample notes server as their backend, real HTTP clients (httpx2 and the mcp SDK's).

- On an address that is not loopback (this machine's own, from `hostname -I`; else 0.0.0.0,
  reached through 127.0.0.1) the gateway refuses to start without `--auth token`.
- With it, a request without the token (or with another) gets 401 and `WWW-Authenticate:
  Bearer`; the SDK client sending `Authorization: Bearer <token>` lists and calls the tools.
- On loopback, a request naming a foreign Host gets 421 and a foreign Origin 403.
- The token is in no output, log or file but the secret store's.
- A token given in PLUGMAN_GATEWAY_TOKEN is the one clients must send, and the gateway's
  backends do not see that variable.
- Two `--stateless` gateways on two ports, one config: a client alternating between them is
  answered by both, whichever of them saw its `initialize`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import cycle
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.integration.http_gateway import environment, http_gateway, refused_start
from tests.integration.test_gateway import (
    START_TIMEOUT,
    configure,
    leftovers,
    notes,
    plugman_argv,
    text,
)

TOOLS = notes("notes__")


def outside_address() -> tuple[str, str]:
    """(address to listen on, address to connect to): one of this machine's own non-loopback
    addresses, else the wildcard reached through loopback."""
    import ipaddress

    try:
        found = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=10)
        words = found.stdout.split()
    except (OSError, subprocess.SubprocessError):
        words = []
    for word in words:
        ip = ipaddress.ip_address(word)
        if ip.version == 4 and not ip.is_loopback and not ip.is_link_local:
            return word, word
    return "0.0.0.0", "127.0.0.1"


ENVY = """
import os
from mcp.server.mcpserver import MCPServer

server = MCPServer("envy")


@server.tool()
def has(name: str) -> str:
    \"\"\"Whether this server's environment has the variable `name`.\"\"\"
    return "yes" if name in os.environ else "no"


server.run()
"""


@contextmanager
def serving(
    tmp_path: Path, home: Path, *options: str, env: dict[str, str] | None = None
) -> Iterator[tuple[str, list[str]]]:
    """A gateway over HTTP: its URL and the lines it said (with `--auth token`, the token
    line written with the first), stopped (and checked) on exit."""
    more = 1 if "token" in options else 0
    running = environment(home, **(env or {}))
    with http_gateway(tmp_path / "project", running, *options, more_lines=more) as found:
        yield found.url, found.said


def token_of(home: Path) -> str:
    shown = subprocess.run(
        plugman_argv("mcp", "token", "--show"),
        capture_output=True,
        text=True,
        env=environment(home),
        timeout=60,
        check=True,
    )
    return shown.stdout.strip()


def post(url: str, headers: dict[str, str] | None = None) -> Any:
    import httpx2

    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    accept = {"accept": "application/json, text/event-stream"}
    return httpx2.post(url, json=body, headers={**accept, **(headers or {})}, timeout=30)


def lists_and_adds(url: str, token: str, mode: str) -> None:
    """The SDK's client in `mode`, sending `token`: it lists every notes tool, adds 4 and 5."""

    async def session() -> None:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        with anyio.fail_after(120):
            web = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
            transport = streamable_http_client(url, http_client=web)
            async with web, Client(transport, mode=mode) as client:
                assert await listed(client) == TOOLS
                added = await client.call_tool("notes__add", {"a": 4, "b": 5})
                assert text(added) == "9"

    anyio.run(session)


async def listed(client: Any) -> set[str]:
    """The tool names, once every notes tool is there (the backend may still be starting)."""
    end = anyio.current_time() + START_TIMEOUT
    while True:
        names = {tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools}
        if names >= TOOLS or anyio.current_time() > end:
            return names
        await anyio.sleep(0.2)


def test_refused_without_auth_on_an_address_that_is_not_loopback(
    tmp_path: Path, isolated_home: Path
) -> None:
    configure(isolated_home, None, {})
    listen, _ = outside_address()
    done = refused_start(tmp_path, environment(isolated_home), "--host", listen)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith(f"error: --host: refusing to serve HTTP on {listen} without")
    assert "hint: add --auth token" in done.stderr
    assert "listening" not in done.stderr and "Traceback" not in done.stderr
    assert not (isolated_home / "state").exists(), "it started something (logs, state)"
    assert leftovers(isolated_home, set()) == []


def test_a_token_keeps_out_whoever_does_not_send_it(
    tmp_path: Path, isolated_home: Path, secret_scan: list[str]
) -> None:
    configure(isolated_home, None, {})
    listen, reach = outside_address()
    with serving(tmp_path, isolated_home, "--host", listen, "--auth", "token") as (url, said):
        url = url.replace(listen, reach, 1)
        token = token_of(isolated_home)
        assert said[1].startswith("clients must send a bearer token (sha256:"), said
        for headers in ({}, {"authorization": f"Bearer {token}x"}, {"authorization": token}):
            refused = post(url, headers)
            assert refused.status_code == 401, headers
            assert refused.headers["www-authenticate"].startswith("Bearer"), refused.headers
            assert token not in refused.text

        lists_and_adds(url, token, "legacy")
    secret_scan.extend(said)
    assert not [line for line in said if token in line]
    holding = [
        str(path)
        for folder in (isolated_home, tmp_path)
        for path in folder.rglob("*")
        if path.is_file() and path.name != "secrets.json" and token.encode() in path.read_bytes()
    ]
    assert holding == [], "the token is stored outside the secret store"
    assert token in (isolated_home / "config" / "secrets.json").read_text()


def test_a_token_from_the_environment_is_not_passed_on(tmp_path: Path, isolated_home: Path) -> None:
    script = tmp_path / "envy.py"
    script.write_text(ENVY)
    configure(isolated_home, None, {}, {"envy": script})
    token = "from-the-environment-" + "z" * 30
    given = {"PLUGMAN_GATEWAY_TOKEN": token}
    with serving(tmp_path, isolated_home, "--auth", "token", env=given) as (url, _):
        assert post(url).status_code == 401
        assert post(url, {"authorization": f"Bearer {token}"}).status_code == 200

        async def session() -> None:
            import httpx2
            from mcp import Client
            from mcp.client.streamable_http import streamable_http_client

            with anyio.fail_after(120):
                web = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
                transport = streamable_http_client(url, http_client=web)
                async with web, Client(transport, mode="legacy") as client:
                    end = anyio.current_time() + START_TIMEOUT
                    while "envy__has" not in {
                        t.name for t in (await client.list_tools(cache_mode="refresh")).tools
                    }:
                        assert anyio.current_time() < end, "the envy backend did not come up"
                        await anyio.sleep(0.2)
                    for name, seen in (("PLUGMAN_HOME", "yes"), ("PLUGMAN_GATEWAY_TOKEN", "no")):
                        result = await client.call_tool("envy__has", {"name": name})
                        assert text(result) == seen, name

        anyio.run(session)
    assert not (isolated_home / "config" / "secrets.json").exists()


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2"])
def test_loopback_refuses_a_foreign_host_or_origin(
    tmp_path: Path, isolated_home: Path, host: str
) -> None:
    configure(isolated_home, None, {})
    with serving(tmp_path, isolated_home, "--host", host) as (url, _):
        port = url.rsplit(":", 1)[1].split("/")[0]
        assert post(url).status_code == 200
        assert post(url, {"host": f"localhost:{port}"}).status_code == 200
        assert post(url, {"host": f"evil.example:{port}"}).status_code == 421
        assert post(url, {"host": f"192.0.2.77:{port}"}).status_code == 421
        assert post(url, {"origin": "http://evil.example"}).status_code == 403
        assert post(url, {"origin": f"http://{host}:{port}"}).status_code == 200


def test_two_stateless_gateways_answer_a_client_that_alternates(
    tmp_path: Path, isolated_home: Path
) -> None:
    import httpx2

    configure(isolated_home, None, {})
    listen, reach = outside_address()
    options = ("--host", listen, "--auth", "token", "--stateless")
    with (
        serving(tmp_path, isolated_home, *options) as (one, _),
        serving(tmp_path, isolated_home, *options) as (two, _),
    ):
        urls = [one.replace(listen, reach, 1), two.replace(listen, reach, 1)]
        token = token_of(isolated_home)
        answered: dict[str, list[int]] = {url: [] for url in urls}

        class Alternating(httpx2.AsyncBaseTransport):
            """Each request to the next gateway in turn, as a round-robin balancer would."""

            def __init__(self) -> None:
                self.inner = httpx2.AsyncHTTPTransport()
                self.turns = cycle(urls)

            async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
                target = httpx2.URL(next(self.turns))
                request.url = request.url.copy_with(host=target.host, port=target.port)
                request.headers["host"] = f"{target.host}:{target.port}"
                response = await self.inner.handle_async_request(request)
                answered[str(target)].append(response.status_code)
                return response

            async def aclose(self) -> None:
                await self.inner.aclose()

        async def session(mode: str) -> None:
            from mcp import Client
            from mcp.client.streamable_http import streamable_http_client

            with anyio.fail_after(120):
                headers = {"Authorization": f"Bearer {token}"}
                web = httpx2.AsyncClient(headers=headers, transport=Alternating())
                transport = streamable_http_client(urls[0], http_client=web)
                async with web, Client(transport, mode=mode) as client:
                    assert await listed(client) == TOOLS
                    for a in range(4):
                        added = await client.call_tool("notes__add", {"a": a, "b": 1})
                        assert text(added) == str(a + 1)

        for mode in ("legacy", "auto"):
            anyio.run(session, mode)
            posts = {url: [s for s in codes if s != 405] for url, codes in answered.items()}
            assert all(len(codes) >= 3 for codes in posts.values()), (mode, answered)
            assert all(code < 300 for codes in posts.values() for code in codes), answered
            for codes in answered.values():
                codes.clear()

"""A gateway fleet as deploy/ describes it, for real on 127.0.0.1: subprocess replicas of
`plugman mcp serve --transport http`, the real HAProxy and nginx running the examples in
deploy/ (only addresses and ports substituted), the mcp SDK's client.

- Stateless is the default over HTTP: a 2025-era client (the SDK's `legacy` mode: initialize,
  Mcp-Session-Id) whose requests alternate between two replicas started without a session
  flag is answered by both; with `--stateful` the same client fails on the replica that did not
  see its `initialize` (what the docs' hashing option is for).
- Each replica announces its mode and config digest; two replicas of one config say the same.
- deploy/haproxy/haproxy.cfg and deploy/nginx/nginx.conf pass `haproxy -c` and `nginx -t`
  (every commented option too), and really balance: calls through each succeed and both
  replicas serve them (a backend that says which replica's environment it runs in). The
  HAProxy example's stateful lines, uncommented, keep a 2025-era client on its `--stateful`
  replica.
- `mcp serve --frozen` installs exactly plugman.lock into a fresh PLUGMAN_HOME and serves it
  (the same digest on two fresh replicas), and refuses to serve when plugman.lock and
  plugman.toml disagree.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from itertools import cycle
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.integration.http_gateway import Gateway, environment, http_gateway, refused_start
from tests.integration.test_gateway import (
    REPO,
    START_TIMEOUT,
    configure,
    free_port,
    notes,
    plugman_argv,
    text,
)
from tests.integration.test_gateway_auth import token_of

HAPROXY = REPO / "deploy" / "haproxy" / "haproxy.cfg"
NGINX = REPO / "deploy" / "nginx" / "nginx.conf"
SAMPLES = REPO / "sample-plugins"
NAMES = ("one", "two")
CALLS = 12  # per client: enough for both replicas, bounded
SERVED = 2 * (CALLS // 3)  # of them, `whoami` calls

WHO = """
import os
from mcp.server.mcpserver import MCPServer

server = MCPServer("who")


@server.tool()
def whoami() -> str:
    \"\"\"The replica whose gateway started this server.\"\"\"
    return os.environ.get("REPLICA", "?")


server.run()
"""
TOOLS = notes("notes__") | {"who__whoami"}


def digest(found: Gateway) -> str:
    """The config digest a replica said it serves."""
    line = next(line for line in found.said if ", config sha256:" in line)
    return line.rsplit(" ", 1)[1]


@contextmanager
def replica(
    project: Path, home: Path, *options: str, name: str = "one", path: str | None = None
) -> Iterator[Gateway]:
    """A gateway over HTTP on a free loopback port, until its `mode, config DIGEST` line;
    stopped (and checked) on exit."""
    env = environment(home, REPLICA=name, **({"PATH": path} if path else {}))
    with http_gateway(project, env, *options, until=", config sha256:") as found:
        yield found


def fleet_config(home: Path, tmp_path: Path) -> Path:
    """User scope: the notes server and `who` over stdio; the (empty) project folder."""
    (tmp_path / "who.py").write_text(WHO)
    configure(home, None, {}, {"who": tmp_path / "who.py"})
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return project


@dataclass
class Tally:
    """Which replica answered each `whoami`, and every HTTP status seen."""

    served: list[str] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)


async def calls(url: str, token: str | None, mode: str, tally: Tally, alternate: list[str]) -> None:
    """List, then CALLS calls (whoami and add, each answer checked) through `url`, or
    alternating between the `alternate` URLs as a round-robin balancer would."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    class Alternating(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self.inner = httpx2.AsyncHTTPTransport()
            self.turns = cycle(alternate)

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            if alternate:
                target = httpx2.URL(next(self.turns))
                request.url = request.url.copy_with(host=target.host, port=target.port)
                request.headers["host"] = f"{target.host}:{target.port}"
            response = await self.inner.handle_async_request(request)
            tally.statuses.append(response.status_code)
            return response

        async def aclose(self) -> None:
            await self.inner.aclose()

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with anyio.fail_after(180):
        web = httpx2.AsyncClient(headers=headers, transport=Alternating(), timeout=60)
        async with web, Client(streamable_http_client(url, http_client=web), mode=mode) as client:
            await listed(client)
            for a in range(CALLS // 3):  # two in a row: round robin sends them apart
                tally.served.append(text(await client.call_tool("who__whoami", {})))
                tally.served.append(text(await client.call_tool("who__whoami", {})))
                added = await client.call_tool("notes__add", {"a": a, "b": 1})
                assert text(added) == str(a + 1)


async def listed(client: Any) -> None:
    """Every tool listed, once both backends are up (a replica may still be starting them)."""
    end = anyio.current_time() + START_TIMEOUT
    while True:
        names = {tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools}
        if names >= TOOLS:
            return
        assert anyio.current_time() < end, names
        await anyio.sleep(0.2)


# --- stateless by default -------------------------------------------------------------------


@pytest.mark.slow
def test_stateless_by_default_a_2025_client_moves_between_replicas(
    tmp_path: Path, isolated_home: Path
) -> None:
    project = fleet_config(isolated_home, tmp_path)
    with (
        replica(project, isolated_home, name="one") as one,
        replica(project, isolated_home, name="two") as two,
    ):
        assert one.said[-1].startswith("stateless, config sha256:"), one.said
        assert digest(one) == digest(two), "one config, one digest"
        for mode in ("legacy", "auto"):  # 2025-era (initialize, sessions), then 2026-07-28
            tally = Tally()
            anyio.run(calls, one.url, None, mode, tally, [one.url, two.url])
            assert sorted(set(tally.served)) == list(NAMES), (mode, tally)
            assert len(tally.served) == SERVED
            assert all(status < 300 for status in tally.statuses if status != 405), tally


@pytest.mark.slow
def test_stateful_replicas_lose_a_2025_client_that_moves(
    tmp_path: Path, isolated_home: Path
) -> None:
    """What `--stateful` is, and why the balancer must keep a session on its replica."""
    project = fleet_config(isolated_home, tmp_path)
    with (
        replica(project, isolated_home, "--stateful", name="one") as one,
        replica(project, isolated_home, "--stateful", name="two") as two,
    ):
        assert one.said[-1].startswith("stateful, config sha256:"), one.said
        tally = Tally()
        failed = []
        try:
            anyio.run(calls, one.url, None, "legacy", tally, [one.url, two.url])
        except Exception as exc:  # the SDK's own error, whichever: the failure is the point
            failed.append(exc)
        assert failed, "a 2025-era client moved between stateful replicas without a failure"
        assert 404 in tally.statuses, tally  # "Session not found" on the other replica


def test_stateful_and_stateless_exclude_each_other(tmp_path: Path) -> None:
    argv = plugman_argv("--project", str(tmp_path), "mcp", "serve")
    for options, said in (
        (["--transport", "http", "--stateful", "--stateless"], "exclude each other"),
        (["--stateful"], "--stateful applies only to --transport http"),
    ):
        done = subprocess.run([*argv, *options], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and said in done.stderr, done.stderr
        assert done.stdout == ""


# --- the balancer examples ------------------------------------------------------------------


def listening(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    end = time.monotonic() + 30
    while True:
        assert proc.poll() is None, log.read_text()
        assert time.monotonic() < end, f"nothing listens on {port}: {log.read_text()}"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)


def readyz(port: int) -> int:
    """What a replica answers on /readyz without a token (the balancer's check)."""
    import httpx2

    return httpx2.get(f"http://127.0.0.1:{port}/readyz", timeout=10).status_code


def haproxy_config(ports: list[int], port: int, variant: str | None) -> str:
    found = HAPROXY.read_text()
    servers = "    server replica1 10.0.0.11:8700\n    server replica2 10.0.0.12:8700\n"
    assert servers in found and "    bind :8080\n" in found
    ours = "".join(f"    server r{i} 127.0.0.1:{p}\n" for i, p in enumerate(ports))
    found = found.replace(servers, ours).replace("    bind :8080\n", f"    bind 127.0.0.1:{port}\n")
    if variant:
        found = found.replace(f"#{variant}: ", "")
    if readyz(ports[0]) != 200:
        # /readyz is served by the health layer (issue 37's observe part); until a replica
        # has it, the check accepts any HTTP answer from a live replica.
        check = "    http-check expect status 200\n"
        assert check in found
        found = found.replace(check, "    http-check expect rstatus ^[1-5][0-9][0-9]$\n")
    return found


def nginx_config(ports: list[int], port: int, variant: str | None, prefix: Path) -> str:
    found = NGINX.read_text()
    servers = (
        "        server 10.0.0.11:8700 max_fails=1 fail_timeout=5s;\n"
        "        server 10.0.0.12:8700 max_fails=1 fail_timeout=5s;\n"
    )
    pid = "pid /var/run/nginx-plugman.pid;\n"
    assert servers in found and "        listen 8080;\n" in found and pid in found
    ours = "".join(f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=5s;\n" for p in ports)
    found = found.replace(servers, ours)
    found = found.replace("        listen 8080;\n", f"        listen 127.0.0.1:{port};\n")
    found = found.replace(pid, f"pid {prefix / 'nginx.pid'};\n")
    return found.replace(f"#{variant}: ", "") if variant else found


@contextmanager
def haproxy(tmp_path: Path, ports: list[int], variant: str | None) -> Iterator[str]:
    """The HAProxy example in front of `ports`, once its checks have every replica up."""
    port = free_port()
    config = tmp_path / "haproxy.cfg"
    stats = tmp_path / "haproxy.sock"  # the test's own view of the checks, added here
    found = haproxy_config(ports, port, variant)
    config.write_text(found.replace("global\n", f"global\n    stats socket {stats} mode 600\n", 1))
    log = tmp_path / "haproxy.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            ["haproxy", "-db", "-f", str(config)], stdin=subprocess.DEVNULL, stdout=out, stderr=out
        )
    try:
        listening(port, proc, log)
        end = time.monotonic() + START_TIMEOUT
        while (up := servers_up(stats)) < len(ports):
            assert time.monotonic() < end, f"{up} of {len(ports)} up: {log.read_text()}"
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def servers_up(stats: Path) -> int:
    """How many servers of the `plugman` backend HAProxy's checks have UP (`show stat`)."""
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(5)
            sock.connect(str(stats))
            sock.sendall(b"show stat\n")
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
    except OSError:
        return 0
    rows = [line.split(",") for line in answer.decode().splitlines() if line[:1] != "#"]
    status = 17  # `show stat`'s CSV: pxname, svname, ..., status (the 18th field)
    return sum(
        1
        for row in rows
        if len(row) > status
        and row[0] == "plugman"
        and row[1] not in ("FRONTEND", "BACKEND")
        and row[status] == "UP"
    )


@contextmanager
def nginx(tmp_path: Path, ports: list[int], variant: str | None) -> Iterator[str]:
    port = free_port()
    prefix = tmp_path / "nginx"
    prefix.mkdir()
    config = prefix / "nginx.conf"
    config.write_text(nginx_config(ports, port, variant, prefix))
    log = tmp_path / "nginx.log"
    argv = ["nginx", "-p", str(prefix), "-e", "stderr", "-c", str(config)]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*argv, "-g", "daemon off;"], stdin=subprocess.DEVNULL, stdout=out, stderr=out
        )
    try:
        listening(port, proc, log)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("variant", [None, "stateful", "limits"])
def test_the_examples_are_valid(tmp_path: Path, variant: str | None) -> None:
    """`haproxy -c` and `nginx -t` accept each example as shipped and with each commented
    option uncommented (only the ports substituted)."""
    cfg = tmp_path / "haproxy.cfg"
    found = HAPROXY.read_text().replace(f"#{variant}: ", "") if variant else HAPROXY.read_text()
    cfg.write_text(found)
    checked = subprocess.run(["haproxy", "-c", "-f", str(cfg)], capture_output=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    prefix = tmp_path / "nginx"
    prefix.mkdir()
    conf = prefix / "nginx.conf"
    conf.write_text(nginx_config([free_port(), free_port()], free_port(), variant, prefix))
    argv = ["nginx", "-t", "-p", str(prefix), "-e", "stderr", "-c", str(conf)]
    tested = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert tested.returncode == 0, tested.stderr


def test_the_examples_retry_only_on_connection_failure() -> None:
    """The retry rules docs/gateway-fleet.md explains: nothing that could resend a call."""
    cfg = HAPROXY.read_text()
    active = [line.split("#")[0].strip() for line in cfg.splitlines()]
    assert "retry-on conn-failure" in active
    assert not any(
        word in line
        for line in active
        if line.startswith("retry-on")
        for word in ("empty-response", "response-timeout", "junk-response", "all-retryable")
    )
    assert not re.search(r"^\s*retry-on .*\b[0-9]{3}\b", cfg, re.M)
    assert "option http-buffer-request" not in active
    conf = [line.split("#")[0].strip() for line in NGINX.read_text().splitlines()]
    nexts = [line for line in conf if line.startswith("proxy_next_upstream ")]
    assert nexts == ["proxy_next_upstream error;"], nexts
    assert "proxy_buffering off;" in conf and "proxy_request_buffering off;" in conf


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "flags", "variant", "mode"),
    [
        ("haproxy", (), None, "auto"),
        ("haproxy", (), None, "legacy"),
        ("haproxy", ("--stateful",), "stateful", "legacy"),
        ("nginx", (), None, "auto"),
    ],
    ids=["haproxy-2026", "haproxy-2025", "haproxy-stateful-2025", "nginx-2026"],
)
def test_the_balancer_examples_balance_two_token_replicas(
    tmp_path: Path,
    isolated_home: Path,
    kind: str,
    flags: tuple[str, ...],
    variant: str | None,
    mode: str,
) -> None:
    project = fleet_config(isolated_home, tmp_path)
    token = token_of(isolated_home)
    options = ("--auth", "token", *flags)
    with ExitStack() as stack:
        replicas = [
            stack.enter_context(replica(project, isolated_home, *options, name=name))
            for name in NAMES
        ]
        balance = haproxy if kind == "haproxy" else nginx
        url = stack.enter_context(balance(tmp_path, [r.port for r in replicas], variant))
        tally = Tally()
        clients = 1 if variant is None else 4  # sessions stick, each to one replica
        for _ in range(clients):
            anyio.run(calls, url, token, mode, tally, [])
        assert len(tally.served) == clients * SERVED, tally
        assert all(status < 300 for status in tally.statuses if status != 405), tally
        balancer_log = tmp_path / f"{kind}.log"
        said = balancer_log.read_text() if balancer_log.exists() else ""
        if variant is None:
            assert sorted(set(tally.served)) == list(NAMES), (tally, said)  # round robin: both
        else:
            for start in range(0, len(tally.served), SERVED):
                session = tally.served[start : start + SERVED]
                assert len(set(session)) == 1, tally  # a session stays on its replica
        unauthorized = stack.enter_context(_no_token(url))
        assert unauthorized == 401, "the balancer passes the token check through"


@contextmanager
def _no_token(url: str) -> Iterator[int]:
    import httpx2

    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"accept": "application/json, text/event-stream"}
    yield httpx2.post(url, json=body, headers=headers, timeout=30).status_code


# --- the same config on every replica: --frozen ---------------------------------------------


def plugman(project: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        plugman_argv("--project", str(project), *args),
        capture_output=True,
        text=True,
        env=environment(home),
        timeout=120,
    )


async def plugin_add(url: str) -> str:
    """2 + 3 through the plugin's notes server, once the gateway lists it."""
    from mcp import Client

    with anyio.fail_after(120):
        async with Client(url) as client:
            end = anyio.current_time() + START_TIMEOUT
            while True:
                names = {
                    tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools
                }
                adds = [name for name in names if name.endswith("notes__add")]
                if adds:
                    return text(await client.call_tool(adds[0], {"a": 2, "b": 3}))
                assert anyio.current_time() < end, names
                await anyio.sleep(0.2)


@pytest.mark.slow
def test_frozen_installs_the_lock_and_refuses_a_disagreement(
    tmp_path: Path, isolated_home: Path
) -> None:
    project = tmp_path / "project"
    shutil.copytree(SAMPLES, project / "marketplace", ignore=shutil.ignore_patterns("invalid"))
    made = tmp_path / "author"
    for args in (
        ("marketplace", "add", "./marketplace", "--scope", "project"),
        ("install", "notes-server", "--scope", "project"),
    ):
        done = plugman(project, made, *args)
        assert done.returncode == 0, done.stderr
    digests = []
    for name in NAMES:  # two fresh replicas: nothing installed in their PLUGMAN_HOME
        home = tmp_path / f"replica-{name}"
        store = home / "data" / "store"
        with replica(project, home, "--frozen", name=name) as started:
            digests.append(digest(started))
            assert any(store.iterdir()), "--frozen installed nothing"
        # what the lock pins is installed; its server waits for this replica's approval
        approved = plugman(project, home, "trust", "approve", "plugin:notes-server:notes")
        assert approved.returncode == 0, approved.stderr
        # the plugin's server runs `python3`: this venv's, which has the mcp SDK
        path = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
        with replica(project, home, "--frozen", name=name, path=path) as started:
            assert anyio.run(plugin_add, started.url) == "5"
            digests.append(digest(started))
    assert digests[0] == digests[2] and digests[1] == digests[3], "one config, one digest"
    assert digests[0] != digests[1], "an approved server is served: another config"

    toml = project / "plugman.toml"
    kept = toml.read_text()
    for changed, said in (
        (kept.replace('"*"', '">=2"'), "plugman.toml wants notes-server@plugman-samples >=2"),
        (kept + '"other@plugman-samples" = "*"\n', "which plugman.lock does not pin"),
    ):
        toml.write_text(changed)
        home = tmp_path / "replica-three"
        refused = refused_start(project, environment(home), "--frozen", timeout=120)
        assert refused.returncode == 1, refused.stderr
        assert "plugman.lock and plugman.toml disagree" in refused.stderr, refused.stderr
        assert said in refused.stderr and "plugman lock" in refused.stderr
        assert refused.stdout == "" and "listening" not in refused.stderr
        assert not (home / "data" / "store").exists(), "installed before refusing"
    toml.write_text(kept)

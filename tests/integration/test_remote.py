"""Remote servers behave as in Claude Code: the `ws` transport, `headersHelper`, an expired HTTP
session re-established, three connection errors in a row reconnecting at once, and a server's
`instructions` reaching the gateway's clients.

The remote server is tests/servers/remote_server.py (the mcp SDK, on 127.0.0.1), started as a
subprocess; the gateway is `plugman mcp serve` as a subprocess, with a real client.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.integration.test_gateway import (
    START_TIMEOUT,
    free_port,
    gateway,
    poll,
    text,
    wait_for_port,
)
from tests.integration.test_probe import run_probe

SERVER = Path(__file__).resolve().parents[1] / "servers" / "remote_server.py"
KEY = "remote-key-5d1c9e0a7b"  # planted: must appear in no output
INSTRUCTIONS = "Add numbers with `add`. Never ask for more than two at once."


class Remote:
    """remote_server.py on a fixed port, which a test may kill and start again."""

    def __init__(self, tmp: Path, transport: str, key: str | None, port: int | None = None):
        self.port = port or free_port()
        self.transport, self.key, self.log = transport, key, tmp / f"remote-{transport}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        scheme = "ws" if self.transport == "ws" else "http"
        return f"{scheme}://127.0.0.1:{self.port}/" + ("" if self.transport == "ws" else "mcp")

    def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if k != "REMOTE_API_KEY"}
        if self.key is not None:
            env["REMOTE_API_KEY"] = self.key
        argv = [sys.executable, str(SERVER), "--port", str(self.port)]
        argv += ["--transport", self.transport, "--instructions", INSTRUCTIONS]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(argv, env=env, stdout=log, stderr=log)
        wait_for_port(self.port, self.proc, self.log)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def test(self, method: str, path: str) -> dict[str, Any]:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", method=method)
        with urllib.request.urlopen(request, timeout=START_TIMEOUT) as answer:
            found: dict[str, Any] = json.loads(answer.read())
            return found


@contextmanager
def remote(tmp: Path, transport: str = "http", key: str | None = None) -> Iterator[Remote]:
    server = Remote(tmp, transport, key)
    server.start()
    try:
        yield server
    finally:
        server.kill()


def user_servers(home: Path, servers: dict[str, dict[str, Any]]) -> None:
    """The user scope's plugman.toml with these `[mcp_servers.<name>]` tables."""
    lines = []
    for name, entry in servers.items():
        lines.append(f"[mcp_servers.{name}]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in entry.items()]
        lines.append("")
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "plugman.toml").write_text("\n".join(lines))


def helper_printing(tmp: Path, body: str) -> str:
    """A headersHelper command: a shell script with `body`."""
    script = tmp / f"helper-{abs(hash(body))}.sh"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(0o755)
    return str(script)


# --- ws ---------------------------------------------------------------------------------------


def test_ws_transport_connects_lists_and_is_refused_without_its_key(
    tmp_path: Path, isolated_home: Path
) -> None:
    with remote(tmp_path, "ws", key=KEY) as server:
        found = {
            r.name: r
            for r in run_probe(
                {
                    "ws": {"type": "ws", "url": server.url, "headers": {"X-Api-Key": KEY}},
                    "keyless": {"type": "ws", "url": server.url},
                },
                START_TIMEOUT,
            )
        }
    assert found["ws"].state == "connected", found["ws"].reason
    assert [tool.name for tool in found["ws"].tools] == ["add"]
    assert found["keyless"].state == "needs-auth", found["keyless"].reason


def test_the_gateway_calls_a_ws_backend(tmp_path: Path, isolated_home: Path) -> None:
    with remote(tmp_path, "ws") as server:
        user_servers(isolated_home, {"sock": {"type": "ws", "url": server.url}})

        async def session() -> None:
            async with gateway(tmp_path) as client:
                names = await poll(client, lambda n: "sock__add" in n, START_TIMEOUT)
                assert "sock__add" in names
                result = await client.call_tool("sock__add", {"a": 2, "b": 40})
                assert not result.is_error, text(result)
                assert text(result) == "42"

        anyio.run(session)


# --- headersHelper ----------------------------------------------------------------------------


def test_headers_helper_supplies_the_key_and_its_failures_say_why(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REMOTE_TEST_KEY", KEY)
    good = helper_printing(tmp_path, 'printf \'{"X-Api-Key": "%s"}\' "$REMOTE_TEST_KEY"')
    cases = {
        "helped": good,
        "failing": helper_printing(tmp_path, "echo 'vault is sealed' >&2; exit 3"),
        "chatty": helper_printing(tmp_path, f"echo 'X-Api-Key: {KEY}'"),
        "listy": helper_printing(tmp_path, f"echo '[\"{KEY}\"]'"),
        "missing": str(tmp_path / "no-such-helper"),
    }
    with remote(tmp_path, "http", key=KEY) as server:
        servers = {
            name: {
                "type": "http",
                "url": server.url,
                "headers": {"X-Api-Key": "stale"},
                "headersHelper": command,
            }
            for name, command in cases.items()
        }
        found = {r.name: r for r in run_probe(servers, START_TIMEOUT)}
    assert found["helped"].state == "connected", found["helped"].reason
    assert [tool.name for tool in found["helped"].tools] == ["add"]
    reasons = {name: found[name].reason or "" for name in cases if name != "helped"}
    assert reasons["failing"] == "headersHelper exited with code 3: vault is sealed"
    assert reasons["chatty"].startswith("headersHelper did not print a JSON object")
    assert reasons["listy"] == "headersHelper printed JSON list, not an object"
    assert reasons["missing"].startswith("headersHelper exited with code 127")
    assert {found[name].state for name in reasons} == {"failed"}
    assert not [name for name, reason in reasons.items() if KEY in reason]


def test_a_plugin_or_project_helper_runs_without_credential_variables(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same helper passes the key on from REMOTE_TEST_KEY for a user's server, and gets no
    such variable for a plugin's or a project's: that server is refused (401)."""
    from plugman.runtime.transport.headers import scrubbed

    monkeypatch.setenv("REMOTE_TEST_KEY", KEY)
    helper = helper_printing(tmp_path, 'printf \'{"X-Api-Key": "%s"}\' "${REMOTE_TEST_KEY:-none}"')
    with remote(tmp_path, "http", key=KEY) as server:
        entry = {"type": "http", "url": server.url, "headersHelper": helper}
        found = {
            r.name: r
            for r in run_probe(
                {"mine": entry, "plugin:theirs:web": entry},
                START_TIMEOUT,
                shared=frozenset({"plugin:theirs:web"}),
            )
        }
    assert found["mine"].state == "connected", found["mine"].reason
    assert found["plugin:theirs:web"].state == "needs-auth", found["plugin:theirs:web"].reason
    kept = scrubbed({"PATH": "/bin", "GITHUB_TOKEN": "t", "PGPASSWORD": "p", "MY_API_KEY": "k"})
    assert kept == {"PATH": "/bin", "PGPASSWORD": "p"}


def test_a_headers_helper_key_through_the_cli_never_shows(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.integration.test_gateway import plugman_argv

    monkeypatch.setenv("REMOTE_TEST_KEY", KEY)
    helper = helper_printing(tmp_path, 'printf \'{"X-Api-Key": "%s"}\' "$REMOTE_TEST_KEY"')
    with remote(tmp_path, "http", key=KEY) as server:
        entry = {"type": "http", "url": server.url, "headersHelper": helper}
        user_servers(isolated_home, {"keyed": entry})
        project = tmp_path / "project"
        project.mkdir()
        argv = plugman_argv("--project", str(project), "mcp", "probe", "--json")
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    servers = {s["name"]: s for s in report["servers"]}
    assert servers["keyed"]["state"] == "connected", servers["keyed"]
    assert KEY not in done.stdout + done.stderr
    assert not [p for p in isolated_home.rglob("*") if p.is_file() and KEY in _read(p)]


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace")


# --- sessions, reconnection, instructions ------------------------------------------------------


def test_an_expired_session_is_initialized_again_and_the_call_goes_through(
    tmp_path: Path, isolated_home: Path
) -> None:
    with remote(tmp_path, "http") as server:
        user_servers(isolated_home, {"web": {"type": "http", "url": server.url}})

        async def session() -> None:
            async with gateway(tmp_path) as client:
                await poll(client, lambda n: "web__add" in n, START_TIMEOUT)
                first = await client.call_tool("web__add", {"a": 1, "b": 2})
                assert text(first) == "3"
                assert server.test("GET", "/test/stats")["initializes"] == 1
                for round_ in range(3):  # the server forgets its sessions, as on a restart
                    server.test("POST", "/test/forget")
                    again = await client.call_tool("web__add", {"a": round_, "b": 10})
                    assert not again.is_error, text(again)
                    assert text(again) == str(round_ + 10)
                assert server.test("GET", "/test/stats")["initializes"] == 4
                assert "web__add" in await poll(client, lambda n: True, 0)

        anyio.run(session)


def test_a_call_retries_once_on_an_expired_session(tmp_path: Path, isolated_home: Path) -> None:
    """No ping in between (ping_every is an hour): the call itself meets the 404 and is sent
    again on a new session; a second 404 is the call's error, said plainly."""
    from plugman.runtime.gateway.backends import Backend
    from plugman.runtime.gateway.forward import UnansweredError, send
    from plugman.runtime.gateway.health import Health

    async def ignore(backend: Backend, kinds: frozenset[str]) -> None:
        return None

    async def add(client: Any) -> Any:
        return await client.call_tool("add", {"a": 20, "b": 22})

    with remote(tmp_path, "http") as server, (tmp_path / "web.log").open("w") as errlog:

        async def forgetting(client: Any) -> Any:  # every session is forgotten first
            await anyio.to_thread.run_sync(server.test, "POST", "/test/forget")
            return await client.call_tool("add", {"a": 1, "b": 1})

        backend = Backend(
            "web",
            {"type": "http", "url": server.url},
            errlog=errlog,
            env=dict(os.environ),
            cwd=tmp_path,
            health=Health(ping_every=3600, connect_timeout=START_TIMEOUT),
            on_change=ignore,
        )

        async def main() -> None:
            async with anyio.create_task_group() as group:
                group.start_soon(backend.run)
                await backend.first_round.wait()
                assert backend.state == "up", backend.reason
                server.test("POST", "/test/forget")
                result = await send(backend, add, 30)
                assert text(result) == "42"
                assert server.test("GET", "/test/stats")["initializes"] == 2
                with pytest.raises(UnansweredError, match="the session expired again"):
                    await send(backend, forgetting, 30)
                group.cancel_scope.cancel()

        anyio.run(main)


def test_three_connection_errors_in_a_row_reconnect_at_once(
    tmp_path: Path, isolated_home: Path
) -> None:
    """With a 60 s backoff, the backend would stay down for a minute after its server went
    away; three failed calls in a row reconnect it now, and the fourth call goes through."""
    with remote(tmp_path, "http") as server:
        user_servers(isolated_home, {"web": {"type": "http", "url": server.url}})

        async def session() -> None:
            async with gateway(tmp_path, backoff="60") as client:
                await poll(client, lambda n: "web__add" in n, START_TIMEOUT)
                server.kill()
                gone = await poll(client, lambda n: "web__add" not in n, START_TIMEOUT)
                assert "web__add" not in gone  # the ping saw it go: down, 60 s backoff
                server.start()
                errors = []
                for _ in range(3):
                    failed = await client.call_tool("web__add", {"a": 1, "b": 1})
                    errors.append(text(failed))
                assert all("web is not connected" in e for e in errors), errors
                back = await poll(client, lambda n: "web__add" in n, 20)
                assert "web__add" in back
                result = await client.call_tool("web__add", {"a": 5, "b": 5})
                assert text(result) == "10"

        started = time.monotonic()
        anyio.run(session)
        assert time.monotonic() - started < 60  # not the backoff: the errors reconnected it

    logs = "".join(_read(p) for p in isolated_home.rglob("gateway.log"))
    assert "web: 3 connection errors in a row (not connected); reconnecting" in logs


def test_backend_instructions_reach_the_gateway_clients(
    tmp_path: Path, isolated_home: Path
) -> None:
    """The gateway answers initialize before its backends are up, so the first session may not
    carry them yet; every later one does (what each said last time, or says now), and they
    never reach the state file's neighbours: only gateway-memory.json holds them."""
    section = f"## web (tools web__*)\n{INSTRUCTIONS}"
    with remote(tmp_path, "http") as server:
        user_servers(isolated_home, {"web": {"type": "http", "url": server.url}})

        async def session() -> str:
            async with gateway(tmp_path) as client:
                await poll(client, lambda n: "web__add" in n, START_TIMEOUT)
                return client.instructions or ""

        first, second = anyio.run(session), anyio.run(session)
    assert first.startswith("Every MCP server plugman resolved")
    assert section in second
    holding = [p.name for p in isolated_home.rglob("*") if p.is_file() and INSTRUCTIONS in _read(p)]
    assert holding == ["gateway-memory.json"]

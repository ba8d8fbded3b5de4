"""`plugman mcp login|logout` against a real OAuth-protected MCP server (tests/servers/
oauth_server.py: authorization server and resource server on 127.0.0.1, written with the mcp
SDK), every plugman command a real `python -m plugman` process. No browser: the test reads the
authorization URL the login prints on stderr and requests it itself; the server approves with
a 302 to plugman's loopback callback.

Covered: needs-auth with the login command before a login; login -> connected with the tools;
a new process after the access token's lifetime refreshes silently; logout -> needs-auth;
revoked tokens -> needs-auth; the gateway serves the protected tools after login; usage errors
and a login that times out; the secrets file is 0600 and no token the server ever issued
appears in any output, log or state file.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / "tests" / "servers" / "oauth_server.py"
TTL = 2  # seconds an access token lives
START_TIMEOUT = 60.0
RUN_TIMEOUT = 120.0

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Setup:
    base: str  # the OAuth server, http://127.0.0.1:PORT
    home: Path  # PLUGMAN_HOME
    project: Path
    env: dict[str, str]
    outputs: list[str] = field(default_factory=list)
    url: str = ""  # the protected MCP endpoint

    def run(self, *args: str, timeout: float = RUN_TIMEOUT) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "plugman", *args],
            env=self.env,
            cwd=self.project,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        self.outputs += [done.stdout, done.stderr]
        assert "Traceback" not in done.stderr, done.stderr
        return done

    def probe(self, name: str = "prot") -> dict[str, Any]:
        done = self.run("mcp", "probe", name, "--json")
        [result] = json.loads(done.stdout)["servers"]
        assert done.returncode == (0 if result["state"] == "connected" else 1), done
        return dict(result)

    def login(self, name: str = "prot", *extra: str) -> tuple[dict[str, Any], float]:
        """`mcp login NAME --no-browser --json`, the printed URL followed as a browser would."""
        started = time.monotonic()
        argv = ["-m", "plugman", "mcp", "login", name, "--no-browser", "--json", *extra]
        proc = subprocess.Popen(
            [sys.executable, *argv],
            env=self.env,
            cwd=self.project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stderr is not None
        seen: list[str] = []
        for line in proc.stderr:
            seen.append(line)
            if line.startswith("http://"):
                with urllib.request.urlopen(line.strip(), timeout=30) as page:
                    assert page.status == 200 and b"Logged in." in page.read()
                break
        out, err = proc.communicate(timeout=RUN_TIMEOUT)
        seconds = time.monotonic() - started
        self.outputs += [out, "".join(seen) + err]
        assert proc.returncode == 0, (out, seen, err)
        assert any(line.startswith("http://") for line in seen), seen
        return json.loads(out), seconds

    def server(self, path: str, method: str = "GET") -> Any:
        request = urllib.request.Request(self.base + path, method=method)
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    def tokens(self) -> list[str]:
        issued: list[str] = self.server("/test/tokens")["issued"]
        return issued

    def assert_no_token_leaked(self) -> None:
        """No token the server ever issued in any output, or any file under PLUGMAN_HOME but
        the secret store."""
        tokens = self.tokens()
        assert tokens
        files = [p for p in self.home.rglob("*") if p.is_file() and p.name != "secrets.json"]
        texts = self.outputs + [p.read_text(errors="replace") for p in files]
        leaks = [t[:6] for t in tokens for text in texts if t in text]
        assert not leaks, f"tokens {leaks} appear in an output, log or state file"


@pytest.fixture
def setup(tmp_path: Path, isolated_home: Path, request: pytest.FixtureRequest) -> Iterator[Setup]:
    """The OAuth server and a user server `prot` pointing at it. The test's indirect parameter
    may set `ttl` (how long access tokens live; default TTL) and `transport` (http or sse)."""
    given = {"ttl": TTL, "transport": "http", **getattr(request, "param", {})}
    port = _free_port()
    log = tmp_path / "oauth-server.log"
    env = {**os.environ, "OAUTH_TOKEN_TTL": str(given["ttl"])}
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, str(SERVER), "--port", str(port), "--transport", given["transport"]],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
        )
    try:
        end = time.monotonic() + START_TIMEOUT
        while True:
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < end, "the OAuth server did not listen in time"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        project = tmp_path / "project"
        project.mkdir()
        (tmp_path / "home").mkdir()
        plugman_env = {
            **os.environ,
            "HOME": str(tmp_path / "home"),
            "PLUGMAN_HOME": str(isolated_home),
            "PLUGMAN_SECRETS": "file",
            "PLUGMAN_GATEWAY_BACKOFF": "0.5",
        }
        plugman_env.pop("OAUTH_TOKEN_TTL", None)
        found = Setup(f"http://127.0.0.1:{port}", isolated_home, project, plugman_env)
        path = "/sse" if given["transport"] == "sse" else "/mcp"
        found.url = found.base + path
        added = found.run(
            "mcp", "add", "prot", found.url, "--transport", given["transport"], "--scope", "user"
        )
        assert added.returncode == 0, added
        yield found
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)


def test_login_probe_refresh_logout(setup: Setup, record_property: Any) -> None:
    before = setup.probe()
    assert before["state"] == "needs-auth"
    assert "plugman mcp login prot" in before["reason"]
    cached = setup.probe()  # not contacted again for 15 minutes
    assert cached["state"] == "needs-auth" and "not retried" in cached["reason"]
    assert "plugman mcp login prot" in cached["reason"]

    login, login_seconds = setup.login()
    assert (login["name"], login["tools"], login["store"]["kind"]) == ("prot", 2, "file")
    secrets = setup.home / "config" / "secrets.json"
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    stored = json.loads(json.loads(secrets.read_text())[f"oauth:{setup.url}"])
    assert stored["tokens"]["access_token"] and stored["tokens"]["refresh_token"]
    assert stored["client_info"]["client_id"] and stored["expires_at"] > time.time()

    after = setup.probe()  # the login cleared the cached needs-auth
    assert after["state"] == "connected", after
    assert {t["name"] for t in after["tools"]} == {"add", "whoami"}
    refreshes = setup.server("/test/tokens")["refreshes"]  # 0, unless that probe was slow

    time.sleep(TTL + 0.5)  # the access token has expired: a new process refreshes it
    started = time.monotonic()
    refreshed = setup.probe()
    refresh_seconds = time.monotonic() - started
    assert refreshed["state"] == "connected", refreshed
    assert setup.server("/test/tokens")["refreshes"] == refreshes + 1
    again = json.loads(json.loads(secrets.read_text())[f"oauth:{setup.url}"])
    assert again["tokens"]["access_token"] != stored["tokens"]["access_token"]
    assert again["expires_at"] > stored["expires_at"]

    out = setup.run("mcp", "logout", "prot", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["removed"] is True
    assert f"oauth:{setup.url}" not in json.loads(secrets.read_text())
    gone = setup.probe()
    assert gone["state"] == "needs-auth" and "not retried" not in gone["reason"], gone
    twice = setup.run("mcp", "logout", "prot")
    assert twice.returncode == 0 and "no stored login" in twice.stdout

    setup.login()
    setup.server("/test/revoke", "POST")
    time.sleep(TTL + 0.5)  # expired and revoked: the refresh is refused (400), then 401
    expired = setup.probe()
    assert expired["state"] == "needs-auth", expired
    assert "plugman mcp login prot" in expired["reason"]
    setup.assert_no_token_leaked()
    record_property(
        "summary",
        f"oauth: login (process start to tokens stored) {login_seconds:.2f} s; "
        f"probe that refreshes first (whole process) {refresh_seconds:.2f} s",
    )


@pytest.mark.parametrize("setup", [{"ttl": 3600}], indirect=True)  # tokens that do not expire
def test_revoked_tokens_lead_back_to_needs_auth(setup: Setup) -> None:
    """A refused access token is refreshed once; refused tokens mean needs-auth."""
    setup.login()
    assert setup.probe()["state"] == "connected"
    setup.server("/test/revoke?access_only=1", "POST")
    refused = setup.probe()  # a 401 to an unexpired access token: refreshed once, silently
    assert refused["state"] == "connected", refused
    assert setup.server("/test/tokens")["refreshes"] == 1
    setup.server("/test/revoke", "POST")
    revoked = setup.probe()  # the access token is refused: 401, and no login from a probe
    assert revoked["state"] == "needs-auth", revoked
    assert "plugman mcp login prot" in revoked["reason"]
    setup.assert_no_token_leaked()


@pytest.mark.parametrize("setup", [{"transport": "sse"}], indirect=True)
def test_sse_server_login_refresh_and_logout(setup: Setup) -> None:
    assert setup.probe()["state"] == "needs-auth"
    login, _ = setup.login()
    assert (login["transport"], login["tools"]) == ("sse", 2)
    assert setup.probe()["state"] == "connected"
    time.sleep(TTL + 0.5)
    refreshes = setup.server("/test/tokens")["refreshes"]
    assert setup.probe()["state"] == "connected"
    assert setup.server("/test/tokens")["refreshes"] == refreshes + 1
    assert setup.run("mcp", "logout", "prot").returncode == 0
    assert setup.probe()["state"] == "needs-auth"
    setup.assert_no_token_leaked()


def test_gateway_serves_the_protected_tools_after_login(setup: Setup) -> None:
    setup.login()

    async def main() -> tuple[set[str], str]:
        from mcp import Client, StdioServerParameters, stdio_client

        argv = [sys.executable, "-m", "plugman", "mcp", "serve"]
        params = StdioServerParameters(
            command=argv[0], args=argv[1:], env=setup.env, cwd=str(setup.project)
        )
        errlog_path = setup.project.parent / "gateway.stderr"
        with errlog_path.open("w") as errlog:
            async with Client(
                stdio_client(params, errlog=errlog), mode="legacy", read_timeout_seconds=60
            ) as client:
                names: set[str] = set()
                end = time.monotonic() + 60
                while "prot__add" not in names and time.monotonic() < end:
                    listed = await client.list_tools(cache_mode="refresh")
                    names = {tool.name for tool in listed.tools}
                    await anyio.sleep(0.2)
                result = await client.call_tool("prot__add", {"a": 2, "b": 3})
                text = "".join(b.text for b in result.content if b.type == "text")
        setup.outputs.append(errlog_path.read_text())
        return names, text

    names, text = anyio.run(main)
    assert {"prot__add", "prot__whoami"} <= names
    assert text == "5"
    setup.assert_no_token_leaked()


def test_usage_errors_and_a_login_that_times_out(setup: Setup) -> None:
    unknown = setup.run("mcp", "login", "nope")
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: ")
    assert "hint:" in unknown.stderr
    added = setup.run("mcp", "add", "local", "--scope", "user", "--", sys.executable, "-V")
    assert added.returncode == 0, added
    stdio = setup.run("mcp", "login", "local")
    assert stdio.returncode == 2 and "http and sse" in stdio.stderr
    assert setup.run("mcp", "logout", "nope").returncode == 2

    slow = setup.run("mcp", "login", "prot", "--no-browser", "--timeout", "1")
    assert slow.returncode == 1
    assert "http://127.0.0.1" in slow.stderr and "no answer from the browser" in slow.stderr
    assert "hint:" in slow.stderr and slow.stdout == ""


def test_callback_refusal_is_an_error() -> None:
    """The loopback server: an `error=` callback is a clear refusal, a stray path a 404."""
    from plugman.core.errors import PlugmanError
    from plugman.runtime.oauth.callback import Callback

    with Callback() as callback:
        base = callback.redirect_uri.rsplit("/", 1)[0]
        with pytest.raises(urllib.error.HTTPError) as stray:
            urllib.request.urlopen(base + "/other", timeout=5)
        assert stray.value.code == 404

        def deny() -> None:
            time.sleep(0.2)
            url = callback.redirect_uri + "?error=access_denied&error_description=no+thanks"
            urllib.request.urlopen(url, timeout=5).read()

        threading.Thread(target=deny).start()
        with pytest.raises(PlugmanError, match=r"refused the login \(access_denied: no thanks\)"):
            anyio.run(callback.wait, 10.0)


@pytest.mark.slow
def test_processes_refreshing_at_once_share_one_refresh(setup: Setup) -> None:
    """Refresh tokens rotate: of two processes that refresh with the same one, the second
    would be refused and fall back to needs-auth. One refreshes, under a lock; the others wait,
    find its new tokens in the store, and use them."""
    setup.login()
    time.sleep(TTL + 0.5)  # expired: every process below must refresh, or find a refresh
    refreshes = setup.server("/test/tokens")["refreshes"]
    argv = [sys.executable, "-m", "plugman", "mcp", "probe", "prot", "--json"]
    procs = [
        subprocess.Popen(argv, env=setup.env, cwd=setup.project, stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    states = []
    for proc in procs:
        out, _ = proc.communicate(timeout=RUN_TIMEOUT)
        states.append(json.loads(out)["servers"][0]["state"])
    assert states == ["connected"] * 3, states
    assert setup.server("/test/tokens")["refreshes"] == refreshes + 1

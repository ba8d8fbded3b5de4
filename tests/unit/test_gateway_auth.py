"""The gateway's HTTP guard, in-process: the bearer token (made, kept, rotated, from the
environment), the ASGI gate, addresses and DNS-rebinding settings, and the CLI around them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

from plugman.cli import invoke
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.paths import Paths
from plugman.runtime.gateway import token as gateway_token
from plugman.runtime.gateway import web as gateway_web

FILE = {"PLUGMAN_SECRETS": "file"}


def paths(home: Path) -> Paths:
    return Paths.from_env({"PLUGMAN_HOME": str(home)}, project=home)


def test_the_token_is_made_once_kept_in_the_store_and_rotated(isolated_home: Path) -> None:
    made = gateway_token.obtain(paths(isolated_home), FILE)
    assert made.created and not made.rotated and made.source == "file"
    assert len(made.value) >= 43 and made.value not in repr(made)
    again = gateway_token.obtain(paths(isolated_home), FILE)
    assert again.value == made.value and not again.created
    stored = json.loads((isolated_home / "config" / "secrets.json").read_text())
    assert stored == {gateway_token.KEY: made.value}
    rotated = gateway_token.obtain(paths(isolated_home), FILE, rotate=True)
    assert rotated.rotated and rotated.value != made.value
    assert rotated.fingerprint != made.fingerprint and rotated.fingerprint.startswith("sha256:")
    assert gateway_token.obtain(paths(isolated_home), FILE).value == rotated.value


def test_the_environment_gives_the_token_and_nothing_is_stored(isolated_home: Path) -> None:
    given = "e" * 40
    env = {**FILE, gateway_token.VARIABLE: given}
    found = gateway_token.obtain(paths(isolated_home), env)
    assert (found.value, found.source, found.created) == (given, "environment", False)
    assert not (isolated_home / "config" / "secrets.json").exists()
    with pytest.raises(UsageError, match="cannot rotate"):
        gateway_token.obtain(paths(isolated_home), env, rotate=True)
    for weak in ("short", "x" * 20 + " " + "y" * 20):
        with pytest.raises(UsageError, match="not a usable token"):
            gateway_token.obtain(paths(isolated_home), {gateway_token.VARIABLE: weak})


def gate(token: str, headers: list[tuple[bytes, bytes]], kind: str = "http") -> list[Any]:
    """What the gate sends for one request, or ["passed"] when it let it through."""
    sent: list[Any] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        sent.append("passed")

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> Any:
        return {"type": "http.request", "body": b""}

    scope = {"type": kind, "headers": headers}
    anyio.run(gateway_web.BearerGate(inner, token), scope, receive, send)
    return sent


def test_the_gate_lets_through_only_the_token() -> None:
    token = "t" * 43
    assert gate(token, [(b"authorization", f"Bearer {token}".encode())]) == ["passed"]
    assert gate(token, [(b"authorization", f"bearer {token}".encode())]) == ["passed"]
    assert gate(token, [], kind="lifespan") == ["passed"]
    for headers in (
        [],
        [(b"authorization", token.encode())],
        [(b"authorization", f"Bearer {token}x".encode())],
        [(b"authorization", f"Basic {token}".encode())],
        [(b"x-token", f"Bearer {token}".encode())],
    ):
        start, body = gate(token, headers)
        assert start["status"] == 401
        assert dict(start["headers"])[b"www-authenticate"].startswith(b"Bearer ")
        assert token.encode() not in body["body"]


def test_addresses_and_dns_rebinding_settings() -> None:
    for host in ("127.0.0.1", "127.0.0.2", "localhost", "::1"):
        assert gateway_web.listen_address(host, 0).loopback, host
    for host in ("0.0.0.0", "::", "192.0.2.1"):
        address = gateway_web.listen_address(host, 0)
        assert not address.loopback, host
        assert not gateway_web.security(address).enable_dns_rebinding_protection
    with pytest.raises(PlugmanError, match=r"cannot listen on no such host\.invalid"):
        gateway_web.listen_address("no such host.invalid", 0)
    settings = gateway_web.security(gateway_web.listen_address("127.0.0.2", 0))
    assert settings.enable_dns_rebinding_protection
    assert "127.0.0.2:*" in settings.allowed_hosts and "localhost:*" in settings.allowed_hosts
    assert "http://127.0.0.2:*" in settings.allowed_origins
    assert "[::1]:*" in gateway_web.security(gateway_web.listen_address("::1", 0)).allowed_hosts


def test_mcp_token_command(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLUGMAN_SECRETS", "file")
    monkeypatch.delenv(gateway_token.VARIABLE, raising=False)
    first = invoke(["mcp", "token"])
    assert first.exit_code == 0, first.output
    assert first.stdout.startswith("gateway token sha256:") and "made and stored" in first.stdout
    shown = invoke(["mcp", "token", "--show"])
    token = shown.stdout.strip()
    assert shown.stdout == token + "\n" and len(token) == 43
    assert token not in first.output and "stored in" in shown.stderr
    quiet = json.loads(invoke(["mcp", "token", "--json"]).stdout)
    assert "token" not in quiet and quiet["store"]["kind"] == "file" and not quiet["created"]
    assert token not in json.dumps(quiet)
    loud = json.loads(invoke(["mcp", "token", "--json", "--show"]).stdout)
    assert loud["token"] == token and loud["fingerprint"] == quiet["fingerprint"]
    rotated = invoke(["mcp", "token", "--rotate"])
    assert "replaced" in rotated.stdout and "restart running gateways" in rotated.stdout
    assert invoke(["mcp", "token", "--show"]).stdout.strip() != token
    monkeypatch.setenv(gateway_token.VARIABLE, "short")
    failed = invoke(["mcp", "token", "--json"])
    assert failed.exit_code == 2 and json.loads(failed.stdout)["error"]["exit_code"] == 2


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--transport", "http", "--host", "0.0.0.0"], "refusing to serve HTTP on 0.0.0.0"),
        (["--auth", "token"], "--auth and --stateless apply only to --transport http"),
        (["--stateless"], "--auth and --stateless apply only to --transport http"),
        (["--transport", "http", "--auth", "basic"], "unknown --auth 'basic'"),
    ],
)
def test_serve_refuses_before_starting_anything(
    isolated_home: Path, tmp_path: Path, options: list[str], message: str
) -> None:
    result = invoke(["--project", str(tmp_path), "mcp", "serve", *options])
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "hint:" in result.stderr
    assert not (isolated_home / "state").exists()
    assert not (isolated_home / "config" / "secrets.json").exists()


def test_the_app_serves_only_the_mcp_path() -> None:
    """McpApp: /mcp (and /mcp/) go to the session manager, any other path is a 404."""
    handled: list[str] = []

    class Manager:
        async def handle_request(self, scope: Any, receive: Any, send: Any) -> None:
            handled.append(scope["path"])

    async def call(path: str) -> list[Any]:
        sent: list[Any] = []

        async def send(message: Any) -> None:
            sent.append(message)

        async def receive() -> Any:
            return {"type": "http.request", "body": b""}

        app = gateway_web.McpApp(cast(Any, Manager()))
        await app({"type": "http", "path": path, "headers": []}, receive, send)
        return sent

    assert anyio.run(call, "/mcp") == [] and anyio.run(call, "/mcp/") == []
    assert handled == ["/mcp", "/mcp/"]
    for path in ("/", "/mcpx", "/other/mcp"):
        sent = anyio.run(call, path)
        assert sent[0]["status"] == 404 and sent[1]["body"] == b"Not Found", path
    assert handled == ["/mcp", "/mcp/"]

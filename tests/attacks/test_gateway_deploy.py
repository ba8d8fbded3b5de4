"""Attacks on the fleet's deployment rules, end to end over real HTTP on 127.0.0.1.

- A repeated side effect through the balancer: a `tools/call` that appends a line to a file
  and then takes seconds reaches a replica, which is SIGKILLed mid-call. Invariant, with
  deploy/haproxy/haproxy.cfg as shipped (retry on connection failure only): the call fails and
  the side effect ran once, also in the 6 s after. (With `retry-on empty-response` added,
  HAProxy 2.6 was seen resending it, the side effect twice, in some runs and closing the
  client's connection in others: not deterministic enough for a control case here.)
- A replica made to serve something other than the lock: the plugin's files changed in its
  source after locking. Invariant: `mcp serve --frozen` refuses to serve (exit 1), nothing
  listens, and nothing of the changed plugin is installed.
- The config digest says nothing of secrets: a server entry that references a variable gets
  the same digest whatever the variable's value, and the value is in no output or log.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import anyio
import pytest

from tests.integration.http_gateway import environment, lines_until
from tests.integration.test_gateway import (
    START_TIMEOUT,
    configure,
    free_port,
    leftovers,
    plugman_argv,
)
from tests.integration.test_gateway_auth import token_of
from tests.integration.test_gateway_deploy import (
    SAMPLES,
    digest,
    haproxy,
    plugman,
    replica,
)

MARK = """
import os
import time
from mcp.server.mcpserver import MCPServer

server = MCPServer("side")


@server.tool()
def mark(path: str) -> str:
    \"\"\"Append this replica's name to `path`, then work for a while.\"\"\"
    with open(path, "a") as file:
        file.write(os.environ.get("REPLICA", "?") + "\\n")
    time.sleep(4)
    return "marked"


@server.tool()
def whoami() -> str:
    \"\"\"The replica whose gateway started this server.\"\"\"
    return os.environ.get("REPLICA", "?")


server.run()
"""


class Killable:
    """A replica in its own session, so SIGKILL takes the gateway and nothing else of ours."""

    def __init__(self, project: Path, home: Path, name: str) -> None:
        argv = plugman_argv("--project", str(project), "mcp", "serve", "--transport", "http")
        self.proc = subprocess.Popen(
            [*argv, "--port", "0", "--auth", "token"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=environment(home, REPLICA=name),
            start_new_session=True,
        )
        said = lines_until(self.proc, ", config sha256:")
        self.url = said[0].removeprefix("listening on ")
        self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])
        self.name = name

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.communicate(timeout=30)


@contextmanager
def killables(project: Path, home: Path) -> Iterator[list[Killable]]:
    started: list[Killable] = []
    try:
        for name in ("one", "two"):
            started.append(Killable(project, home, name))
        yield started
    finally:
        for each in started:
            each.stop()
        end = time.monotonic() + 10
        while (left := leftovers(home, set())) and time.monotonic() < end:
            for pid in left:  # a killed gateway's backends, started by this test
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue
            time.sleep(0.2)


async def call_mark(url: str, token: str, marks: Path, replicas: list[Killable]) -> str:
    """Warm both replicas' backends, then call `mark` and SIGKILL the replica running it."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    with anyio.fail_after(120):
        web = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        # 2025-era, stateless: no stream stays open on the replica killed (a 2026 client's
        # subscriptions/listen would fail the client on its own)
        transport = streamable_http_client(url, http_client=web)
        async with web, Client(transport, mode="legacy") as client:
            end = anyio.current_time() + START_TIMEOUT
            seen: set[str] = set()
            while seen != {"one", "two"}:  # both replicas' `side` servers up
                assert anyio.current_time() < end, seen
                try:
                    answer = await client.call_tool("side__whoami", {})
                    seen.add("\n".join(b.text for b in answer.content if b.type == "text"))
                except Exception:  # a backend still starting: asked again
                    await anyio.sleep(0.2)

            async def killer() -> None:
                while not marks.exists() or not marks.read_text().strip():
                    await anyio.sleep(0.02)
                running = marks.read_text().split()[0]
                next(r for r in replicas if r.name == running).kill()

            outcome = "answered"
            async with anyio.create_task_group() as group:
                group.start_soon(killer)
                try:
                    result = await client.call_tool("side__mark", {"path": str(marks)})
                    outcome = "error" if result.is_error else "answered"
                except Exception:
                    outcome = "failed"
            return outcome


@pytest.mark.slow
def test_a_call_on_a_dying_replica_is_not_run_twice(tmp_path: Path, isolated_home: Path) -> None:
    (tmp_path / "side.py").write_text(MARK)
    configure(isolated_home, None, {}, {"side": tmp_path / "side.py"})
    project = tmp_path / "project"
    project.mkdir()
    token = token_of(isolated_home)
    marks = tmp_path / "marks.txt"
    with ExitStack() as stack:
        replicas = stack.enter_context(killables(project, isolated_home))
        url = stack.enter_context(haproxy(tmp_path, [r.port for r in replicas], None))
        try:
            outcome = anyio.run(call_mark, url, token, marks, replicas)
        except Exception:  # the connection cut under the client: the SDK's own error
            outcome = "failed"
        end = time.monotonic() + 6  # a resent call would land within this
        while len(marks.read_text().split()) < 2 and time.monotonic() < end:
            time.sleep(0.1)
    ran = marks.read_text().split()
    said = (tmp_path / "haproxy.log").read_text()
    assert ran[:1] and len(ran) == 1, f"the call ran {len(ran)} times: {ran}\n{said}"
    assert outcome in ("failed", "error"), outcome


@pytest.mark.slow
def test_frozen_refuses_a_plugin_changed_since_the_lock(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(SAMPLES, project / "marketplace", ignore=shutil.ignore_patterns("invalid"))
    for args in (
        ("marketplace", "add", "./marketplace", "--scope", "project"),
        ("install", "notes-server", "--scope", "project"),
    ):
        done = plugman(project, tmp_path / "author", *args)
        assert done.returncode == 0, done.stderr
    server = project / "marketplace" / "plugins" / "notes-server" / "server" / "notes_server.py"
    server.write_text(server.read_text() + "\nimport os  # changed after the lock\n")
    home = tmp_path / "replica"
    argv = plugman_argv("--project", str(project), "mcp", "serve", "--transport", "http")
    refused = subprocess.run(
        [*argv, "--port", str(free_port()), "--frozen"],
        capture_output=True,
        text=True,
        env=environment(home),
        timeout=120,
    )
    assert refused.returncode == 1, refused.stderr
    assert "listening" not in refused.stderr and refused.stdout == ""
    assert "Traceback" not in refused.stderr
    assert "content" in refused.stderr or "hash" in refused.stderr, refused.stderr
    store = home / "data" / "store"
    installed = list(store.rglob("notes_server.py")) if store.exists() else []
    assert not any("changed after the lock" in p.read_text() for p in installed)


def test_the_digest_says_nothing_of_a_secret(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "digest-canary-" + "9" * 24
    (isolated_home / "config").mkdir(parents=True, exist_ok=True)
    (isolated_home / "config" / "plugman.toml").write_text(
        '[mcp_servers.api]\ntype = "http"\nurl = "http://127.0.0.1:9/mcp"\n'
        'headers = { Authorization = "Bearer ${API_TOKEN}" }\n'
    )
    project = tmp_path / "project"
    project.mkdir()
    digests, said = [], []
    for value in (secret, secret[::-1]):
        monkeypatch.setenv("API_TOKEN", value)  # the replica's environment
        with replica(project, isolated_home) as started:
            digests.append(digest(started))
        said += started.said  # its start-up lines, then everything it wrote
    assert digests[0] == digests[1], "a secret's value changed the digest"
    log = (isolated_home / "state" / "logs" / "gateway.log").read_text()
    for text in ("\n".join(said), log):
        assert secret not in text and secret[::-1] not in text

"""`plugman mcp probe` and `tools` against real servers: no mocks.

Good servers: the sample notes server over stdio, streamable HTTP and SSE, and the third-party
`mcp-server-time` from PyPI. Hostile ones are small scripts written to the test's folder (a
crash at start, a hang that ignores SIGTERM and keeps a grandchild, garbage on stdout), a command
that does not exist, and a real 127.0.0.1 HTTP server answering 401 or 404.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest

from plugman.cli import invoke as plugman_invoke
from plugman.core.paths import Paths
from plugman.runtime.gateway.probe import ProbeResult, probe

REPO = Path(__file__).resolve().parents[2]
NOTES = REPO / "sample-plugins" / "plugins" / "notes-server" / "server" / "notes_server.py"
NOTES_TOOLS = {"add_note", "list_notes", "get_note", "delete_note", "echo", "add"}
GOOD_TIMEOUT = 60.0  # a loaded 2-core box can take seconds to start a Python server
HOSTILE_TIMEOUT = 3.0
KILL_BUDGET = 6.0  # SDK shutdown: 2 s after stdin closes, 2 s after SIGTERM, then SIGKILL

CRASH = """
import sys
print("fatal: missing API_KEY", file=sys.stderr)
sys.exit(3)
"""
HANG = """
import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(3600)"])
with open(sys.argv[1], "w") as out:
    out.write(f"{os.getpid()} {child.pid}")
while True:
    time.sleep(3600)
"""
GARBAGE = """
import time
print("Starting the best server ever!", flush=True)
print("{not json at all", flush=True)
time.sleep(3600)
"""


def run_probe(servers: dict[str, dict[str, Any]], timeout: float, **options: Any) -> Any:
    log_dir = Path(os.environ["PLUGMAN_HOME"]) / "logs"

    async def main() -> list[ProbeResult]:
        return await probe(servers, timeout=timeout, log_dir=log_dir, **options)

    return anyio.run(main)


def python(script: Path, *args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(script), *args]}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def notes_over(transport: str, errlog: Path) -> Iterator[str]:
    """The notes server as a subprocess on a free 127.0.0.1 port; yields its URL."""
    port = _free_port()
    cmd = [sys.executable, str(NOTES), "--transport", transport, "--port", str(port)]
    with errlog.open("wb") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=err)
    try:
        end = time.monotonic() + GOOD_TIMEOUT
        while True:
            assert proc.poll() is None, errlog.read_text()
            assert time.monotonic() < end, "the notes server did not listen in time"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/{'sse' if transport == 'sse' else 'mcp'}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


class Refusing(BaseHTTPRequestHandler):
    """401 (with a Bearer challenge) under /auth, 404 everywhere else."""

    def answer(self) -> None:
        code = 401 if self.path.startswith("/auth") else 404
        self.send_response(code)
        if code == 401:
            self.send_header("WWW-Authenticate", 'Bearer realm="test"')
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "4")
        self.end_headers()
        self.wfile.write(b"nope")

    def do_GET(self) -> None:
        self.answer()

    def do_POST(self) -> None:
        self.answer()

    def do_DELETE(self) -> None:
        self.answer()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def refusing() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def hostile(tmp_path: Path, refusing: str) -> dict[str, dict[str, Any]]:
    for name, text in (("crash", CRASH), ("hang", HANG), ("garbage", GARBAGE)):
        (tmp_path / f"{name}.py").write_text(text)
    return {
        "crash": python(tmp_path / "crash.py"),
        "hang": python(tmp_path / "hang.py", str(tmp_path / "hang.pids")),
        "garbage": python(tmp_path / "garbage.py"),
        "missing": {"command": "plugman-test-no-such-command", "args": []},
        "auth": {"type": "http", "url": f"{refusing}/auth/mcp"},
        "gone": {"type": "http", "url": f"{refusing}/mcp"},
    }


def _alive(pid: int) -> bool:
    """Running (a zombie left to a non-reaping init counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


EXPECTED = {  # name: (state, reason starts with, seconds allowed)
    "crash": ("failed", "exited with code 3: fatal: missing API_KEY", HOSTILE_TIMEOUT),
    "hang": ("failed", "timed out after 3 s", HOSTILE_TIMEOUT + KILL_BUDGET),
    "garbage": (
        "failed",
        "not an MCP server: stdout is not JSON-RPC (",
        HOSTILE_TIMEOUT + KILL_BUDGET,
    ),
    "missing": ("failed", "command not found: plugman-test-no-such-command", HOSTILE_TIMEOUT),
    "auth": ("needs-auth", "HTTP 401", HOSTILE_TIMEOUT),
    "gone": ("failed", "HTTP 404 Not Found", HOSTILE_TIMEOUT),
}


def _check(result: ProbeResult) -> None:
    state, reason, _ = EXPECTED[result.name]
    assert (result.state, result.name) == (state, result.name), result
    assert result.reason is not None and result.reason.startswith(reason), result
    assert result.duration_ms is not None and result.duration_ms <= HOSTILE_TIMEOUT * 1000
    assert not result.tools


def test_notes_over_stdio() -> None:
    entry = {**python(NOTES), "env": {"NOTES_OWNER": "probe-test"}}
    [result] = run_probe({"notes": entry}, GOOD_TIMEOUT)
    assert (result.state, result.reason, result.transport) == ("connected", None, "stdio")
    assert (result.server_name, result.server_version) == ("notes", "1.0.0")
    assert result.protocol_version == "2025-11-25"
    tools = {t.name: t for t in result.tools}
    assert set(tools) == NOTES_TOOLS
    assert tools["list_notes"].annotations["readOnlyHint"] is True
    assert tools["delete_note"].annotations["destructiveHint"] is True
    assert tools["add"].description == "Add two integers."
    assert set(tools["add"].input_schema["properties"]) == {"a", "b"}
    assert {r.get("uri") for r in result.resources} >= {"notes://index"}
    assert {r.get("uri_template") for r in result.resources} >= {"notes://note/{title}"}
    assert [p["name"] for p in result.prompts] == ["summarize_notes"]
    assert result.stderr_log and Path(result.stderr_log).name == "notes.stderr"
    assert Path(result.stderr_log).is_file()


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
def test_notes_over_http(transport: str, tmp_path: Path) -> None:
    kind = "http" if transport == "streamable-http" else "sse"
    with notes_over(transport, tmp_path / "server.log") as url:
        [result] = run_probe({"remote": {"type": kind, "url": url}}, GOOD_TIMEOUT)
    assert (result.state, result.transport, result.server_name) == ("connected", kind, "notes")
    assert {t.name for t in result.tools} == NOTES_TOOLS
    assert result.stderr_log is None


def test_third_party_server_from_pypi() -> None:
    entry = {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
    [result] = run_probe({"time": entry}, GOOD_TIMEOUT)
    assert result.state == "connected", result
    assert result.server_name == "mcp-time"
    assert {t.name for t in result.tools} >= {"get_current_time", "convert_time"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hostile_server(name: str, hostile: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    started = time.monotonic()
    [result] = run_probe({name: hostile[name]}, HOSTILE_TIMEOUT)
    elapsed = time.monotonic() - started
    _check(result)
    assert elapsed < EXPECTED[name][2], (name, elapsed)
    if name == "hang":  # the server and its grandchild both ignored SIGTERM: both are gone
        pids = [int(p) for p in (tmp_path / "hang.pids").read_text().split()]
        assert len(pids) == 2
        assert not [pid for pid in pids if _alive(pid)]
    if name == "crash":
        assert result.stderr_log
        assert "missing API_KEY" in Path(result.stderr_log).read_text()


def test_hostile_servers_together_take_as_long_as_the_slowest(
    hostile: dict[str, dict[str, Any]],
) -> None:
    """Run one at a time they need at least 3 + 4 s (hang) + 3 + 2 s (garbage) = 12 s."""
    started = time.monotonic()
    results = run_probe(hostile, HOSTILE_TIMEOUT, local_batch=10)
    elapsed = time.monotonic() - started
    assert [r.name for r in results] == list(hostile)
    for result in results:
        _check(result)
    assert elapsed < HOSTILE_TIMEOUT + KILL_BUDGET, elapsed


def test_transports_that_cannot_connect() -> None:
    servers = {
        "refused": {"type": "http", "url": f"http://127.0.0.1:{_free_port()}/mcp"},
        "ws": {"type": "ws", "url": "ws://127.0.0.1:9/"},
        "odd": {"type": "carrier-pigeon", "url": "coo://"},
        "nowhere": {**python(NOTES), "cwd": "/plugman-test/no/such/folder"},
    }
    results = {r.name: r for r in run_probe(servers, HOSTILE_TIMEOUT)}
    assert results["refused"].reason is not None
    assert results["refused"].reason.startswith("cannot connect: ")
    assert (results["ws"].reason or "").startswith("cannot connect: ")
    assert results["odd"].reason == "unknown transport 'carrier-pigeon'"
    assert results["nowhere"].reason == "working directory not found: /plugman-test/no/such/folder"
    assert {r.state for r in results.values()} == {"failed"}


def test_local_batch_bounds_stdio_concurrency(tmp_path: Path) -> None:
    script = tmp_path / "slow_crash.py"
    script.write_text("import sys, time\ntime.sleep(1.0)\nsys.exit(1)\n")
    servers = {f"slow{i}": python(script) for i in range(3)}
    started = time.monotonic()
    one_at_a_time = run_probe(servers, 30.0, local_batch=1)
    sequential = time.monotonic() - started
    started = time.monotonic()
    together = run_probe(servers, 30.0, local_batch=3)
    concurrent = time.monotonic() - started
    for result in [*one_at_a_time, *together]:
        assert result.reason == "exited with code 1 (nothing on stderr)", result
    assert sequential >= 3.0
    assert concurrent < sequential - 1.0, (concurrent, sequential)


# A fresh interpreter (mcp not imported yet) probing the servers given as JSON in argv[1] with
# the timeout in argv[2]; prints each result, then when the SDK finished loading.
FRESH = """
import json, sys, time
from pathlib import Path
import anyio
from plugman.runtime.gateway.probe import probe
from plugman.runtime.transport import stdio
assert "mcp" not in sys.modules
loaded = []
real = stdio._import_sdk
def timed():
    real()
    loaded.append(time.time())
stdio._import_sdk = timed
servers, timeout, logs = json.loads(sys.argv[1]), float(sys.argv[2]), Path(sys.argv[3])
results = anyio.run(lambda: probe(servers, timeout=timeout, log_dir=logs))
print(json.dumps({"results": [r.as_dict() for r in results], "sdk_loaded": loaded[0]}))
"""


def probe_fresh(servers: dict[str, dict[str, Any]], timeout: float, logs: Path) -> Any:
    argv = [sys.executable, "-c", FRESH, json.dumps(servers), str(timeout), str(logs)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_stdio_servers_start_before_the_sdk_loads(tmp_path: Path) -> None:
    """The SDK's import (~0.85 CPU-s) overlaps the servers' start-up instead of preceding it."""
    script = tmp_path / "stamp.py"
    script.write_text(
        "import sys, time\nopen(sys.argv[1], 'w').write(repr(time.time()))\n"
        "import runpy\nsys.argv = [sys.argv[2]]\nrunpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    servers = {
        f"s{i}": python(script, str(tmp_path / f"s{i}.started"), str(NOTES)) for i in range(3)
    }
    found = probe_fresh(servers, GOOD_TIMEOUT, tmp_path / "logs")
    assert [r["state"] for r in found["results"]] == ["connected"] * 3, found
    started = [float((tmp_path / f"s{i}.started").read_text()) for i in range(3)]
    assert max(started) < found["sdk_loaded"], (started, found["sdk_loaded"])


def test_a_timeout_while_the_sdk_loads_stops_the_server(tmp_path: Path) -> None:
    """A server spawned before the SDK loaded, timed out before it had: stopped all the same
    (it and its grandchild ignore SIGTERM), and the reason is the timeout."""
    (tmp_path / "hang.py").write_text(HANG)
    pids = tmp_path / "hang.pids"
    servers = {"hang": python(tmp_path / "hang.py", str(pids))}
    started = time.monotonic()
    found = probe_fresh(servers, 0.05, tmp_path / "logs")
    [result] = found["results"]
    assert (result["state"], result["reason"]) == ("failed", "timed out after 0.05 s"), result
    assert time.monotonic() - started < 60
    ids = [int(p) for p in pids.read_text().split()]
    assert len(ids) == 2
    assert not [pid for pid in ids if _alive(pid)]


# --- the commands, over a resolved config ------------------------------------------------------


def _toml_server(name: str, command: str, args: list[str]) -> str:
    return f"[mcp_servers.{name}]\ncommand = {json.dumps(command)}\nargs = {json.dumps(args)}\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """User scope: notes (good) and crash; project: one server waiting for approval; managed
    policy denies `blocked`."""
    folder = tmp_path / "project"
    folder.mkdir()
    paths = Paths.from_env(project=folder)
    crash = tmp_path / "crash.py"
    crash.write_text(CRASH)
    paths.config_dir.mkdir(parents=True)
    paths.user_config.write_text(
        _toml_server("notes", sys.executable, [str(NOTES)])
        + _toml_server("crash", sys.executable, [str(crash)])
        + _toml_server("blocked", sys.executable, [str(crash)])
    )
    paths.managed_dir.mkdir(parents=True)
    paths.managed_settings.write_text('deniedMcpServers = [{ serverName = "blocked" }]\n')
    (folder / ".mcp.json").write_text('{"mcpServers": {"proj": {"command": "true"}}}')
    return folder


def invoke(project: Path, *args: str) -> Any:
    return plugman_invoke(["--project", str(project), "mcp", *args])


def test_probe_command_reports_every_server(project: Path) -> None:
    result = invoke(project, "probe", "--json", "--timeout", str(GOOD_TIMEOUT))
    assert result.exit_code == 1, result.output  # crash failed
    document = json.loads(result.stdout)
    assert document["command"] == "mcp probe"
    found = {s["name"]: s for s in document["servers"]}
    assert list(found) == ["blocked", "crash", "notes", "proj"]
    assert found["notes"]["state"] == "connected"
    assert len(found["notes"]["tools"]) == len(NOTES_TOOLS)
    assert found["crash"]["state"] == "failed"
    assert found["crash"]["reason"].startswith("exited with code 3")
    assert found["proj"]["state"] == "pending-approval"
    assert found["proj"]["reason"] == "run: plugman trust approve proj"
    assert found["blocked"]["state"] == "disabled"
    assert found["blocked"]["reason"].startswith("policy:")


def test_probe_exit_codes_follow_the_named_servers(project: Path) -> None:
    good = invoke(project, "probe", "notes", "--timeout", str(GOOD_TIMEOUT))
    assert good.exit_code == 0, good.output
    assert "notes" in good.stdout and "connected" in good.stdout
    held = invoke(project, "probe", "proj")
    assert held.exit_code == 1
    assert "pending-approval" in held.stdout
    unknown = invoke(project, "probe", "nope")
    assert unknown.exit_code == 1
    assert "no MCP server named nope" in unknown.output


def test_tools_command_builds_the_pool(project: Path) -> None:
    args = ("tools", "--json", "--builtin", "mcp__notes__echo", "--timeout", str(GOOD_TIMEOUT))
    result = invoke(project, *args)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    names = [t["name"] for t in document["entries"]]
    assert names == sorted(f"mcp__notes__{t}" for t in NOTES_TOOLS - {"echo"})
    [collision] = document["collisions"]
    assert collision == {
        "name": "mcp__notes__echo",
        "server": "notes",
        "tool": "echo",
        "winner": None,
        "reason": "builtin",
    }
    assert document["tokens"]["notes"] > 0
    assert document["total_tokens"] == document["tokens"]["notes"]
    left_out = {s["name"]: s["state"] for s in document["left_out"]}
    assert left_out == {"blocked": "disabled", "crash": "failed", "proj": "pending-approval"}
    text = invoke(project, *[a for a in args if a != "--json"])
    assert text.exit_code == 0
    assert "mcp__notes__list_notes" in text.stdout and "read-only" in text.stdout
    assert "a built-in tool has the name" in text.stdout

"""A gateway fleet on loopback, for issue 37's tests and bench: redis-server, N replicas of
`plugman mcp serve --transport http --stateless` and HAProxy 2.6 in front of them.

Every process starts on a free 127.0.0.1 port in its own process group and is stopped by that
group (SIGTERM, then SIGKILL) when `fleet()` exits, failure or not; then any process still
carrying this fleet's marker in its environment (`FLEET_RUN`: a replica's backends, say, after
the replica was SIGKILLed) is killed by pid, and listed in `Fleet.swept`. Every wait polls
with a deadline; none sleeps blindly.

- `Redis`: `redis-server --port P --save "" --appendonly no --bind 127.0.0.1`, `restart()` on
  the same port. `fleet(share_redis=True)` gives every replica its `PLUGMAN_REDIS_URL`.
- `Replica`: one `plugman mcp serve` (`kill()` its process group, `restart()` on its port),
  with its own PLUGMAN_HOME (the same user-scope config in each, as every pod of a Deployment
  has the same config), `PLUGMAN_REPLICA=<name>` in its environment, and one stdio backend
  (`BACKEND`, server `who`: `echo`, `add`, `hold`) that appends a line per call to
  `records/<replica>-<pid>.jsonl`, so a test can tell which replica served a call without
  anyone's logs (`Fleet.records()`).
- `Balancer`: HAProxy (`haproxy -f cfg -db`), round robin, health checks on `HEALTH` every
  200 ms (`fall 1 rise 2`), `retries 3`, `option redispatch 1`, `retry-on conn-failure`.
  Why not `empty-response` (or `response-timeout`): those re-send a request a replica already
  received, and a `tools/call` that ran before its replica died would run twice (a repeated
  side effect). `conn-failure` retries only a request that never reached a replica. A call in
  flight on a replica that dies fails; the client decides whether it may repeat it.
- Identity: `Auth` is what replicas are started with (flags, environment) and what each client
  request carries (`headers()`, asked again per request, so a provider can mint a fresh or a
  deliberately wrong token each time). `token_auth()` is the shared bearer token; an OIDC
  issuer plugs in as another `Auth` (its `--auth oidc --issuer URL --audience URL` options and a
  header provider that mints JWTs).
- Per-replica flags and environment: `ReplicaSpec` (e.g. a limit flag on every replica, or a
  different one on one), so later scenarios (limits with Redis, group rules, traces) add options
  without changing the harness. `ReplicaSpec(solo=True)`: a replica outside the fleet (not behind
  the balancer, no shared Redis), the one-replica reference the bench compares the fleet with.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

START_TIMEOUT = 90.0  # a loaded 2-core box can take many seconds to start three replicas
STOP_TIMEOUT = 15.0
MARKER = "FLEET_RUN"
RECORDS = "FLEET_RECORDS"
REPLICA = "PLUGMAN_REPLICA"
TOKEN_VARIABLE = "PLUGMAN_GATEWAY_TOKEN"
REDIS_VARIABLE = "PLUGMAN_REDIS_URL"
TOKEN = "fleet-shared-token-" + "k" * 32
# The balancer's health check: the replica's readiness (plugman.runtime.gateway.web.HealthGate),
# 200 once its backends finished their first attempt, 503 from its SIGTERM (the drain).
HEALTH = ("/readyz", "status 200")
BACKEND_NAME = "who"
BACKEND_TOOLS = frozenset(f"{BACKEND_NAME}__{tool}" for tool in ("echo", "add", "hold"))
MODERN = "2026-07-28"
BACKEND = """
import json, os, time
from mcp.server.mcpserver import MCPServer

REPLICA = os.environ.get("PLUGMAN_REPLICA", "none")
RECORD = os.path.join(os.environ["FLEET_RECORDS"], f"{REPLICA}-{os.getpid()}.jsonl")
server = MCPServer("who")


def record(tool, **arguments):
    line = {"replica": REPLICA, "pid": os.getpid(), "tool": tool, **arguments}
    with open(RECORD, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\\n")


@server.tool()
def echo(text: str) -> str:
    \"\"\"`text`, unchanged.\"\"\"
    record("echo", text=text)
    return text


@server.tool()
def add(a: int, b: int) -> str:
    \"\"\"The sum of `a` and `b`.\"\"\"
    record("add", a=a, b=b)
    return str(a + b)


@server.tool()
def hold(text: str, seconds: float) -> str:
    \"\"\"`text`, after `seconds`: a call still running when its replica dies.\"\"\"
    record("hold", text=text)
    time.sleep(seconds)
    return text


server.run()
"""


class FleetError(RuntimeError):
    """A part of the fleet did not start or stop in time (the message says which and why)."""


Headers = Callable[[], Mapping[str, str]]


@dataclass(frozen=True)
class Auth:
    """How replicas check callers (their flags and environment) and what a client sends."""

    options: tuple[str, ...]
    env: Mapping[str, str]
    headers: Headers


def token_auth(token: str = TOKEN) -> Auth:
    """`--auth token` with the shared token from PLUGMAN_GATEWAY_TOKEN."""
    return Auth(
        ("--auth", "token"),
        {TOKEN_VARIABLE: token},
        lambda: {"Authorization": f"Bearer {token}"},
    )


@dataclass(frozen=True)
class ReplicaSpec:
    """One replica's name, extra `plugman mcp serve` flags and extra environment."""

    name: str
    options: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    config: str = ""  # more user-scope plugman.toml (other servers)
    managed: str = ""  # the organization's managed-settings.toml (gatewayAccess rules)
    solo: bool = False  # not behind the balancer, no shared Redis: a lone replica


@dataclass(frozen=True)
class Record:
    """One call as the backend saw it: which replica's backend ran it, and its arguments."""

    replica: str
    pid: int
    tool: str
    arguments: Mapping[str, Any]


# --- processes ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def spawn(argv: Sequence[str], env: Mapping[str, str], log: Path) -> subprocess.Popen[bytes]:
    """`argv` in its own process group (so it and its children stop together), its output
    appended to `log`, in `log`'s folder (so `-m plugman` imports no `plugman/` of the caller's
    working directory: the bench runs replicas from the tree on PYTHONPATH)."""
    with log.open("ab") as out:
        return subprocess.Popen(
            list(argv),
            cwd=log.parent,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def signal_group(proc: subprocess.Popen[bytes], signum: int) -> None:
    try:
        os.killpg(proc.pid, signum)
    except ProcessLookupError:
        return


def stop(proc: subprocess.Popen[bytes] | None, timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM to the process group, then SIGKILL if it is not gone within `timeout`."""
    if proc is None:
        return
    if proc.poll() is None:
        signal_group(proc, signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            signal_group(proc, signal.SIGKILL)
            proc.wait(timeout)
    signal_group(proc, signal.SIGKILL)  # whatever of its group outlived it


def kill(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the whole process group, as a node losing the pod would."""
    signal_group(proc, signal.SIGKILL)
    proc.wait(STOP_TIMEOUT)


def marked(run: Path) -> list[int]:
    """Live processes whose environment carries this fleet's marker."""
    marker = f"{MARKER}={run}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                found += [] if state in ("Z", "X") else [int(entry.name)]
        except OSError:
            continue
    return found


def kill_marked(run: Path) -> list[int]:
    """SIGKILL every process still carrying the marker; the pids that were left."""
    left = marked(run)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
    return left


def wait_until(
    ready: Callable[[], bool],
    what: str,
    timeout: float = START_TIMEOUT,
    proc: subprocess.Popen[bytes] | None = None,
    log: Path | None = None,
) -> float:
    """Poll `ready` (every 50 ms at first, then up to 250 ms) until true: the seconds it took.
    Raises FleetError on the deadline, or as soon as `proc` exits."""
    started = time.monotonic()
    pause = 0.05
    while not ready():
        said = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
        if proc is not None and proc.poll() is not None:
            raise FleetError(f"{what}: the process exited with {proc.returncode}\n{said}")
        if time.monotonic() - started > timeout:
            raise FleetError(f"{what}: not ready within {timeout:g} s\n{said}")
        time.sleep(pause)
        pause = min(pause * 1.5, 0.25)
    return time.monotonic() - started


def environment(run: Path, **more: str) -> dict[str, str]:
    """This process's environment with the fleet's marker, without any gateway token or Redis
    URL of the caller's."""
    env = {k: v for k, v in os.environ.items() if k not in (TOKEN_VARIABLE, REDIS_VARIABLE)}
    return {**env, MARKER: str(run), **more}


# --- redis ---------------------------------------------------------------------------------


class Redis:
    """redis-server on a loopback port, in memory only; `restart()` keeps the port."""

    def __init__(self, run: Path) -> None:
        self.run = run
        self.port = free_port()
        self.log = run / "redis.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        argv = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        argv += ["--save", "", "--appendonly", "no", "--dir", str(self.run)]
        self.proc = spawn(argv, environment(self.run), self.log)
        wait_until(self.ping, "redis-server", proc=self.proc, log=self.log)

    def stop(self) -> None:
        stop(self.proc)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def ping(self) -> bool:
        return self.command("PING") == b"+PONG"

    def command(self, *words: str) -> bytes:
        """One command over RESP; the first line of the answer (b"" when nothing answers)."""
        request = f"*{len(words)}\r\n" + "".join(f"${len(w)}\r\n{w}\r\n" for w in words)
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
                sock.sendall(request.encode())
                return sock.recv(4096).split(b"\r\n", 1)[0]
        except OSError:
            return b""


# --- replicas ------------------------------------------------------------------------------


def write_config(home: Path, backend: Path, more: str = "", managed: str = "") -> None:
    """User scope: the stdio backend `who` (with `more` user-scope TOML after it); `managed`:
    the organization's managed-settings.toml, if any."""
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "plugman.toml").write_text(
        f"[mcp_servers.{BACKEND_NAME}]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(backend))}]\n{more}"
    )
    if managed:
        (home / "managed").mkdir(parents=True, exist_ok=True)
        (home / "managed" / "managed-settings.toml").write_text(managed)


class Replica:
    """One `plugman mcp serve --transport http --stateless` on a fixed loopback port."""

    def __init__(self, run: Path, spec: ReplicaSpec, auth: Auth, backend: Path) -> None:
        self.run, self.spec, self.auth = run, spec, auth
        self.name = spec.name
        self.port = free_port()
        self.home = run / spec.name
        self.project = self.home / "project"
        self.project.mkdir(parents=True, exist_ok=True)
        write_config(self.home, backend, spec.config, spec.managed)
        self.log = run / f"{spec.name}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def argv(self) -> list[str]:
        return [
            *(sys.executable, "-m", "plugman", "--project", str(self.project)),
            *("mcp", "serve", "--transport", "http", "--stateless"),
            *("--host", "127.0.0.1", "--port", str(self.port)),
            *self.auth.options,
            *self.spec.options,
        ]

    def env(self) -> dict[str, str]:
        own = {
            "PLUGMAN_HOME": str(self.home),
            "PLUGMAN_MANAGED_DIR": str(self.home / "managed"),
            "PLUGMAN_SECRETS": "file",
            REPLICA: self.name,
            RECORDS: str(self.run / "records"),
        }
        return environment(self.run, **own, **self.auth.env, **self.spec.env)

    def start(self) -> None:
        """Spawn it; `wait()` for it to serve."""
        self.proc = spawn(self.argv(), self.env(), self.log)

    def wait(self) -> None:
        """Until it lists the backend's tools when asked directly (its backend is up)."""

        def serving() -> bool:
            status, answer = rpc(self.url, "tools/list", {}, self.auth.headers())
            names = {t["name"] for t in answer.get("result", {}).get("tools", [])}
            return status == 200 and names >= BACKEND_TOOLS

        wait_until(serving, f"replica {self.name}", proc=self.proc, log=self.log)

    def stop(self) -> None:
        stop(self.proc)

    def kill(self) -> None:
        assert self.proc is not None
        kill(self.proc)

    def restart(self) -> None:
        """Stop it (if it still runs), start it again on its port, and wait until it serves."""
        self.stop()
        self.start()
        self.wait()


def rpc(
    url: str,
    method: str,
    params: Mapping[str, Any],
    headers: Mapping[str, str],
    timeout: float = 10.0,
) -> tuple[int, dict[str, Any]]:
    """One 2026-07-28 request (no session, `_meta` on the request), blocking: the HTTP status
    and the JSON body (empty when there is none, or when nothing answered: status 0)."""
    host, _, rest = url.removeprefix("http://").partition("/")
    name, _, port = host.rpartition(":")
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "fleet-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    sent = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Mcp-Protocol-Version": MODERN,
        "Mcp-Method": method,
        **({"Mcp-Name": str(params["name"])} if "name" in params else {}),
        **headers,
    }
    connection = http.client.HTTPConnection(name, int(port), timeout=timeout)
    try:
        connection.request("POST", f"/{rest}", json.dumps(body), sent)
        response = connection.getresponse()
        data = response.read()
    except OSError:
        return 0, {}
    finally:
        connection.close()
    try:
        found = json.loads(data) if data else {}
    except ValueError:
        found = {}
    return response.status, found if isinstance(found, dict) else {}


# --- the balancer --------------------------------------------------------------------------


def haproxy_config(port: int, stats: int, replicas: Sequence[Replica]) -> str:
    """HAProxy 2.6: round robin over the replicas, health-checked, retried on connection
    failure only (see the module docstring)."""
    path, expect = HEALTH
    servers = "".join(
        f"    server {r.name} 127.0.0.1:{r.port} check inter 200 fall 1 rise 2\n" for r in replicas
    )
    return (
        "global\n    maxconn 4096\n\n"
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 60s\n"
        "    timeout server 60s\n    timeout check 2s\n    retries 3\n"
        "    option redispatch 1\n    retry-on conn-failure\n\n"
        f"frontend mcp\n    bind 127.0.0.1:{port}\n    default_backend replicas\n\n"
        "backend replicas\n    balance roundrobin\n    option httpchk\n"
        f"    http-check send meth GET uri {path} ver HTTP/1.1 hdr Host 127.0.0.1\n"
        f"    http-check expect {expect}\n{servers}\n"
        f"listen stats\n    bind 127.0.0.1:{stats}\n    stats enable\n    stats uri /stats\n"
    )


class Balancer:
    """`haproxy -f cfg -db` in front of the replicas."""

    def __init__(self, run: Path, replicas: Sequence[Replica]) -> None:
        self.run = run
        self.port, self.stats = free_port(), free_port()
        self.config = run / "haproxy.cfg"
        self.config.write_text(haproxy_config(self.port, self.stats, replicas))
        self.log = run / "haproxy.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self, up: int) -> None:
        """Start it and wait until `up` replicas pass their health checks."""
        argv = ["haproxy", "-f", str(self.config), "-db"]
        self.proc = spawn(argv, environment(self.run), self.log)
        wait_until(lambda: len(self.up()) >= up, "haproxy", proc=self.proc, log=self.log)

    def up(self) -> set[str]:
        """The replicas HAProxy's health checks have marked UP (its stats, as CSV)."""
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.stats, timeout=2)
            connection.request("GET", "/stats;csv")
            lines = connection.getresponse().read().decode().splitlines()
            connection.close()
        except OSError:
            return set()
        if not lines:
            return set()
        header = lines[0].removeprefix("# ").split(",")
        rows = [dict(zip(header, line.split(","), strict=False)) for line in lines[1:]]
        return {
            row["svname"]
            for row in rows
            if row.get("pxname") == "replicas"
            and row.get("status") == "UP"
            and row["svname"] not in ("FRONTEND", "BACKEND")
        }

    def stop(self) -> None:
        stop(self.proc)


# --- the fleet -----------------------------------------------------------------------------


@dataclass
class Fleet:
    run: Path
    auth: Auth
    redis: Redis | None
    replicas: list[Replica]
    balancer: Balancer
    swept: list[int] = field(default_factory=list)  # pids only the final sweep stopped

    @property
    def url(self) -> str:
        return self.balancer.url

    def replica(self, name: str) -> Replica:
        return next(r for r in self.replicas if r.name == name)

    def records(self) -> list[Record]:
        """Every call the backends ran, in file order per backend process."""
        found = []
        for path in sorted((self.run / "records").glob("*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                data = json.loads(line)
                replica, pid, tool = data.pop("replica"), data.pop("pid"), data.pop("tool")
                found.append(Record(replica, pid, tool, data))
        return found


def replica_specs(count: int) -> list[ReplicaSpec]:
    return [ReplicaSpec(f"r{i}") for i in range(1, count + 1)]


@contextmanager
def fleet(
    run: Path,
    replicas: int | Sequence[ReplicaSpec] = 3,
    auth: Auth | None = None,
    redis: bool = True,
    share_redis: bool = False,
) -> Iterator[Fleet]:
    """Redis (unless `redis` is false), the replicas and HAProxy, started in that order and all
    stopped on exit. `replicas`: a count (r1, r2, ...) or their specs; `share_redis`: every
    replica but a solo one gets PLUGMAN_REDIS_URL (the shared limits' store); HAProxy balances
    over all but the solo ones."""
    specs = replica_specs(replicas) if isinstance(replicas, int) else list(replicas)
    auth = auth or token_auth()
    run.mkdir(parents=True, exist_ok=True)
    (run / "records").mkdir(exist_ok=True)
    backend = run / "who.py"
    backend.write_text(BACKEND)
    swept: list[int] = []
    with ExitStack() as stack:
        stack.callback(lambda: swept.extend(kill_marked(run)))
        store = Redis(run) if redis or share_redis else None
        if store is not None:
            stack.callback(store.stop)
            store.start()
        if share_redis and store is not None:
            shared = {REDIS_VARIABLE: store.url}
            specs = [s if s.solo else replace(s, env={**shared, **s.env}) for s in specs]
        started = [Replica(run, spec, auth, backend) for spec in specs]
        for replica in started:
            stack.callback(replica.stop)
            replica.start()  # all at once: they start in parallel
        for replica in started:
            replica.wait()
        balanced = [replica for replica in started if not replica.spec.solo]
        balancer = Balancer(run, balanced)
        stack.callback(balancer.stop)
        balancer.start(up=len(balanced))
        yield Fleet(run, auth, store, started, balancer, swept)


@asynccontextmanager
async def client(url: str, headers: Headers, mode: str = "auto") -> AsyncIterator[Any]:
    """The SDK's `mcp.Client` over streamable HTTP at `url`, every request carrying
    `headers()` (asked per request). `mode`: "auto" (the default: a 2026-07-28 client against
    this gateway) or "legacy" (a 2025-era client: initialize, then its session)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def authorize(request: httpx2.Request) -> None:
        request.headers.update(dict(headers()))

    web = httpx2.AsyncClient(event_hooks={"request": [authorize]}, timeout=30)
    transport = streamable_http_client(url, http_client=web)
    async with web, Client(transport, mode=mode, read_timeout_seconds=30) as session:
        yield session

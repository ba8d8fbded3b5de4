"""Attacks on the server launch plans (issue 36): `plugman mcp run NAME` starts a server from a
plan written at deploy time, without resolving, and reads its secrets from the file store at
start; whatever would stop the server or change what it gets in a resolve must do so at the
very next start through the plan too, and no secret may be in a plan, a file or argv.

The invariant attacked (runtime.launch.server_plans, server_start, planfile): a plan holds the
entry before expansion and the store keys its secrets live under (never a value); it is used
only while every file the resolution read is as it was, in the same environment, with the
same secret-store keys present and the same variables set; else the full launcher runs (and
refuses, or takes the new value). Each case runs `python -m plugman mcp run NAME` as a linked
agent's user file names it (in the project, no --project), with PLUGMAN_LAUNCH_TRACE telling
which path each start took, and a server that reports what it got (its argv, folder, and the
digest of its key) and waits on stdin, so its real /proc/PID/cmdline can be read.
"""

from __future__ import annotations

import hashlib
import json
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.attacks.test_secrets_launch import DB_PASSWORD, KEY, Machine

NAME = "plugin:weather:local"
KEY2 = "uc-planted-second-4d1e"
REPORT = """
import hashlib, json, os, sys
drop = ("PLUGMAN_NO_PLANS", "PLUGMAN_LAUNCH_TRACE")
seen = {k: v for k, v in os.environ.items() if k not in drop}
for name in ("WEATHER_TOKEN", "DB_PASSWORD"):
    if name in seen:
        seen[name] = hashlib.sha256(seen[name].encode()).hexdigest()
with open(sys.argv[1], "w") as out:
    json.dump({"pid": os.getpid(), "argv": sys.argv[1:], "cwd": os.getcwd(), "env": seen}, out)
sys.stdin.read()
"""


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class Servers(Machine):
    """The attacks' machine, with Codex linked at project scope (its file names `mcp run`)."""

    def __init__(self, tmp: Path, plugman_home: Path, seen: list[str]) -> None:
        super().__init__(tmp, plugman_home, seen)
        self.trace = tmp / "trace"
        self.report = tmp / "report.json"
        self.plans = plugman_home / "state" / "plans"

    def weather(self) -> None:
        """The weather plugin, its sensitive key in its server's env, its server reporting."""
        root = self.tmp / "market"
        plugin = root / "weather"
        (plugin / ".claude-plugin").mkdir(parents=True)
        server = {
            "command": sys.executable,
            "args": ["${CLAUDE_PLUGIN_ROOT}/server.py", str(self.report), "${REGION:-north}"],
            "env": {"WEATHER_TOKEN": "${user_config.api_key}", "UNITS": "${user_config.units}"},
        }
        data = {
            "name": "weather", "version": "1.0.0", "description": "Weather data",
            "userConfig": {
                "api_key": {"type": "string", "title": "API key", "description": "Your key",
                            "sensitive": True, "required": True},
                "units": {"type": "string", "title": "Units", "description": "U", "default": "si"},
            },
            "mcpServers": {"local": server},
        }  # fmt: skip
        (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps(data))
        (plugin / "server.py").write_text(REPORT)
        (root / ".claude-plugin").mkdir()
        catalog = {"name": "wx", "owner": {"name": "t"},
                   "plugins": [{"name": "weather", "source": "./weather"}]}  # fmt: skip
        (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
        self.run("marketplace", "add", str(root))
        self.run("install", "weather@wx", "--config", f"api_key={KEY}")

    def start(self, name: str = NAME, **more: str) -> subprocess.CompletedProcess[str]:
        """`python -m plugman mcp run NAME` in the project, as Codex starts it; the server
        reports and is let go (stdin closed)."""
        self.report.unlink(missing_ok=True)
        env = {**self.vars, "PLUGMAN_LAUNCH_TRACE": str(self.trace), **more}
        proc = subprocess.Popen(
            [sys.executable, "-m", "plugman", "mcp", "run", name], env=env, cwd=self.project,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while not self.report.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        cmdline = b""
        if self.report.exists() and proc.poll() is None:
            time.sleep(0.05)  # the report is whole once the server reads stdin
            cmdline = (Path("/proc") / str(proc.pid) / "cmdline").read_bytes()
        out, err = proc.communicate("", timeout=60)
        self.seen += [out, err]
        assert KEY.encode() not in cmdline and KEY2.encode() not in cmdline, cmdline
        assert DB_PASSWORD.encode() not in cmdline, cmdline
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def got(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.report.read_text())
        return data

    def taken(self) -> list[str]:
        lines = self.trace.read_text().splitlines() if self.trace.exists() else []
        self.trace.unlink(missing_ok=True)
        return [line.split()[0] for line in lines]

    def server_plans(self) -> list[Path]:
        return sorted(self.plans.rglob("server.*.json")) if self.plans.exists() else []


@pytest.fixture
def machine(tmp_path: Path, isolated_home: Path, secret_scan: list[str]) -> Servers:
    found = Servers(tmp_path, isolated_home, secret_scan)
    (found.project / ".git").mkdir()  # the project the launcher finds from its folder
    return found


def linked(machine: Servers) -> None:
    """The weather plugin installed for the user, Codex linked for the user: its file names
    this interpreter's `-m plugman mcp run NAME` (what Servers.start runs)."""
    machine.weather()
    machine.run("agents", "add", "codex", "--scope", "user")
    text = (machine.home / ".codex" / "config.toml").read_text()
    assert f'"-m", "plugman", "mcp", "run", "{NAME}"' in text and KEY not in text, text
    assert machine.server_plans(), "no server plan written at deploy"


def from_its_plan(machine: Servers, token: str = KEY) -> dict[str, Any]:
    done = machine.start()
    assert done.returncode == 0, done.stderr
    assert machine.taken() == ["plan"], done.stderr
    got = machine.got()
    assert got["env"]["WEATHER_TOKEN"] == digest(token)
    return got


def refused(machine: Servers, said: str) -> None:
    done = machine.start()
    assert done.returncode == 1 and said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not machine.report.exists()
    assert machine.taken() == ["full"]


def test_plan_at_deploy_starts_the_server_with_its_secret_read_at_start(
    machine: Servers,
) -> None:
    """The plan is written at deploy (0600, in plugman's state folder only), holds the store key
    of the sensitive option, never its value (secret_scan: no file under PLUGMAN_HOME but the
    store holds it); the start takes the plan and the server gets the key in its environment,
    not in its /proc/PID/cmdline (Servers.start)."""
    linked(machine)
    for plan in machine.server_plans():
        assert stat.S_IMODE(plan.stat().st_mode) == 0o600
        text = plan.read_text()
        assert KEY not in text and "plugin-config:weather@wx:api_key" in text
    got = from_its_plan(machine)
    assert got["argv"][1:] == ["north"] and got["env"]["UNITS"] == "si"
    assert got["cwd"] == str(machine.project.resolve())


def test_plan_and_full_launcher_give_the_server_the_same(machine: Servers) -> None:
    """Parity: argv, folder and environment (the key by its digest) as the full launcher gives
    them, with a default taken and then a variable set (which the plan did not see: the full
    launcher runs, and writes the plan for it)."""
    linked(machine)
    planned = from_its_plan(machine)
    assert machine.start(PLUGMAN_NO_PLANS="1").returncode == 0
    assert machine.taken() == ["full"]
    full = machine.got()
    assert {**planned, "pid": 0} == {**full, "pid": 0}
    assert machine.start(REGION="south").returncode == 0
    assert machine.taken() == ["full"] and machine.got()["argv"][1:] == ["south"]
    assert machine.start(REGION="south").returncode == 0
    assert machine.taken() == ["plan"] and machine.got()["argv"][1:] == ["south"]


def test_configure_changes_the_next_start(machine: Servers) -> None:
    """`configure` a new key (only the secret store changes for a sensitive option): the next
    start gets it; a new non-sensitive value too."""
    linked(machine)
    from_its_plan(machine)
    machine.run("configure", "weather", f"api_key={KEY2}")
    from_its_plan(machine, KEY2)
    machine.run("configure", "weather", "units=imperial")
    assert from_its_plan(machine, KEY2)["env"]["UNITS"] == "imperial"


def test_store_changed_behind_the_plan(machine: Servers) -> None:
    """Attack: the secret store edited outside plugman (a key removed): the plan's store keys
    no longer hold values; the full launcher runs and refuses (needs-config), nothing starts."""
    linked(machine)
    from_its_plan(machine)
    store = Path(machine.vars["PLUGMAN_HOME"]) / "config" / "secrets.json"
    data = json.loads(store.read_text())
    store.write_text(json.dumps({k: v for k, v in data.items() if "api_key" not in k}))
    refused(machine, "needs-config")


def test_policy_arriving_later_stops_the_next_start(machine: Servers) -> None:
    """Attack: a managed policy denying the server arrives after the plan was written (no
    plugman command runs): the next start refuses it."""
    linked(machine)
    from_its_plan(machine)
    managed = Path(machine.vars["PLUGMAN_HOME"]) / "managed"
    managed.mkdir()
    (managed / "managed-settings.toml").write_text(
        f'deniedMcpServers = [{{ serverName = "{NAME}" }}]\n'
    )
    machine.vars["PLUGMAN_MANAGED_DIR"] = str(managed)
    refused(machine, "policy")


def test_plugin_disabled_stops_the_next_start(machine: Servers) -> None:
    linked(machine)
    from_its_plan(machine)
    machine.run("disable", "weather")
    assert not machine.server_plans()
    refused(machine, "is disabled")


def test_a_keychain_is_a_doubt(machine: Servers) -> None:
    """A D-Bus session where the plan saw none (so the store may be a keychain): the full
    launcher runs, with the same result."""
    linked(machine)
    machine.vars.pop("PLUGMAN_SECRETS")
    machine.run("agents", "add", "codex", "--scope", "user")  # plans for this environment
    from_its_plan(machine)
    done = machine.start(DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent")
    assert done.returncode == 0 and machine.taken() == ["full"], done.stderr
    assert machine.got()["env"]["WEATHER_TOKEN"] == digest(KEY)


def project_server(machine: Servers) -> None:
    """The project's own server, its password an `mcp vars` value, approved, Codex linked."""
    script = machine.project / "db.py"
    script.write_text(REPORT)
    machine.run("mcp", "vars", "set", "DB_PASSWORD", stdin=DB_PASSWORD + "\n")
    entry = {"command": sys.executable, "args": ["db.py", str(machine.report)],
             "env": {"DB_PASSWORD": "${DB_PASSWORD}"}}  # fmt: skip
    mcp = {"mcpServers": {"db": entry}}
    (machine.project / ".mcp.json").write_text(json.dumps(mcp))
    machine.run("trust", "approve", "db")
    machine.run("agents", "add", "codex", "--scope", "project")
    done = machine.start("db")
    assert done.returncode == 0 and machine.taken() == ["plan"], done.stderr
    assert machine.got()["env"]["DB_PASSWORD"] == digest(DB_PASSWORD)


def test_mcp_vars_set_and_the_environment(machine: Servers) -> None:
    """`mcp vars set` a new value: the next start gets it; the variable set where the agent
    runs wins over the store, as in a resolve (the plan did not see it set: full)."""
    project_server(machine)
    machine.run("mcp", "vars", "set", "DB_PASSWORD", stdin="db-second-value-9e\n")
    assert machine.start("db").returncode == 0
    assert machine.taken() == ["plan"]
    assert machine.got()["env"]["DB_PASSWORD"] == digest("db-second-value-9e")
    assert machine.start("db", DB_PASSWORD="from-env").returncode == 0
    assert machine.taken() == ["full"]
    assert machine.got()["env"]["DB_PASSWORD"] == digest("from-env")


def test_approved_script_changed_or_revoked(machine: Servers) -> None:
    """Attack: the approved project server's script changes (a `git pull`): the next start
    waits for approval again. And `trust revoke`: refused too."""
    project_server(machine)
    (machine.project / "db.py").write_text(REPORT + "\nopen('evil', 'w')\n")
    refused_start = machine.start("db")
    assert refused_start.returncode == 1 and "pending-approval" in refused_start.stderr
    assert machine.taken() == ["full"] and not machine.report.exists()
    machine.run("trust", "approve", "db")  # approved again: its deployment plans it again
    assert machine.start("db").returncode == 0 and machine.taken() == ["plan"]
    machine.run("trust", "revoke", "db")
    done = machine.start("db")
    assert done.returncode == 1 and "pending-approval" in done.stderr
    assert machine.taken() == ["full"]


def test_plans_hold_no_secret_and_live_in_state_only(machine: Servers) -> None:
    linked(machine)
    project_server(machine)
    for plan in machine.server_plans():
        text = plan.read_text()
        assert KEY not in text and DB_PASSWORD not in text
    home = Path(machine.vars["PLUGMAN_HOME"])
    found = [*machine.tmp.rglob("server.*.json"), *home.rglob("server.*.json")]
    assert found and all(p.is_relative_to(home / "state" / "plans") for p in found), found

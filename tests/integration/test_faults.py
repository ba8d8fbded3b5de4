"""Faults in every mutating command: SIGKILL at every journaled step and at hundreds of random
moments (then the next command's recovery), and a full disk or a denied path at every durable
write (then a clean rollback and a plain message). After each, every file under the run's root
(plugman's home, the project, the agent's home) is byte-for-byte the old or the new state.

Commands run in processes forked from a server that has plugman imported, so a run costs
milliseconds and a kill can land anywhere in the command's own work.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import re
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

from plugman.core.paths import Paths
from plugman.core.session import session
from tests.conftest import SAMPLES

KILL_POINTS = ("journal", "write", "store", "commit")
IO_FAULTS = ("enospc", "eacces")
# Random kills land in the command's run (up to 1.05 times how long an undisturbed run took):
# 350 of them put as many kills inside the run as the 500 over 1.5 times its length before.
RANDOM_KILLS = int(os.environ.get("PLUGMAN_RANDOM_KILLS", "350"))
KILL_WINDOW = 1.05
TIMESTAMPS = {"installed_at", "updated", "approved_at"}
INSTALL = ["install", "guardrails", "writing-skills", "--scope", "project"]
MARKET = ["marketplace", "add", "./market"]
LINK = ["agents", "add", "claude-code", "gemini", "codex", "--scope", "project"]
CLAUDE_JSON = '{\n  "numStartups": 2,\n  "mcpServers": {\n    "mine": {"command": "x"}\n  }\n}\n'


class Scenario(NamedTuple):
    setup: list[list[str]]  # commands that build the old state
    args: list[str]  # the command under test
    prepare: Callable[[Path], None] | None = None  # file edits after setup


def touch_market(root: Path) -> None:
    for name in ("guardrails", "writing-skills"):
        (root / "project" / "market" / "plugins" / name / "README.md").write_text("new\n")


def forget_home(root: Path) -> None:
    shutil.rmtree(root / "home")


def agent_file(root: Path) -> None:
    (root / "agent").mkdir(exist_ok=True)
    (root / "agent" / ".claude.json").write_text(CLAUDE_JSON)


def project_servers(root: Path) -> None:
    servers = {"a": {"command": "run-a"}, "b": {"url": "https://b.example.com/mcp"}}
    (root / "project" / ".mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2))


EXPORT_SETUP = [
    MARKET,
    ["install", "notes-server", "guardrails"],
    ["mcp", "add", "tool", "-s", "user", "--", "run-tool"],
]
SCENARIOS: dict[str, Scenario] = {
    "install": Scenario([MARKET], INSTALL),
    "uninstall": Scenario(
        [MARKET, INSTALL], ["uninstall", "guardrails", "writing-skills", "--scope", "project"]
    ),
    "update": Scenario([MARKET, INSTALL], ["update", "--scope", "project"], touch_market),
    "sync": Scenario([[*MARKET, "--scope", "project"], INSTALL], ["sync"], forget_home),
    "marketplace-add": Scenario([], MARKET),
    "marketplace-update": Scenario([MARKET], ["marketplace", "update"], touch_market),
    "marketplace-remove": Scenario([MARKET], ["marketplace", "remove", "plugman-samples"]),
    "export-write": Scenario(
        EXPORT_SETUP, ["export", "--target", "claude-code", "--write"], agent_file
    ),
    "export-remove": Scenario(
        [*EXPORT_SETUP, ["export", "--target", "claude-code", "--write"]],
        ["export", "--target", "claude-code", "--remove"],
        agent_file,
    ),
    "mcp-add": Scenario(
        [], ["mcp", "add", "tool", "-s", "project", "--", "run-tool", "--fast"], project_servers
    ),
    "mcp-remove": Scenario(
        [
            ["mcp", "add", "other", "-s", "project", "--", "run-other"],
            ["mcp", "add", "tool", "-s", "project", "--", "run-tool"],
        ],
        ["mcp", "remove", "tool", "-s", "project"],
    ),
    "trust-approve": Scenario([], ["trust", "approve", "--all"], project_servers),
    # linked agents: their files are deployed in the command's own transaction
    "install-linked": Scenario([MARKET, LINK, ["agents", "add", "gemini"]], INSTALL, agent_file),
    "uninstall-linked": Scenario(
        [MARKET, LINK, INSTALL], ["uninstall", "guardrails", "--scope", "project"], agent_file
    ),
    "agents-add": Scenario([MARKET, INSTALL], LINK, agent_file),
    # a command and two subagents: Gemini's .toml commands and .md agents, Codex's command
    # skills and .toml agents, and Claude Code's generated marketplace, in one transaction
    "install-components-linked": Scenario(
        [MARKET, LINK], ["install", "code-review", "--scope", "project"], agent_file
    ),
    "agents-remove": Scenario(
        [MARKET, INSTALL, LINK],
        ["agents", "remove", "claude-code", "gemini", "codex", "--scope", "project"],
        agent_file,
    ),
    "mcp-add-local": Scenario([], ["mcp", "add", "tool", "-s", "local", "--", "run-tool"]),
    "mcp-remove-local": Scenario(
        [["mcp", "add", "tool", "-s", "local", "--", "run-tool"]],
        ["mcp", "remove", "tool", "-s", "local"],
    ),
}


def environment(root: Path) -> dict[str, str]:
    return {
        "PLUGMAN_HOME": str(root / "home"),
        "PLUGMAN_MANAGED_DIR": str(root / "managed"),
        "HOME": str(root / "agent"),
    }


def _child(root: str, args: list[str], fault: str | None, log: str) -> None:
    """The command, in a process forked from the server (plugman already imported)."""
    os.environ.update(environment(Path(root)))
    os.environ.pop("PLUGMAN_FAULT", None)
    os.environ.pop("XDG_CONFIG_HOME", None)
    if fault:
        os.environ["PLUGMAN_FAULT"] = fault
    handle = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(handle, 1)
    os.dup2(handle, 2)
    from plugman.cli.app import run as run_app

    code = 1
    try:
        code = run_app(["--project", str(Path(root) / "project"), *args])
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


_context = multiprocessing.get_context("forkserver")
_context.set_forkserver_preload(
    ["plugman.cli.app", "plugman.commands.install", "plugman.agents.export", "tomlkit", __name__]
)


def start(
    root: Path, args: list[str], fault: str | None = None
) -> multiprocessing.process.BaseProcess:
    process = _context.Process(
        target=_child, args=(str(root), args, fault, str(root.parent / "log"))
    )
    process.start()
    return process


def run(root: Path, args: list[str], fault: str | None = None) -> tuple[int, str]:
    process = start(root, args, fault)
    process.join(120)
    return process.exitcode or 0, (root.parent / "log").read_text()


def recover(root: Path) -> None:
    """What the next mutating command does first: take the lock and roll back."""
    paths = Paths.from_env(environment(root), project=root / "project")
    with session(paths):
        pass


CACHES = "home/data/store/.loaded"  # plugman.manifest.stored
PLANS = "home/state/plans/"  # plugman.runtime.launch.plans


def state(root: Path, home: bool = True) -> dict[str, bytes]:
    """Every file (with its mode) and folder under the root, with timestamps and the root path
    masked. plugman's lock file and folders in its home that hold no other file are not
    counted: plugman keeps its standard folders and its lock once made. With `home=False`,
    nothing under plugman's home is read (a killed command's staging copy there may be half
    written: no reader reads it). The store's load caches (`home/data/store/.loaded`) are not
    state either: each is used only when it names its tree's content address and the loader
    that wrote it, so one written by a killed command changes nothing any reader sees."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel == "home/state/lock" or (not home and rel.split("/")[0] == "home"):
            continue
        if rel.startswith(CACHES):
            continue
        if path.is_dir():
            if rel.split("/")[0] != "home" or any(
                p.is_file() and p.name != "lock" for p in path.rglob("*")
            ):
                found[rel] = b"<dir>"
            continue
        data = path.read_bytes().replace(str(root).encode(), b"<ROOT>")
        if path.suffix == ".json" and "agent" not in rel:
            try:
                loaded = json.loads(data)
                if rel.startswith(PLANS):  # digests of watched files, timestamps among them
                    loaded = _digests_masked(loaded)
                data = json.dumps(_masked(loaded), sort_keys=True).encode()
            except ValueError as exc:
                raise AssertionError(f"{rel}: not JSON after the kill: {data[:200]!r}") from exc
        found[rel] = data + f"\n<mode {oct(path.stat().st_mode & 0o777)}>".encode()
    return found


def _digests_masked(value: object) -> object:
    """A launch plan's stamp (plugman.runtime.launch.planfile) with each watched file's digest
    masked: the install records it digests hold install times, which `_masked` masks."""
    if isinstance(value, list):
        return [_digests_masked(v) for v in value]
    if isinstance(value, dict):
        return {k: _digests_masked(v) for k, v in value.items()}
    if isinstance(value, str) and re.fullmatch(r"[fd]:[0-9a-f]{64}", value):
        return value[:2] + "<digest>"
    return value


def _masked(value: object) -> object:
    if isinstance(value, dict):
        return {k: "<time>" if k in TIMESTAMPS else _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


class Base(NamedTuple):
    saved: Path
    old: dict[str, bytes]
    new: dict[str, bytes]
    seconds: float  # how long an undisturbed run takes


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one path every run happens at (records are keyed by the project's absolute path)."""
    return tmp_path_factory.mktemp("faults") / "root"


_bases: dict[str, Base] = {}


def base(name: str, work: Path, tmp_path_factory: pytest.TempPathFactory) -> Base:
    if name in _bases:
        return _bases[name]
    scenario = SCENARIOS[name]
    shutil.rmtree(work, ignore_errors=True)
    (work / "project").mkdir(parents=True)
    (work / "agent").mkdir()
    shutil.copytree(SAMPLES, work / "project" / "market", ignore=shutil.ignore_patterns("invalid"))
    for args in scenario.setup:
        code, log = run(work, args)
        assert code == 0, (args, log)
    if scenario.prepare:
        scenario.prepare(work)
    saved = tmp_path_factory.mktemp(f"base-{name}") / "root"
    shutil.copytree(work, saved, symlinks=True)
    old = state(work)
    began = time.perf_counter()
    code, log = run(work, scenario.args)
    seconds = time.perf_counter() - began
    assert code == 0, (scenario.args, log)
    _bases[name] = Base(saved, old, state(work), seconds)
    return _bases[name]


def fresh(found: Base, work: Path) -> None:
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(found.saved, work, symlinks=True)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_kill_at_every_journaled_step(
    name: str,
    work: Path,
    tmp_path_factory: pytest.TempPathFactory,
    record_property: Callable[[str, object], None],
) -> None:
    found = base(name, work, tmp_path_factory)
    kills = 0
    for point in KILL_POINTS:
        for count in range(1, 200):
            fresh(found, work)
            code, log = run(work, SCENARIOS[name].args, f"{point}:{count}")
            recover(work)
            now = state(work)
            assert now in (found.old, found.new), (point, count, log, _diff(now, found))
            if code != -9:
                assert code == 0 and now == found.new, (point, count, log)
                break
            kills += 1
    assert kills >= 2
    record_property("summary", f"faults: {name} killed at {kills} journaled steps, recovered")


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_kill_at_random_moments(
    name: str,
    work: Path,
    tmp_path_factory: pytest.TempPathFactory,
    record_property: Callable[[str, object], None],
) -> None:
    found = base(name, work, tmp_path_factory)
    rng = random.Random(f"plugman-{name}")
    outcomes = {"old": 0, "new": 0}
    fresh(found, work)
    for attempt in range(RANDOM_KILLS):
        process = start(work, SCENARIOS[name].args)
        time.sleep(rng.uniform(0, found.seconds * KILL_WINDOW))
        process.kill()
        process.join(60)
        recover(work)
        now = state(work)
        assert now in (found.old, found.new), (attempt, _diff(now, found))
        outcomes["old" if now == found.old else "new"] += 1
        if now != found.old:  # rolled back, the tree is the old state again: no copy needed
            fresh(found, work)
    record_property(
        "summary",
        f"faults: {name} killed at {RANDOM_KILLS} random moments "
        f"({outcomes['old']} rolled back, {outcomes['new']} had committed)",
    )


@pytest.mark.parametrize("fault", IO_FAULTS)
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_disk_full_and_permission_denied_at_every_write(
    name: str,
    fault: str,
    work: Path,
    tmp_path_factory: pytest.TempPathFactory,
    record_property: Callable[[str, object], None],
) -> None:
    found = base(name, work, tmp_path_factory)
    failures = 0
    for count in range(1, 200):
        fresh(found, work)
        code, log = run(work, SCENARIOS[name].args, f"{fault}:{count}")
        now = state(work)
        if code == 0:
            assert now == found.new, (count, log)
            break
        failures += 1
        assert code == 1, (count, log)
        assert "Traceback" not in log and "nothing was changed" in log, (count, log)
        assert now == found.old, (count, log, _diff(now, found))
    assert failures >= 1
    record_property("summary", f"faults: {name} failed cleanly at {failures} writes ({fault})")


def _diff(found: dict[str, bytes], base: Base) -> str:
    near = min((base.old, base.new), key=lambda s: len(set(s.items()) ^ set(found.items())))
    extra = sorted(set(found) - set(near))
    missing = sorted(set(near) - set(found))
    changed = sorted(k for k in set(found) & set(near) if found[k] != near[k])
    return f"extra={extra} missing={missing} changed={changed}"

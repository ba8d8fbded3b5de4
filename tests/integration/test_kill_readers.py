"""Old or new at every instant, for readers: SIGKILLs at random moments of install, update and
uninstall with Claude Code, Gemini CLI and Codex linked at project scope, and after each, before
any mutating command runs, what a reader sees: every agent file and project file is its old or
its new bytes (each file is written once, atomically, at commit), and `list` and
`config resolve` (which roll back the journal a killed command left, as SQLite does a hot
journal) show the old or the new state, after which every file is the old or the new state.

The quick lane runs 30 kills; the slow lane 300 (`PLUGMAN_READER_KILLS` sets it).
A command that finds the lock held by a live command says a change is in progress, and does not
wait for it.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from plugman.core.paths import Paths
from plugman.core.session import collect
from plugman.core.store import Store
from tests.conftest import SAMPLES
from tests.integration.test_faults import (
    INSTALL,
    LINK,
    MARKET,
    SCENARIOS,
    Base,
    Scenario,
    _diff,
    agent_file,
    base,
    environment,
    fresh,
    run,
    start,
    state,
)

KILL_WINDOW = 1.05
TEMP = re.compile(r"\..+\.\d+\.tmp")
UPDATE = ["update", "--scope", "project"]


def change_market(root: Path) -> None:
    """New content for both plugins, a skill file among it (so agents' files change too)."""
    agent_file(root)
    plugins = root / "project" / "market" / "plugins"
    for name in ("guardrails", "writing-skills"):
        (plugins / name / "README.md").write_text("new\n")
    skill = plugins / "writing-skills" / "skills" / "commit-message" / "SKILL.md"
    skill.write_text(skill.read_text() + "\nKeep the subject under 50 characters.\n")


SCENARIOS.update(
    {
        "reader-install": Scenario([MARKET, LINK], INSTALL, agent_file),
        "reader-update": Scenario([MARKET, LINK, INSTALL], UPDATE, change_market),
        "reader-uninstall": Scenario(
            [MARKET, LINK, INSTALL],
            ["uninstall", "guardrails", "writing-skills", "--scope", "project"],
            agent_file,
        ),
    }
)
READERS = (["list"], ["config", "resolve", "--json"])
ROLLED_BACK = "rolled back a change a stopped plugman command left unfinished"


def readers(root: Path) -> list[str]:
    """What the read-only commands print (each exits 0)."""
    shown = []
    for args in READERS:
        code, log = run(root, args)
        assert code == 0, (args, log)
        lines = [line for line in log.splitlines() if ROLLED_BACK not in line]
        shown.append("\n".join(lines).replace(str(root), "<ROOT>"))
    return shown


def settled(root: Path) -> dict[str, bytes]:
    """The state once the store is cleared of what no record refers to (a killed command's
    staging folder, an old tree a command killed after its commit had yet to remove): no
    reader reads those, and the next mutating command clears them as this does
    (`session.collect`, which takes no journal and changes nothing a reader sees)."""
    paths = Paths.from_env(environment(root), project=root / "project")
    collect(paths, Store(paths.store_dir))
    return state(root)


def outside_home(found: dict[str, bytes]) -> dict[str, bytes]:
    """The files a reader other than plugman reads: the agents' and the project's (not an
    atomic write's temporary `.NAME.PID.tmp` a kill left beside its file: nothing reads it,
    and the rollback removes it)."""
    return {
        k: v
        for k, v in found.items()
        if not k.startswith("home/") and v != b"<dir>" and not TEMP.fullmatch(k.rsplit("/")[-1])
    }


def kills(
    name: str,
    count: int,
    work: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, int]:
    found: Base = base(name, work, tmp_path_factory)
    fresh(found, work)
    old_shown = readers(work)
    fresh(found, work)
    run(work, SCENARIOS[name].args)
    new_shown = readers(work)
    assert old_shown != new_shown
    old_files, new_files = outside_home(found.old), outside_home(found.new)
    assert old_files != new_files  # the agents' files change in this command
    rng = random.Random(f"plugman-readers-{name}")
    outcomes = {"old": 0, "new": 0, "journal-left": 0}
    fresh(found, work)
    for attempt in range(count):
        process = start(work, SCENARIOS[name].args)
        time.sleep(rng.uniform(0, found.seconds * KILL_WINDOW))
        process.kill()
        process.join(60)
        if any((work / "home" / "state" / "journal").glob("*")):
            outcomes["journal-left"] += 1
        # before any mutating command: each file an agent or git reads is old or new
        now = outside_home(state(work, home=False))
        for rel in set(now) | set(old_files) | set(new_files):
            assert now.get(rel) in (old_files.get(rel), new_files.get(rel)), (attempt, rel)
        shown = readers(work)  # these roll a dead command's journal back first
        assert shown in (old_shown, new_shown), (attempt, shown)
        after = settled(work)
        assert after in (found.old, found.new), (attempt, _diff(after, found))
        assert shown == (old_shown if after == found.old else new_shown), attempt
        outcomes["old" if after == found.old else "new"] += 1
        if after != found.old:
            fresh(found, work)
    return outcomes


KILLS = int(os.environ.get("PLUGMAN_READER_KILLS", "300"))
NAMES = ("reader-install", "reader-update", "reader-uninstall")


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("readers") / "root"


def _split(total: int) -> list[int]:
    return [total // len(NAMES) + (i < total % len(NAMES)) for i in range(len(NAMES))]


@pytest.mark.parametrize(("name", "count"), list(zip(NAMES, _split(30), strict=True)))
def test_readers_see_old_or_new_after_kills(
    name: str,
    count: int,
    work: Path,
    tmp_path_factory: pytest.TempPathFactory,
    record_property: Callable[[str, object], None],
) -> None:
    outcomes = kills(name, count, work, tmp_path_factory)
    assert sum(outcomes[k] for k in ("old", "new")) == count
    record_property("summary", f"readers: {name} killed {count} times: {outcomes}")


@pytest.mark.slow
@pytest.mark.parametrize(("name", "count"), list(zip(NAMES, _split(KILLS), strict=True)))
def test_readers_see_old_or_new_after_300_kills(
    name: str,
    count: int,
    work: Path,
    tmp_path_factory: pytest.TempPathFactory,
    record_property: Callable[[str, object], None],
) -> None:
    outcomes = kills(name, count, work, tmp_path_factory)
    assert outcomes["journal-left"] > 0  # some kills did land inside a transaction
    record_property("summary", f"readers: {name} killed {count} times: {outcomes}")


def test_a_change_in_progress_is_said_not_waited_for(tmp_path: Path) -> None:
    """A command paused inside its transaction holds the lock: `list` says a change is in
    progress (and who makes it), returns at once, and leaves the journal to its owner."""
    root = tmp_path / "root"
    (root / "project").mkdir(parents=True)
    (root / "agent").mkdir()
    flag = tmp_path / "flag"
    env = {**os.environ, **environment(root)}
    env.pop("XDG_CONFIG_HOME", None)
    plugman = [sys.executable, "-m", "plugman", "--project", str(root / "project")]
    writer = subprocess.Popen(
        [*plugman, "mcp", "add", "tool", "-s", "project", "--", "run-tool"],
        env={**env, "PLUGMAN_FAULT": "pause-write", "PLUGMAN_FAULT_FLAG": str(flag)},
    )
    try:
        deadline = time.monotonic() + 60
        while not flag.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert flag.exists()
        began = time.monotonic()
        shown = subprocess.run(
            [*plugman, "list"], env=env, capture_output=True, text=True, check=False
        )
        assert time.monotonic() - began < 10
        assert shown.returncode == 0, shown.stderr
        assert "a change is in progress (plugman mcp add (pid" in shown.stderr
        assert any((root / "home" / "state" / "journal").iterdir())  # not rolled back
    finally:
        writer.kill()
        writer.wait()
    # its owner dead, the next reader rolls it back
    shown = subprocess.run([*plugman, "list"], env=env, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "rolled back a change a stopped plugman command left unfinished" in shown.stderr
    assert not any((root / "home" / "state" / "journal").iterdir())
    assert not (root / "project" / "plugman.toml").exists()


def test_each_command_writes_each_file_once(tmp_path: Path) -> None:
    """Install, update, uninstall, agents add and remove, with three agents linked at project
    scope: no file is written twice in one command (plugman.toml, exports.json and
    folders.json were; `Transaction.stage`), so no reader ever sees an edit half way."""
    root = tmp_path / "root"
    (root / "project").mkdir(parents=True)
    (root / "agent").mkdir()
    shutil.copytree(SAMPLES, root / "project" / "market", ignore=shutil.ignore_patterns("invalid"))
    agent_file(root)
    env = {**os.environ, **environment(root)}
    env.pop("XDG_CONFIG_HOME", None)
    plugman = [sys.executable, "-m", "plugman", "--project", str(root / "project")]
    trace = tmp_path / "writes"
    steps = [
        MARKET,
        LINK,
        INSTALL,
        ["install", "code-review", "--scope", "project"],
        ["agents", "remove", "codex", "--scope", "project"],
        ["agents", "add", "codex", "--scope", "project"],
        UPDATE,
        ["uninstall", "guardrails", "writing-skills", "code-review", "--scope", "project"],
        ["agents", "remove", "claude-code", "gemini", "codex", "--scope", "project"],
    ]
    for number, args in enumerate(steps):
        if args == UPDATE:
            change_market(root)
        trace.unlink(missing_ok=True)
        done = subprocess.run(
            [*plugman, *args],
            env={**env, "PLUGMAN_WRITES": str(trace)},
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, (args, done.stderr)
        written = [p for p in trace.read_text().splitlines() if "/journal/" not in p]
        twice = sorted({p for p in written if written.count(p) > 1})
        assert not twice, (number, args, twice)
        assert written or number == len(steps) - 1, args  # the last only deletes (untraced)

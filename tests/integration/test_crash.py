"""SIGKILL at every journaled step (and at random moments) of install, update and uninstall:
after the next command's recovery, every run is in the old or the new state, with no stray file.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from plugman.paths import Paths
from plugman.session import session
from tests.conftest import SAMPLES

POINTS = ("journal", "write", "store", "commit")
TIMESTAMPS = {"installed_at", "updated"}
COMMANDS = {
    "install": ["install", "guardrails", "writing-skills", "--scope", "project"],
    "update": ["update", "--scope", "project"],
    "uninstall": ["uninstall", "guardrails", "writing-skills", "--scope", "project"],
}


def plugman(root: Path, args: list[str], fault: str | None = None) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PLUGMAN_HOME": str(root / "home"),
        "PLUGMAN_MANAGED_DIR": str(root / "home" / "managed"),
    }
    env.pop("PLUGMAN_FAULT", None)
    if fault:
        env["PLUGMAN_FAULT"] = fault
    return subprocess.Popen(
        [sys.executable, "-m", "plugman", "--project", str(root / "project"), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def check(root: Path, args: list[str]) -> None:
    done = plugman(root, args)
    out, err = done.communicate(timeout=120)
    assert done.returncode == 0, (args, out, err)


def state(root: Path) -> dict[str, bytes]:
    """Every file and folder under the run's root, with timestamps and the root path masked."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_dir():
            found[rel] = b"<dir>"
            continue
        data = path.read_bytes().replace(str(root).encode(), b"<ROOT>")
        if path.suffix == ".json":
            data = json.dumps(_masked(json.loads(data)), sort_keys=True).encode()
        found[rel] = data
    return found


def _masked(value: object) -> object:
    if isinstance(value, dict):
        return {k: "<time>" if k in TIMESTAMPS else _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def recover(root: Path) -> None:
    """What the next mutating command does first: take the lock and roll back."""
    paths = Paths.from_env(
        {"PLUGMAN_HOME": str(root / "home"), "PLUGMAN_MANAGED_DIR": str(root / "home" / "managed")},
        project=root / "project",
    )
    with session(paths):
        pass


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one path every run happens at (records are keyed by the project's absolute path)."""
    return tmp_path_factory.mktemp("crash") / "work"


@pytest.fixture(scope="module")
def bases(
    tmp_path_factory: pytest.TempPathFactory, work: Path
) -> dict[str, tuple[Path, dict[str, bytes]]]:
    """For each command: a saved root (home + project) to start from, and the state it leads to."""
    found = {}
    for command, args in COMMANDS.items():
        shutil.copytree(
            SAMPLES, work / "project" / "market", ignore=shutil.ignore_patterns("invalid")
        )
        check(work, ["marketplace", "add", "./market"])
        if command != "install":
            check(work, COMMANDS["install"])
        if command == "update":
            for name in ("guardrails", "writing-skills"):
                (work / "project" / "market" / "plugins" / name / "README.md").write_text("new\n")
        saved = tmp_path_factory.mktemp(f"base-{command}") / "root"
        shutil.copytree(work, saved, symlinks=True)
        check(work, args)
        found[command] = (saved, state(work))
        shutil.rmtree(work)
    return found


def run_with_kill(
    base: Path, work: Path, args: list[str], fault: str | None, delay: float | None = None
) -> int:
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(base, work, symlinks=True)
    process = plugman(work, args, fault)
    if delay is not None:
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
    process.communicate(timeout=120)
    recover(work)
    return process.returncode


@pytest.mark.parametrize("command", list(COMMANDS))
def test_kill_at_every_journaled_step(
    command: str,
    bases: dict[str, tuple[Path, dict[str, bytes]]],
    work: Path,
    record_property: Callable[[str, object], None],
) -> None:
    base, new = bases[command]
    old = _old(base, work)
    kills = 0
    for point in POINTS:
        for count in range(1, 50):
            code = run_with_kill(base, work, COMMANDS[command], f"{point}:{count}")
            found = state(work)
            assert found in (old, new), (point, count, _diff(found, old, new))
            if code != -signal.SIGKILL:
                assert found == new
                break
            kills += 1
    assert kills >= 4
    record_property(
        "summary", f"crash test: {command} killed at {kills} journaled steps, recovered"
    )


@pytest.mark.parametrize("command", list(COMMANDS))
def test_kill_at_random_moments(
    command: str, bases: dict[str, tuple[Path, dict[str, bytes]]], work: Path
) -> None:
    base, new = bases[command]
    old = _old(base, work)
    rng = random.Random(f"plugman-{command}")
    for attempt in range(12):
        run_with_kill(base, work, COMMANDS[command], None, delay=rng.uniform(0.05, 0.8))
        found = state(work)
        assert found in (old, new), (attempt, _diff(found, old, new))


def _old(base: Path, work: Path) -> dict[str, bytes]:
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(base, work, symlinks=True)
    return state(work)


def _diff(found: dict[str, bytes], old: dict[str, bytes], new: dict[str, bytes]) -> str:
    near = min((old, new), key=lambda s: len(set(s.items()) ^ set(found.items())))
    extra = sorted(set(found) - set(near))
    missing = sorted(set(near) - set(found))
    changed = sorted(k for k in set(found) & set(near) if found[k] != near[k])
    return f"extra={extra} missing={missing} changed={changed}"

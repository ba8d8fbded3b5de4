"""The bench catches a regression: `bench/table.py --gate` against the parent commit, in a temp
clone of this repository, reports an artificial sleep planted in resolve (issue 36), and a
change that costs nothing reports none."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SLEEP = (
    "\n\n_unslowed_resolve = resolve\n\n\n"
    "def resolve(*args, **kwargs):  # type: ignore[no-redef]  # planted by the bench test\n"
    "    import time\n\n"
    "    time.sleep(0.05)\n"
    "    return _unslowed_resolve(*args, **kwargs)\n"
)


def git(repo: Path, *args: str) -> str:
    identity = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    done = subprocess.run(
        ["git", *identity, "-C", str(repo), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def clone(tmp_path: Path) -> Path:
    """This repository's HEAD, in a temp clone (the worktree's uncommitted changes left out)."""
    dest = tmp_path / "repo"
    head = git(REPO, "rev-parse", "HEAD").strip()
    git(tmp_path, "clone", "-q", "--shared", "--no-checkout", str(REPO), str(dest))
    git(dest, "checkout", "-q", "--detach", head)
    return dest


def bench(repo: Path) -> subprocess.CompletedProcess[str]:
    """The resolve row (1,000 servers) and the start-up rows, against HEAD~1, gated."""
    cmd = [sys.executable, str(repo / "bench" / "table.py"), "--quick", "--no-claude", "--gate"]
    cmd += ["--only", "resolve,startup", "--resolve-sizes", "1000"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    shown = ("| ", "REGRESSION", "no ", "quick run")
    print("\n".join(line for line in done.stdout.splitlines() if line.startswith(shown)))  # -s
    return done


def regressions(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stdout.splitlines() if line.startswith("REGRESSION:")]


@pytest.mark.slow
def test_a_sleep_planted_in_resolve_is_reported_against_its_parent(tmp_path: Path) -> None:
    repo = clone(tmp_path)
    resolution = repo / "plugman" / "config" / "resolution.py"
    resolution.write_text(resolution.read_text(encoding="utf-8") + SLEEP, encoding="utf-8")
    git(repo, "commit", "-qam", "resolve: 50 ms slower (planted)")

    done = bench(repo)

    assert done.returncode == 1, done.stdout + done.stderr
    found = regressions(done)
    assert any(line.startswith("REGRESSION: resolve 1000 servers") for line in found), found
    assert any(line.startswith("REGRESSION: start-up: config resolve") for line in found), found
    assert "at HEAD~1 (" in found[0]


@pytest.mark.slow
def test_a_change_that_costs_nothing_reports_no_regression(tmp_path: Path) -> None:
    repo = clone(tmp_path)
    (repo / "plugman" / "config" / "resolution.py").open("a").write("\n# a comment\n")
    git(repo, "commit", "-qam", "resolve: a comment")

    for _ in range(2):  # twice: the band must hold on a noisy machine, not once by luck
        done = bench(repo)
        assert done.returncode == 0, done.stdout + done.stderr
        assert regressions(done) == [], done.stdout
        assert "no regression against HEAD~1 (" in done.stdout

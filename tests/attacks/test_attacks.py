"""Run every case of the attack corpus (tests/attacks/build.py) through the real CLI.

Each case is built in its own folder; its steps run in-process (plugman.cli.invoke) or, when the
input might hang or crash plugman, as `python -m plugman` with a timeout. A refused step exits
1 or 2 with an `error:` naming the problem and no traceback; a neutralized step succeeds and its
check shows the dangerous part did not happen. Afterwards the canary holds its bytes and nothing
under the case folder changed: plugman wrote only inside its own PLUGMAN_HOME.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import NamedTuple

import pytest

from plugman.cli import invoke
from tests.attacks.build import CANARY, CASES, OK, RAN, REFUSED, Case, Setup, Step, build, serve
from tests.integration.helpers import snapshot

CATEGORIES = {"archive", "git", "names", "project", "expansion", "json", "encoding", "remote", "fs"}


class Outcome(NamedTuple):
    code: int
    stdout: str
    stderr: str


def run_step(setup: Setup, step: Step) -> Outcome:
    project = step.project or setup.project
    argv = ["--project", str(project), *step.argv]
    if not step.isolated:
        result = invoke(argv, input=step.stdin)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"plugman {argv} crashed") from result.exception
        return Outcome(result.exit_code, result.stdout, result.stderr)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "plugman", *argv],
            input=step.stdin or "",
            capture_output=True,
            text=True,
            cwd=project,
            env={**os.environ, **setup.env},
            timeout=step.timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(f"plugman {argv} did not finish within {step.timeout} s") from None
    return Outcome(done.returncode, done.stdout, done.stderr)


def check_step(setup: Setup, step: Step, outcome: Outcome) -> None:
    shown = f"plugman {' '.join(step.argv)!r}:\nstdout: {outcome.stdout}\nstderr: {outcome.stderr}"
    assert "Traceback" not in outcome.stderr, shown
    if step.expect == REFUSED:
        assert outcome.code in (1, 2), f"expected a refusal; {shown}"
        assert "error" in outcome.stderr.lower(), shown  # plugman's `error:` or click's box
        assert re.search(step.message, outcome.stderr), f"expected /{step.message}/; {shown}"
        return
    assert step.expect in (OK, RAN)
    assert outcome.code in ((0,) if step.expect == OK else (0, 1)), shown
    if step.message:  # a result on stdout, or a warning on stderr
        found = re.search(step.message, outcome.stdout + outcome.stderr)
        assert found, f"expected /{step.message}/; {shown}"
    if step.check is not None:
        step.check(setup, outcome.stdout)


def changed(before: dict[str, tuple[str, bytes]], after: dict[str, tuple[str, bytes]]) -> set[str]:
    return {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)}


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_attack(
    case: Case,
    tmp_path: Path,
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = tmp_path / case.id
    (root / "www").mkdir(parents=True)
    with ExitStack() as stack:
        http = stack.enter_context(serve(root / "www")) if case.http else "http://127.0.0.1:9"
        setup, steps = build(case, root, isolated_home, http)
        for key, value in setup.env.items():
            monkeypatch.setenv(key, value)
        before = snapshot(root)
        for step in steps:
            if step.before is not None:
                step.before(setup)  # the case's own edit, not plugman's
                before = snapshot(root)
            check_step(setup, step, run_step(setup, step))
        after = snapshot(root)
    assert (setup.canary / "x").read_bytes() == CANARY
    assert not os.path.lexists(setup.pwned)
    unexpected = sorted(changed(before, after))
    assert not unexpected, f"written outside plugman's folders: {unexpected}"


def test_corpus_summary(record_property: pytest.RecordProperty) -> None:
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    assert len(CASES) >= 40
    assert {case.category for case in CASES} == CATEGORIES
    assert {case.outcome for case in CASES} <= {"refused", "neutralized"}
    outcomes = Counter(case.outcome for case in CASES)
    record_property(
        "summary",
        f"attack corpus: {len(CASES)} cases ({outcomes['refused']} refused, "
        f"{outcomes['neutralized']} neutralized), all refused or neutralized",
    )

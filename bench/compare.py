"""The tree a bench run compares with, and when a difference is a regression.

``bench/table.py`` measures every row twice in the same run: on the **head** (this checkout's
``plugman/``, uncommitted changes included) and on a **base** tree, by default the previous
commit (``HEAD~1``; ``--base REV`` for another, e.g. the commit before an issue's work). The
base is ``git archive REV plugman`` unpacked into a temp dir, the head a copy beside it (so both
trees sit alike); both trees run on the same venv
(its interpreter, its dependencies, its ``plugman`` console script), chosen by ``PYTHONPATH``,
and both are byte-compiled first, so neither pays for compiling. ``--base DIR`` takes a
directory holding a ``plugman/`` package instead (a release unpacked where there is no git
history). Without either (no git, REV unknown) the table has no base column figures and says
why: figures recorded at another time are not comparable on a shared machine (load swings them
2-4x), so no baseline file is kept in the repository.

Rows timed here run by run (start-up, resolve) time each run three ways (``Run``): wall time,
CPU time, and **own time**: the wall time less the time the process sat runnable waiting for a
CPU (Linux's ``/proc/PID/schedstat``, read before the child is reaped). Load on a shared machine
stretches the wall time of a run by that wait, nothing else; own time keeps what the code costs,
sleeps and I/O included (a ``time.sleep`` in resolve shows in it in full, where CPU time misses
it). Where schedstat is missing own time is the wall time.

A difference is a **regression** when the head is slower than the base beyond the row's band
(``Band``): for rows timed run by run, the median of the per-round own-time differences (head
minus base, the two runs of a round taken side by side) is more than ``band.ms`` and more than
``band.pct`` of the base's median own time, **and** the sign test's lower confidence bound of
that median (``CONFIDENCE``) is above ``band.ms``: a slowdown large enough to matter and too
consistent, round after round, to be chance. For rows measured once per tree (a figure a script
reports), the two figures are compared with the band, and ``bench/table.py`` measures such a
section a second time before it reports it.
"""

from __future__ import annotations

import io
import math
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from validate_speed import TIMEOUT_S, BenchError, Check, misbehaved

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BASE = "HEAD~1"
PACKAGE = "plugman"
CONFIDENCE = 0.95  # of the lower bound a regression's median difference must clear


class BaseError(RuntimeError):
    """The base tree cannot be had (no git history, unknown revision, no plugman/ in it)."""


@dataclass(frozen=True)
class Tree:
    """One ``plugman/`` tree: ``label`` is "head" or "base", ``name`` what the table says."""

    label: str
    path: Path
    name: str

    def env(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """``env`` (default: this process's) importing plugman from this tree, with bytecode
        caches allowed (as a user's install has them)."""
        found = dict(os.environ if env is None else env)
        found.pop("PYTHONDONTWRITEBYTECODE", None)
        found["PYTHONPATH"] = str(self.path)
        return found


@dataclass(frozen=True)
class Trees:
    """The head, and the base or why there is none."""

    head: Tree
    base: Tree | None
    why: str = ""

    def all(self) -> tuple[Tree, ...]:
        return (self.head,) if self.base is None else (self.base, self.head)

    def rounds(self, count: int) -> Iterator[tuple[Tree, ...]]:
        """``count`` rounds of every tree, the order reversed every other round."""
        trees = self.all()
        for i in range(count):
            yield trees if i % 2 == 0 else trees[::-1]


@dataclass(frozen=True)
class Band:
    """How much slower than the base the head may be before it is a regression: more than
    ``pct`` (a fraction) **and** more than ``ms`` milliseconds."""

    pct: float = 0.10
    ms: float = 5.0

    def exceeded(self, base_ms: float, head_ms: float) -> bool:
        return head_ms - base_ms > self.ms and head_ms > base_ms * (1 + self.pct)

    def describe(self) -> str:
        return f"> {self.pct:.0%} and > {self.ms:g} ms"


@dataclass(frozen=True)
class Run:
    """One timed run: wall, own (wall less the wait for a CPU) and CPU milliseconds."""

    wall_ms: float
    own_ms: float
    cpu_ms: float


@dataclass(frozen=True)
class Figure:
    """One tree's figure for a row: the median and best wall time, and the own times of its
    runs where they were interleaved with the other tree's (run i of each taken side by side)."""

    median_ms: float
    best_ms: float
    own: tuple[float, ...] = ()

    @staticmethod
    def of(runs: Sequence[Run]) -> Figure:
        walls = [run.wall_ms for run in runs]
        return Figure(statistics.median(walls), min(walls), tuple(run.own_ms for run in runs))


@dataclass(frozen=True)
class Change:
    """The head against the base over paired rounds: the median per-round own-time difference
    (ms), that over the base's median own time, and the lower bound of the median difference
    at ``confidence`` (sign test)."""

    diff_ms: float
    ratio: float
    low_ms: float
    confidence: float
    rounds: int

    def describe(self) -> str:
        return (
            f"{self.diff_ms:+.0f} ms own time per round, median of {self.rounds}; "
            f"≥ {self.low_ms:+.0f} ms at {self.confidence:.0%}"
        )


def change(base: Figure, head: Figure) -> Change | None:
    """The paired change, or None when the figures were not taken run by run side by side."""
    if not base.own or len(base.own) != len(head.own):
        return None
    diffs = [h - b for b, h in zip(base.own, head.own, strict=True)]
    own = statistics.median(base.own)
    diff = statistics.median(diffs)
    low, confidence = lower_bound(diffs)
    return Change(diff, diff / own if own > 0 else math.inf, low, confidence, len(diffs))


def lower_bound(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float]:
    """A lower confidence bound of the median of ``values`` by the sign test (no assumption
    on their spread): the k-th smallest, k the largest with P(Binomial(n, 1/2) < k) at most
    1 - ``confidence``; with the confidence it has. -inf when there are too few values."""
    n, ordered = len(values), sorted(values)
    below, k = 0.0, 0
    while k < n and below + math.comb(n, k) / 2**n <= 1 - confidence:
        below += math.comb(n, k) / 2**n
        k += 1
    return (ordered[k - 1], 1 - below) if k else (-math.inf, 0.0)


def regressed(base: Figure, head: Figure, band: Band) -> bool:
    """Slower than the band: paired (see the module's doc), else in the two medians."""
    found = change(base, head)
    if found is None:
        return band.exceeded(base.median_ms, head.median_ms)
    over = found.diff_ms > band.ms and found.ratio > band.pct
    return over and found.low_ms > band.ms


def unsettled(base: Figure, head: Figure, band: Band) -> bool:
    """Paired figures whose median difference is beyond the band but whose lower bound is not:
    more rounds of that row decide (a real slowdown stays consistent, a spike does not)."""
    found = change(base, head)
    over = found is not None and found.diff_ms > band.ms and found.ratio > band.pct
    return over and found is not None and found.low_ms <= band.ms


def delta(base: Figure, head: Figure) -> str:
    """The head's change over the base: per round in own time when paired, else the medians'."""
    found = change(base, head)
    if found is not None:
        return f"{found.diff_ms:+.0f} ms ({found.ratio:+.0%})".replace("%", " %")
    return percent(base.median_ms, head.median_ms)


def percent(base_ms: float, head_ms: float) -> str:
    """The head's change over the base, in percent."""
    if base_ms <= 0:
        return f"{head_ms - base_ms:+.1f} ms"
    return f"{(head_ms - base_ms) / base_ms:+.0%}".replace("%", " %")


def git(repo: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    except OSError as exc:
        raise BaseError(f"git cannot run: {exc}") from exc
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise BaseError(f"git {' '.join(args)}: {message[-1] if message else done.returncode}")
    return done.stdout


def checkout(repo: Path, rev: str, dest: Path) -> Tree:
    """``plugman/`` as committed at ``rev``, unpacked into ``dest``."""
    sha = git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").decode().strip()
    archive = git(repo, "archive", "--format=tar", sha, PACKAGE)
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest)  # our own repository's tree
    return Tree("base", dest, f"{rev} ({sha[:7]})")


def head_name(repo: Path) -> str:
    try:
        sha = git(repo, "rev-parse", "--short", "HEAD").decode().strip()
        dirty = bool(git(repo, "status", "--porcelain", "--untracked-files=no", PACKAGE).strip())
    except BaseError:
        return "this tree"
    return f"HEAD ({sha}{' + changes' if dirty else ''})"


def open_trees(spec: str | None, scratch: Path, repo: Path = REPO_ROOT) -> Trees:
    """The head and the base ``spec`` names (a revision or a directory; None: no base),
    both byte-compiled."""
    head = Tree("head", scratch / "head", head_name(repo))  # a copy: both trees alike
    shutil.copytree(
        repo / PACKAGE, head.path / PACKAGE, ignore=shutil.ignore_patterns("__pycache__")
    )
    base: Tree | None = None
    why = "not asked for (--base none)"
    if spec is not None:
        try:
            if Path(spec).is_dir():
                base = Tree("base", Path(spec).resolve(), spec)
            else:
                base = checkout(repo, spec, scratch / "base")
            if not (base.path / PACKAGE / "__init__.py").is_file():
                raise BaseError(f"{base.path} holds no {PACKAGE}/ package")
        except BaseError as exc:
            base, why = None, f"no base tree {spec}: {exc}"
    trees = Trees(head, base, why)
    for tree in trees.all():
        compile_tree(tree)
    return trees


def compile_tree(tree: Tree) -> None:
    """Byte-compile the tree's plugman/ with the interpreter that runs it."""
    cmd = [sys.executable, "-m", "compileall", "-q", PACKAGE]
    subprocess.run(cmd, cwd=tree.path, env=tree.env(), capture_output=True, check=True)


def run_measured(
    cmd: Sequence[str], env: Mapping[str, str], check: Check, cwd: Path | None = None
) -> Run:
    """Run ``cmd`` once as ``validate_speed.run_once`` does (the same checks, BenchError when
    it misbehaved) and time it three ways: wall, own (wall less the time it waited for a CPU,
    from its schedstat while it is a zombie, before it is reaped) and CPU (its rusage)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(
            list(cmd), stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=cwd
        )
        timer = threading.Timer(TIMEOUT_S, proc.kill)
        timer.start()
        try:
            os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
            wall = time.perf_counter() - started
            queued = cpu_wait(proc.pid)
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        if code == -9 and wall >= TIMEOUT_S:
            raise BenchError(f"timed out after {TIMEOUT_S}s: {' '.join(cmd)}")
        out.seek(0)
        err.seek(0)
        stdout, stderr = (f.read().decode(errors="replace") for f in (out, err))
    failed = misbehaved(cmd, code, stdout, stderr, check)
    if failed is not None:
        raise failed
    cpu = usage.ru_utime + usage.ru_stime
    return Run(wall * 1000, (wall - (queued or 0.0)) * 1000, cpu * 1000)


def cpu_wait(pid: int) -> float | None:
    """Seconds the process waited runnable for a CPU (``/proc/PID/schedstat``'s second field),
    None where the kernel does not say."""
    try:
        fields = Path(f"/proc/{pid}/schedstat").read_text(encoding="ascii").split()
        return int(fields[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


def ignores_pythonpath(cmd: Sequence[str]) -> str | None:
    """Why ``cmd`` would run plugman from somewhere else than the tree ``PYTHONPATH`` names (a
    Python run with ``-I`` or ``-E``, directly or by its script's ``#!`` line), else None: a
    base timed that way would silently measure the head's code."""
    argv = list(cmd)
    try:
        with Path(argv[0]).open("rb") as script:
            first = script.readline(200)
        if first.startswith(b"#!"):
            argv = [*first[2:].decode(errors="replace").split(), *argv]
    except OSError:
        pass
    for arg in argv[1:]:
        if arg.startswith("-") and not arg.startswith("--") and set(arg[1:]) & {"I", "E"}:
            return f"{arg} in {' '.join(cmd[:3])}: Python ignores PYTHONPATH"
    return None

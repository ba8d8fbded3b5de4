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

A difference is a **regression** when the head is slower than the base by more than the row's
band, both in percent and in milliseconds, run for run (the median of the per-round ratios and
differences of interleaved runs: a load change between rounds hits both sides of a round) **and**
in the best run of each (so a few load spikes do not make one); ``Band`` says how much, per row.
"""

from __future__ import annotations

import io
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BASE = "HEAD~1"
PACKAGE = "plugman"


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
class Figure:
    """One tree's figure for a row: the median, the best run, and the runs themselves where
    they were interleaved with the other tree's (run i of each tree taken side by side)."""

    median_ms: float
    best_ms: float
    samples: tuple[float, ...] = ()

    @staticmethod
    def of(samples_ms: Sequence[float]) -> Figure:
        ordered = sorted(samples_ms)
        return Figure(statistics.median(ordered), ordered[0], tuple(samples_ms))


def paired(base: Figure, head: Figure) -> tuple[float, float]:
    """(the head over the base as a ratio, the difference in ms): medians of the per-round
    ratios and differences when the runs were interleaved (a load change between rounds hits
    both sides of a pair alike), else of the two medians."""
    if base.samples and len(base.samples) == len(head.samples):
        pairs = list(zip(base.samples, head.samples, strict=True))
        ratio = statistics.median(h / b for b, h in pairs if b > 0)
        return ratio, statistics.median(h - b for b, h in pairs)
    ratio = head.median_ms / base.median_ms if base.median_ms > 0 else float("inf")
    return ratio, head.median_ms - base.median_ms


def regressed(base: Figure, head: Figure, band: Band) -> bool:
    """Slower beyond the band run for run (or in the medians) and in the best run."""
    ratio, diff = paired(base, head)
    over = diff > band.ms and ratio > 1 + band.pct
    return over and band.exceeded(base.best_ms, head.best_ms)


def delta(base_ms: float, head_ms: float) -> str:
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

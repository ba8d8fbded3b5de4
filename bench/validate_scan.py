"""CPU cost of the hidden-text scan in ``plugman validate``, in process, over the corpus.

``validate`` is on the pre-commit path; the scan (``plugman.manifest.exposure``) must stay a
small part of it. Cases, each the minimum over rounds of the process CPU time
(``time.process_time``) of validating every ``.claude-plugin`` manifest of ``tests/corpus``
in one call (what ``plugman validate T1 T2 ...`` does after start-up); imports and one sweep
are untimed, and the cases alternate round by round in fresh processes:

* scan: this tree, as shipped;
* floor: this tree with the scan's entry points (``exposure.check_plugin`` and
  ``exposure.check_files``) replaced by no-ops: the loaders' own checks;
* base (with ``--base REF``): the tree at git revision REF (a temporary worktree), as shipped:
  a speed regression is measured beside the tree before the change, in the same run.

Every sweep must report the same number of files checked as the first one, so a broken run is
never timed as a fast one. Goal: the scan adds at most GOAL_OVER_FLOOR (25 %) to the floor,
what the scan before issue 33 (the raw text of the files a load read, each read twice) cost:
the scan that covers what agents are given (decoded text, linked files, scripts, names) must
cost no more.
Results go to ``bench/results/validate-scan.json``.

Usage: ``.venv/bin/python bench/validate_scan.py [--rounds N] [--sweeps N] [--base REF]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from claude_code import DEFAULT_CORPUS, REPO_ROOT, VENV_PYTHON, corpus_targets, results_dir

GOAL_OVER_FLOOR = 0.25
CASES = ("scan", "floor")


def sweep_ms(mode: str, sweeps: int, corpus: Path) -> dict[str, Any]:
    """In this process: the minimum CPU ms of `sweeps` validations of the corpus (`mode`
    "floor": without the scan), and what the first one found."""
    import gc

    from plugman.cli.fast import _source_keys
    from plugman.manifest.validate import validate

    if mode == "floor":  # a base tree may predate the module: imported only here
        from plugman.manifest import exposure

        exposure.check_plugin = lambda *args, **kwargs: None  # type: ignore[assignment]
        exposure.check_files = lambda *args, **kwargs: None  # type: ignore[assignment]
    targets = [path for _, path in corpus_targets(corpus)]
    first = validate(targets, source_keys=_source_keys)
    best = float("inf")
    for _ in range(sweeps):
        gc.collect()
        started = time.process_time()
        result = validate(targets, source_keys=_source_keys)
        best = min(best, time.process_time() - started)
        if len(result.files) != len(first.files):
            raise RuntimeError(f"{mode}: {len(result.files)} files, then {len(first.files)}")
    return {
        "ms": best * 1000.0,
        "targets": len(targets),
        "files": len(first.files),
        "errors": first.errors,
        "warnings": first.warnings,
    }


def run_case(tree: Path, mode: str, sweeps: int, corpus: Path) -> dict[str, Any]:
    """`sweep_ms` in a fresh process importing plugman from `tree`."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree)
    cmd = [str(VENV_PYTHON), str(Path(__file__).resolve()), "--worker", mode]
    cmd += ["--sweeps", str(sweeps), "--corpus", str(corpus)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tree, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{mode} in {tree} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def measure(
    rounds: int, sweeps: int, corpus: Path = DEFAULT_CORPUS, base: Path | None = None
) -> dict[str, dict[str, Any]]:
    """Each case's best over `rounds` alternating rounds (and `base`'s, when given)."""
    trees = [(case, REPO_ROOT) for case in CASES]
    if base is not None:
        trees.append(("base", base))
    found: dict[str, dict[str, Any]] = {}
    for _ in range(rounds):
        for case, tree in trees:
            result = run_case(tree, "floor" if case == "floor" else "scan", sweeps, corpus)
            if case not in found or result["ms"] < found[case]["ms"]:
                found[case] = result
    return found


def worktree(ref: str) -> Path:
    """A temporary detached worktree of this repository at `ref`."""
    where = Path(tempfile.mkdtemp(prefix="plugman-scan-base-"))
    subprocess.run(
        ["git", "-C", str(REPO_ROOT), "worktree", "add", "--detach", str(where), ref],
        capture_output=True,
        check=True,
    )
    return where


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--sweeps", type=int, default=5, help="sweeps per round (default 5)")
    parser.add_argument("--base", help="also time the tree at this git revision")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--worker", choices=CASES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(sweep_ms(args.worker, args.sweeps, args.corpus)))
        return 0
    if not corpus_targets(args.corpus):
        print(f"error: no .claude-plugin manifests under {args.corpus}", file=sys.stderr)
        return 3
    base = worktree(args.base) if args.base else None
    try:
        found = measure(args.rounds, args.sweeps, args.corpus, base)
    finally:
        if base is not None:
            subprocess.run(
                ["git", "-C", str(REPO_ROOT), "worktree", "remove", "--force", str(base)],
                capture_output=True,
                check=False,
            )
    floor = found["floor"]["ms"]
    over = found["scan"]["ms"] / floor - 1.0
    print(
        f"plugman validate, {found['scan']['targets']} corpus targets in one call, in process "
        f"CPU, min of {args.rounds} rounds x {args.sweeps} sweeps; "
        f"{platform.python_implementation()} {platform.python_version()}"
    )
    for case, result in found.items():
        label = f"{case} ({args.base})" if case == "base" else case
        print(
            f"  {label:<24} {result['ms']:8.1f} ms  ({result['files']} files, "
            f"{result['errors']} errors, {result['warnings']} warnings)"
        )
    met = over <= GOAL_OVER_FLOOR
    print(
        f"goal: the scan adds <= {GOAL_OVER_FLOOR:.0%} to the floor: "
        f"{'PASS' if met else 'FAIL'} (+{over:.1%})"
    )
    out = results_dir() / "validate-scan.json"
    payload = {
        "python": platform.python_version(),
        "rounds": args.rounds,
        "sweeps": args.sweeps,
        "base": args.base,
        "goal_over_floor": GOAL_OVER_FLOOR,
        "over_floor": over,
        "met": met,
        "cases": found,
    }
    out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Compare plugman's pass/fail verdicts with Claude Code's own validator over the corpus.

For every ``.claude-plugin/plugin.json`` and ``.claude-plugin/marketplace.json`` in the corpus, run
``claude plugin validate --json FILE`` and ``plugman validate --format json FILE`` and compare:
Claude passes iff its ``success`` is true; plugman passes iff it exits 0.

Claude's results are cached in ``bench/results/claude-validate.json`` (keyed by path; ``--refresh``
ignores the cache). The full comparison is written to ``bench/results/agreement.json``.

Exit status: 0 (it is a report), or 3 if a tool could not be installed or run at all.

Usage: ``.venv/bin/python bench/claude_agreement.py [--refresh] [--jobs N] [--corpus DIR]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_code import (
    CLAUDE_VERSION,
    DEFAULT_CORPUS,
    DEFAULT_TOOLS_DIR,
    ToolError,
    claude_env,
    corpus_targets,
    display_path,
    ensure_claude,
    ensure_plugman,
    results_dir,
)

CACHE_NAME = "claude-validate.json"
REPORT_NAME = "agreement.json"
TIMEOUT_S = 120
MAX_MSG = 150
SHOWN_ERRORS = 2


@dataclass
class Verdict:
    """One tool's verdict on one target."""

    passed: bool | None  # None: the tool did not give a usable answer (crash, bad output)
    exit_code: int | None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    failure: str | None = None  # why there is no usable answer
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "exit_code": self.exit_code,
            "errors": self.errors,
            "warnings": self.warnings,
            "failure": self.failure,
            **self.extra,
        }


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _item_text(item: Any) -> str:
    if isinstance(item, dict):
        path = item.get("path")
        message = str(item.get("message", item))
        return f"{path}: {message}" if path not in (None, "") else message
    return str(item)


def run_claude(binary: Path, target: Path) -> dict[str, Any]:
    """Run Claude Code's validator on one manifest file; return a cache record."""
    cmd = [str(binary), "plugin", "validate", "--json", str(target)]
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, env=claude_env(), timeout=TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        return {"exit_code": None, "failure": f"timed out after {TIMEOUT_S}s"}
    elapsed = time.perf_counter() - started
    record: dict[str, Any] = {
        "exit_code": proc.returncode,
        "seconds": round(elapsed, 3),
        "sha256": sha256_of(target),
        "claude_version": CLAUDE_VERSION,
    }
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        record["failure"] = "output is not JSON: " + (proc.stderr or proc.stdout).strip()[:500]
        return record
    if not isinstance(data, dict) or not isinstance(data.get("success"), bool):
        record["failure"] = "JSON output has no boolean `success`"
        return record
    manifest = data.get("manifest")
    manifest = manifest if isinstance(manifest, dict) else {}
    record["success"] = data["success"]
    record["type"] = manifest.get("type")
    record["errors"] = manifest.get("errors") or []
    record["warnings"] = manifest.get("warnings") or []
    # Problems in the plugin's other files (hooks.json, SKILL.md, ...) are under `contents`,
    # one entry per file; they fail the run too, so keep them (tagged with their file).
    contents = data.get("contents")
    record["content_errors"] = []
    record["content_warnings"] = []
    for entry in contents if isinstance(contents, list) else []:
        if not isinstance(entry, dict):
            continue
        for key in ("errors", "warnings"):
            for item in entry.get(key) or []:
                tagged = dict(item) if isinstance(item, dict) else {"message": str(item)}
                tagged["file"] = entry.get("file")
                record[f"content_{key}"].append(tagged)
    if data["success"] == (proc.returncode != 0):
        record["note"] = f"success={data['success']} but exit code {proc.returncode}"
    return record


def _content_text(item: dict[str, Any], corpus: Path) -> str:
    file = item.get("file")
    where = display_path(Path(str(file)), corpus) + " " if file else ""
    return where + _item_text(item)


def claude_verdict(record: dict[str, Any], corpus: Path) -> Verdict:
    if "success" not in record:
        return Verdict(None, record.get("exit_code"), failure=record.get("failure", "no result"))
    extra = {"note": record["note"]} if "note" in record else {}
    return Verdict(
        passed=bool(record["success"]),
        exit_code=record.get("exit_code"),
        errors=[_item_text(e) for e in record.get("errors", [])]
        + [_content_text(e, corpus) for e in record.get("content_errors", [])],
        warnings=[_item_text(w) for w in record.get("warnings", [])]
        + [_content_text(w, corpus) for w in record.get("content_warnings", [])],
        extra=extra,
    )


def _diag_text(diag: dict[str, Any], target: Path, corpus: Path) -> str:
    """``[code] other/file.json key.path: message`` (the file only when it is not the target)."""
    parts = [f"[{diag.get('code')}]"]
    file = diag.get("file")
    if file and Path(str(file)).resolve() != target.resolve():
        parts.append(display_path(Path(str(file)).resolve(), corpus))
    if diag.get("path"):
        parts.append(f"{diag['path']}:")
    parts.append(str(diag.get("message")))
    return " ".join(parts)


def run_plugman(plugman: Path, target: Path, corpus: Path) -> Verdict:
    """Run plugman's validator on one manifest file."""
    cmd = [str(plugman), "validate", "--format", "json", str(target)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return Verdict(None, None, failure=f"timed out after {TIMEOUT_S}s")
    if proc.returncode not in (0, 1) or "Traceback (most recent call last)" in proc.stderr:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        return Verdict(None, proc.returncode, failure=f"exit {proc.returncode}: {tail}"[:500])
    try:
        data = json.loads(proc.stdout)
        diags: list[dict[str, Any]] = list(data["diagnostics"])
    except (ValueError, KeyError, TypeError):
        return Verdict(None, proc.returncode, failure="output is not plugman's JSON report")
    errors = [d for d in diags if d.get("severity") == "error"]
    warnings = [d for d in diags if d.get("severity") == "warning"]
    extra: dict[str, Any] = {
        "error_codes": sorted({str(d.get("code")) for d in errors}),
        "errors_in_other_files": sum(
            1
            for d in errors
            if d.get("file") and Path(str(d["file"])).resolve() != target.resolve()
        ),
        "diagnostics": errors + warnings,
    }
    if data.get("ok") != (proc.returncode == 0):
        extra["note"] = f"ok={data.get('ok')} but exit code {proc.returncode}"
    return Verdict(
        passed=proc.returncode == 0,
        exit_code=proc.returncode,
        errors=[_diag_text(d, target, corpus) for d in errors],
        warnings=[_diag_text(d, target, corpus) for d in warnings],
        extra=extra,
    )


def load_cache(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("claude_version") != CLAUDE_VERSION:
        return {}
    results = data.get("results")
    return results if isinstance(results, dict) else {}


def save_cache(path: Path, results: dict[str, dict[str, Any]]) -> None:
    payload = {"claude_version": CLAUDE_VERSION, "results": dict(sorted(results.items()))}
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")


def short(text: str, limit: int = MAX_MSG) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def first_errors(verdict: Verdict) -> str:
    if verdict.failure:
        return f"(no result: {short(verdict.failure)})"
    if not verdict.errors:
        return "(no errors)"
    shown = "; ".join(short(e) for e in verdict.errors[:SHOWN_ERRORS])
    more = len(verdict.errors) - SHOWN_ERRORS
    return shown + (f" (+{more} more)" if more > 0 else "")


def label(passed: bool | None) -> str:
    return {True: "pass", False: "FAIL", None: "N/A"}[passed]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--tools-dir", type=Path, default=DEFAULT_TOOLS_DIR)
    parser.add_argument("--refresh", action="store_true", help="ignore cached Claude results")
    parser.add_argument("--jobs", type=int, default=4, help="worker threads (default 4)")
    args = parser.parse_args(argv)
    corpus: Path = args.corpus.resolve()

    try:
        claude = ensure_claude(args.tools_dir.resolve())
        plugman = ensure_plugman()
    except ToolError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3

    targets = corpus_targets(corpus)
    if not targets:
        print(f"error: no .claude-plugin manifests under {corpus}", file=sys.stderr)
        return 3

    out_dir = results_dir()
    cache_path = out_dir / CACHE_NAME
    cache = {} if args.refresh else load_cache(cache_path)
    lock = threading.Lock()

    def cached_claude(target: Path) -> dict[str, Any]:
        key = str(target)
        with lock:
            hit = cache.get(key)
        if hit is not None and "success" in hit and hit.get("sha256") == sha256_of(target):
            return hit
        record = run_claude(claude, target)
        with lock:
            cache[key] = record
        return record

    def compare(item: tuple[str, Path]) -> dict[str, Any]:
        kind, target = item
        c = claude_verdict(cached_claude(target), corpus)
        p = run_plugman(plugman, target, corpus)
        agree = None if c.passed is None or p.passed is None else c.passed == p.passed
        return {
            "path": str(target),
            "rel": display_path(target, corpus),
            "kind": kind,
            "agree": agree,
            "claude": c,
            "plugman": p,
        }

    started = time.perf_counter()
    jobs = max(1, args.jobs)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        rows = list(pool.map(compare, targets))
    elapsed = time.perf_counter() - started
    save_cache(cache_path, {k: v for k, v in cache.items() if "success" in v})

    claude_failures = [r for r in rows if r["claude"].passed is None]
    plugman_failures = [r for r in rows if r["plugman"].passed is None]
    compared = [r for r in rows if r["agree"] is not None]
    agreeing = [r for r in compared if r["agree"]]
    disagreeing = [r for r in compared if not r["agree"]]
    n_plugins = sum(1 for k, _ in targets if k == "plugin")
    n_markets = len(targets) - n_plugins

    def tally(side: str, passed: bool) -> int:
        return sum(1 for r in rows if r[side].passed is passed)

    print(f"corpus: {corpus}")
    print(f"claude: {claude} ({CLAUDE_VERSION}); plugman: {plugman}")
    print(f"targets: {len(targets)} ({n_plugins} plugins, {n_markets} marketplaces)")
    print(
        f"claude:  {tally('claude', True)} pass, {tally('claude', False)} fail, "
        f"{len(claude_failures)} no result"
    )
    print(
        f"plugman: {tally('plugman', True)} pass, {tally('plugman', False)} fail, "
        f"{len(plugman_failures)} no result"
    )
    rate = len(agreeing) / len(compared) if compared else 0.0
    print(f"agreement: {len(agreeing)}/{len(compared)} = {rate:.1%}")
    for kind in ("plugin", "marketplace"):
        sub = [r for r in compared if r["kind"] == kind]
        ok = sum(1 for r in sub if r["agree"])
        if sub:
            print(f"  {kind + 's:':13} {ok}/{len(sub)} = {ok / len(sub):.1%}")
    both_fail = sum(1 for r in agreeing if not r["claude"].passed)
    print(f"  (of the agreeing, {both_fail} fail on both sides)")
    print(f"elapsed: {elapsed:.1f}s with {jobs} threads")

    if disagreeing:
        print(f"\ndisagreements ({len(disagreeing)}):")
        for r in disagreeing:
            c, p = r["claude"], r["plugman"]
            side = "plugman FAILS, claude passes" if c.passed else "claude FAILS, plugman passes"
            print(
                f"- {r['rel']} [{r['kind']}] {side} | claude: {first_errors(c)} "
                f"| plugman: {first_errors(p)}"
            )

    if claude_failures or plugman_failures:
        print("\nno usable result (excluded from the agreement rate):")
        for r in claude_failures:
            print(f"- {r['rel']}: claude {r['claude'].failure}")
        for r in plugman_failures:
            print(f"- {r['rel']}: plugman {r['plugman'].failure}")

    report = {
        "claude_version": CLAUDE_VERSION,
        "corpus": str(corpus),
        "targets": len(targets),
        "plugins": n_plugins,
        "marketplaces": n_markets,
        "compared": len(compared),
        "agreeing": len(agreeing),
        "agreement_rate": rate,
        "disagreements": [r["rel"] for r in disagreeing],
        "rows": [
            {**r, "claude": r["claude"].to_json(), "plugman": r["plugman"].to_json()} for r in rows
        ],
    }
    report_path = out_dir / REPORT_NAME
    report_path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {report_path} and {cache_path}")

    # A tool "could not run at all" if it produced no usable result for any target.
    if len(claude_failures) == len(rows) or len(plugman_failures) == len(rows):
        print("error: a tool gave no usable result for any target", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Every benchmark in one Markdown table: plugman beside Claude Code where a comparison applies.

Rows, in order: validate (one plugin, interleaved with ``claude plugin validate``; the corpus;
the hidden-text scan's CPU over its floor), install + uninstall, ``config resolve`` at 10 to
10,000 servers (at 1,000 also beside the ``--also`` reference trees), probe (in process:
concurrent against sequential; the CLI interleaved with ``claude mcp list``), the gateway
(added latency over stdio and HTTP, first lists, the remembered first list over the floor), the
gateway fleet (HAProxy + 3 replicas over one replica; 1,000 concurrent clients on one), the hook
launcher (added per hook call: the direct form, the plan path, the full launcher), the
update notice (per agent start), the server launcher (added per server start: the plan path,
the full launcher), start-up (the python floor, ``--version``, ``--help``, ``list``, ``paths``,
``config resolve`` on an empty config).
Columns: benchmark | plugman (the head) | base | Δ | reference | ratio | goal, where the base is
the same row on the previous commit's ``plugman/`` (``--base``, see ``compare.py``) measured in
the same run, Δ the head over the base (for start-up and resolve: the median per-round
difference of own time, the wall time less the wait for a CPU, see ``compare.py``; else the two
figures'), the reference Claude Code unless the cell says
otherwise, the ratio the reference's time over plugman's (how many times faster plugman is),
and the goal the issue's with whether this run met it; footnotes say what each row measures.
Below the notes, a ``REGRESSION: row: head vs base at REV (how much; band)`` line for each row
slower than its base beyond its noise band (``Band``: per row, below), or a line saying there is
none. Start-up and resolve decide over their interleaved rounds (``compare.regressed``: the
median difference beyond the band and its sign-test lower bound above the band's ms); a row
measured once per tree is reported only when a second measurement of its section (without
Claude Code) shows it too.

Against the base: start-up, resolve and the hidden-text scan time both trees themselves, base
and head alternating run after run (the order reversed every other round); every other section
runs once per tree in a child process importing plugman from that tree (``--worker``), base and
head alternating section by section, and its rows are matched by name. A row the base cannot
run (a command it lacks, a dependency the venv lacks) says "n/a (why)" in the base column.

Each row calls the function of the script that owns it (``validate_speed.py``,
``validate_scan.py``, ``install_speed.py``, ``resolve_speed.py``, ``probe_speed.py``,
``probe_cli_speed.py``, ``gateway_overhead.py``, ``gateway_fleet.py``, ``hook_launcher.py``,
``notice_speed.py``, ``launcher_overhead.py``, ``startup_speed.py``).
``--quick`` (CI) takes few repetitions and small samples; without it every row gets the scripts'
usual repetitions.

Claude Code (pinned, see ``claude_code.py``) is installed into ``--tools-dir`` when missing. When
it cannot be installed (npm missing or its registry unreachable) or a Claude Code run fails, its
cells say "not available" and the plugman columns are still filled. The table (and its notes)
goes to stdout and ``bench/results/table.md``; progress goes to stderr.

Exit status: 0, or 1 when a plugman run fails (the rows done so far are still printed), or with
``--gate`` when a row regressed. ``make bench`` and CI do not gate (the machine is shared and
noisy): they print the table, regressions included, as a report.

``--also REV|DIR[:PYTHON]`` (repeatable) adds a reference tree to the resolve row at 1,000
servers only, timed in the same interleaved rounds as the head and base (PYTHON: the interpreter
of a venv that tree needs, e.g. one with typer for ``2fdbf5a``); issue 36's goals name
``a96adb6`` (at least 1.3x) and ``2fdbf5a`` (faster), judged when those trees are given. CI
passes none: it compares with HEAD~1 only.

Usage: ``.venv/bin/python bench/table.py [--quick] [--base REV|DIR|none] [--gate]
[--also REV|DIR[:PYTHON] ...] [--only resolve,startup,...] [--runs N] [--resolve-sizes 1000]
[--no-claude] [--tools-dir DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TypeVar

import gateway_fleet
import gateway_overhead
import hook_launcher
import launcher_overhead
import notice_speed
import probe_cli_speed
import probe_speed
import resolve_speed
import startup_speed
import validate_scan
import validate_speed
from claude_code import (
    CLAUDE_PACKAGE,
    CLAUDE_VERSION,
    DEFAULT_CORPUS,
    DEFAULT_TOOLS_DIR,
    ToolError,
    claude_binary,
    claude_env,
    corpus_targets,
    ensure_claude,
    ensure_plugman,
    installed_claude_version,
    results_dir,
)
from compare import (
    DEFAULT_BASE,
    REPO_ROOT,
    Band,
    BaseError,
    Figure,
    Run,
    Tree,
    Trees,
    change,
    checkout,
    delta,
    git,
    ignores_pythonpath,
    open_trees,
    percent,
    regressed,
    run_measured,
    unsettled,
)
from install_speed import (
    PLUGINS,
    ClaudeRunner,
    PlugmanRunner,
    Series,
    copy_marketplace,
    time_cycles,
)
from validate_speed import (
    CLAUDE_DONE,
    PLUGMAN_DONE,
    SAMPLE_PLUGIN,
    BenchError,
    Check,
    Timing,
    run_once,
    time_command,
    time_interleaved,
    time_sweep,
)

T = TypeVar("T")
PASSING = frozenset({0})
NO_EQUIVALENT = "no equivalent"
NOT_AVAILABLE = "not available"
NPM_VIEW_TIMEOUT_S = 60


@dataclass(frozen=True)
class Mode:
    """How much of each benchmark to run."""

    quick: bool
    runs: int  # validate, install + uninstall cycles
    paired_runs: int  # resolve and start-up, base and head interleaved
    claude_corpus_sample: int | None  # corpus targets timed with Claude Code; None: all
    claude_sweeps: int
    plugins: tuple[str, ...]
    probe_runs: int
    probe_cli_runs: int
    gateway_argv: tuple[str, ...]
    resolve_sizes: tuple[int, ...] = resolve_speed.SIZES


QUICK = Mode(True, 3, 10, 20, 1, ("guardrails",), 1, 3, ("--quick",), (10, 100, 1000))
FULL = Mode(False, 5, 10, None, 1, PLUGINS, 3, 3, ())
# The noise bands (bench/README.md): how much slower than
# the base a row may be before it is a regression. Start-up, resolve and validate rows are
# medians of interleaved runs; the launcher rows are a difference with a reference measured in
# the same call; the probe and gateway rows wait on servers that sleep, so only a large change
# there is more than noise; a p99 of a few dozen calls is only reported.
BAND = Band(0.10, 5.0)
BAND_LAUNCHER = Band(0.15, 10.0)
BAND_SLEEPING = Band(0.25, 150.0)
BAND_GATEWAY_CALL = Band(0.50, 2.0)
REPORT_ONLY = None
# Issue 36's goals for the rows its scripts do not hold themselves.
GOAL_PROBE_RATIO = 1.5
GOAL_SERVER_START_MS = 30.0
# (hook_launcher.measure's variant, the row's label, the added ms wanted; None: report only)
HOOK_PATHS = (
    ("direct_form", "direct form", 2.0),
    ("plan", "plan path", 30.0),
    ("full", "full (no plan)", None),
)
QUICK_INTERLEAVED_RUNS = 5  # validate one plugin, beside Claude Code
# Issue 36: resolve at 1,000 servers at least 1.3x as fast as the tree the issue started from
# and faster than 2fdbf5a, both timed in the same run (`--also`; CI compares with HEAD~1 only).
RESOLVE_REFERENCE_GOALS = {"a96adb6": 1.3, "2fdbf5a": 1.0}


@dataclass
class Claude:
    """The Claude Code binary, or why there is none; failures of single runs are collected."""

    binary: str | None
    why: str = ""
    install_s: float | None = None  # set when this run installed it
    failures: list[str] = field(default_factory=list)

    def run(self, what: str, measure: Callable[[str], T]) -> T | None:
        """``measure(binary)``, or None when Claude Code is missing or the run fails."""
        if self.binary is None:
            return None
        try:
            return measure(self.binary)
        except Exception as exc:  # any Claude Code failure leaves plugman's figures standing
            self.failures.append(f"{what}: {first_line(exc)}")
            return None


@dataclass
class Row:
    """One table row, its cells already formatted."""

    benchmark: str
    plugman: str
    claude: str
    ratio: str
    note: str = ""
    goal: str = ""  # the goal for this row, and whether this run met it
    value_ms: float | None = None  # the figure compared with the base tree's
    band: Band | None = BAND  # None: reported, never a regression
    base: str = ""  # the base tree's cell, or "n/a (why)"
    delta: str = ""
    regression: str = ""  # the REGRESSION line, when there is one


@dataclass(frozen=True)
class Reference:
    """A tree timed beside the head only in the resolve row at the goal's size (``--also
    REV|DIR[:PYTHON]``): its label, folder and name, the interpreter that runs it (None: this
    venv's), and the key of ``RESOLVE_REFERENCE_GOALS`` it is, if any."""

    tree: Tree
    python: str | None = None
    goal_key: str = ""

    def argv(self, plugman: str) -> list[str]:
        """The command running plugman from this tree: this venv's ``plugman`` (as the head
        and base run), or the other venv's console script, or ``PYTHON -P -m plugman``."""
        if self.python is None:
            return [plugman]
        beside = Path(self.python).parent / "plugman"
        return [str(beside)] if beside.exists() else [self.python, "-P", "-m", "plugman"]


@dataclass
class Context:
    plugman: str
    claude: Claude
    mode: Mode
    trees: Trees
    also: tuple[Reference, ...] = ()


class PlugmanError(RuntimeError):
    """A plugman run failed: the table stops and the exit status is 1."""


def first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def progress(started: float, message: str) -> None:
    print(f"[{time.perf_counter() - started:6.1f} s] {message}", file=sys.stderr, flush=True)


# Formatting ----------------------------------------------------------------------------------


def fmt_ms(ms: float) -> str:
    if ms >= 10_000:
        return f"{ms / 1000:.1f} s"
    if ms >= 1000:
        return f"{ms / 1000:.2f} s"
    return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"


def fmt_ratio(ratio: float) -> str:
    return f"{ratio:.1f}x" if ratio >= 1 else f"{ratio:.2f}x"


def goal(wanted: str, met: bool | None) -> str:
    """The goal cell: what is wanted, and whether this run met it (None: not measured)."""
    return wanted if met is None else f"{wanted}: {'met' if met else 'NOT met'}"


def compared(
    benchmark: str,
    plugman_ms: float,
    claude_ms: float | None,
    note: str = "",
    at_least: float | None = None,
    band: Band | None = BAND,
) -> Row:
    """A row timed with both tools (Claude Code's cell "not available" when it was not);
    `at_least`: the ratio the issue asks for."""
    wanted = "" if at_least is None else f"≥ {at_least:g}x"
    if claude_ms is None:
        alone = (fmt_ms(plugman_ms), NOT_AVAILABLE, "", note, goal(wanted, None))
        return Row(benchmark, *alone, value_ms=plugman_ms, band=band)
    ratio = claude_ms / plugman_ms
    met = None if at_least is None else ratio >= at_least
    cells = (fmt_ms(plugman_ms), fmt_ms(claude_ms), fmt_ratio(ratio))
    return Row(benchmark, *cells, note, goal(wanted, met) if wanted else "", plugman_ms, band)


def median_ms(timing: Timing | None) -> float | None:
    return None if timing is None else timing.median_ms


def render(rows: list[Row], trees: Trees) -> list[str]:
    """The Markdown table, then its numbered notes, then the regressions."""
    notes: list[str] = []
    base = trees.base.name if trees.base else "base"
    lines = [
        f"| benchmark | plugman ({trees.head.name}) | {base} | Δ | "
        "reference (Claude Code unless noted) | ratio | goal |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        name = row.benchmark
        if row.note:
            if row.note not in notes:
                notes.append(row.note)
            name += f" [{notes.index(row.note) + 1}]"
        cells = (name, row.plugman, row.base, row.delta, row.claude, row.ratio, row.goal)
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines += [f"[{i}] {note}" for i, note in enumerate(notes, 1)]
    return [*lines, "", *verdict(rows, trees)]


def verdict(rows: list[Row], trees: Trees) -> list[str]:
    """A REGRESSION line per row slower than its base beyond its band, or that there is none."""
    if trees.base is None:
        return [f"no comparison: {trees.why}"]
    found = [row.regression for row in rows if row.regression]
    if found:
        return found
    return [f"no regression against {trees.base.name} beyond each row's noise band"]


def compare_row(row: Row, base: Figure | None, head: Figure, trees: Trees, cell: str) -> Row:
    """``row`` with its base cell, Δ and regression filled from the two figures (``cell``: the
    base figure as the plugman cell shows it)."""
    if trees.base is None:
        row.base = "n/a"
        return row
    if base is None:
        row.base = row.base or "n/a"
        return row
    row.base, row.delta = cell, delta(base, head)
    if row.band is not None and regressed(base, head, row.band):
        row.delta += " REGRESSION"
        paired = change(base, head)
        how = paired.describe() if paired else percent(base.median_ms, head.median_ms)
        row.regression = (
            f"REGRESSION: {row.benchmark}: {row.plugman} vs {cell} at {trees.base.name} "
            f"({how}; band {row.band.describe()})"
        )
    return row


# Claude Code ---------------------------------------------------------------------------------


def find_claude(tools_dir: Path) -> Claude:
    """The pinned Claude Code, installed when missing, or why it is not available."""
    if installed_claude_version(tools_dir / "claude-code") == CLAUDE_VERSION:
        path = claude_binary(tools_dir)
        if path.exists():
            return Claude(str(path))
    started = time.perf_counter()
    why = npm_unreachable()
    if why:
        return Claude(None, why)
    try:
        binary = str(ensure_claude(tools_dir))
    except ToolError as exc:
        return Claude(None, first_line(exc))
    return Claude(binary, install_s=time.perf_counter() - started)


def npm_unreachable() -> str | None:
    """Why npm cannot fetch Claude Code, by one look-up without npm's minute of retries."""
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not on PATH"
    spec = f"{CLAUDE_PACKAGE}@{CLAUDE_VERSION}"
    cmd = [npm, "view", spec, "version", "--fetch-retries=0", "--fetch-timeout=20000"]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=NPM_VIEW_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`npm view {spec}` failed: {first_line(exc)}"
    if proc.returncode == 0 and CLAUDE_VERSION in proc.stdout:
        return None
    errors = [line for line in proc.stderr.splitlines() if line.startswith("npm error")]
    return f"`npm view {spec}` failed: {errors[0] if errors else f'exit {proc.returncode}'}"


# Environments --------------------------------------------------------------------------------


def python_env() -> dict[str, str]:
    """plugman as installed for a user: with bytecode caches."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


# Benchmarks ----------------------------------------------------------------------------------


def validate_rows(ctx: Context) -> list[Row]:
    return [validate_one(ctx), validate_corpus(ctx)]


def validate_one(ctx: Context) -> Row:
    """plugman and Claude Code interleaved run after run (``time_interleaved``), so the ratio
    comes from one stretch of load; plugman alone when Claude Code is missing or fails."""
    target = str(SAMPLE_PLUGIN)
    runs = max(ctx.mode.runs, QUICK_INTERLEAVED_RUNS)
    plugman_case = ([ctx.plugman, "validate", target], Check(PASSING, PLUGMAN_DONE), python_env())
    both = ctx.claude.run(
        "claude plugin validate",
        lambda binary: time_interleaved(
            [
                plugman_case,
                ([binary, "plugin", "validate", target], Check(PASSING, CLAUDE_DONE), claude_env()),
            ],
            runs,
        ),
    )
    plugman, claude = (
        (both[0], both[1]) if both else (time_interleaved([plugman_case], runs)[0], None)
    )
    note = (
        "`plugman validate` / `claude plugin validate` on sample-plugins/plugins/writing-skills, "
        f"interleaved run after run (the order reversed every other round), median of {runs}"
    )
    goal_ratio = validate_speed.GOAL_PLUGIN_RATIO
    return compared(
        "validate (one plugin)", plugman.median_ms, median_ms(claude), note, at_least=goal_ratio
    )


def validate_corpus(ctx: Context) -> Row:
    targets = [str(path) for _, path in corpus_targets(DEFAULT_CORPUS)]
    if not targets:
        note = f"no .claude-plugin manifests under {DEFAULT_CORPUS}"
        return Row("validate (corpus)", "corpus not found", "", "", note)
    n = len(targets)
    plugman = time_command(
        [ctx.plugman, "validate", *targets], ctx.mode.runs, Check(None, PLUGMAN_DONE), python_env()
    )
    sample_size = ctx.mode.claude_corpus_sample or n
    step = max(1, n // sample_size)
    sample = targets[::step][:sample_size]
    claude = ctx.claude.run(
        "claude plugin validate (corpus)",
        lambda binary: time_sweep(
            [[binary, "plugin", "validate", t] for t in sample],
            ctx.mode.claude_sweeps,
            Check(None, CLAUDE_DONE),
            claude_env(),
        ),
    )
    claude_ms = None if claude is None else claude.median_ms * n / len(sample)
    note = (
        f"plugman validates all {n} manifests of tests/corpus in one process; Claude Code "
        "takes one per process: "
    )
    if len(sample) < n:
        note += f"its sum over {len(sample)} of them (every {step}th), scaled to {n}"
    else:
        note += f"its sum over all {n}"
    return compared(f"validate (corpus, {n} manifests)", plugman.median_ms, claude_ms, note)


def validate_scan_cost(ctx: Context) -> Row:
    benchmark = "validate: hidden-text scan (corpus, in process CPU)"
    if not corpus_targets(DEFAULT_CORPUS):
        return Row(benchmark, "corpus not found", "", "", f"no manifests under {DEFAULT_CORPUS}")
    rounds, sweeps = (2, 3) if ctx.mode.quick else (3, 5)
    base, why = ctx.trees.base, ""
    try:
        found = validate_scan.measure(rounds, sweeps, base=None if base is None else base.path)
    except RuntimeError as exc:  # the base cannot run the worker: measure the head alone
        if base is None or str(base.path) not in str(exc):
            raise
        found, why = validate_scan.measure(rounds, sweeps), f"n/a ({first_line(exc)})"
    scan, floor = found["scan"]["ms"], found["floor"]["ms"]
    over = scan / floor - 1.0
    note = (
        f"CPU time of validating the {found['scan']['targets']} corpus manifests in one call, "
        "after start-up (min of alternating rounds, bench/validate_scan.py); reference: the same "
        "with the hidden-text scan's entry points stubbed out (the floor), in the same run"
    )
    wanted = f"≤ floor + {validate_scan.GOAL_OVER_FLOOR:.0%}"
    row = Row(
        benchmark,
        fmt_ms(scan),
        f"{fmt_ms(floor)} (floor)",
        f"floor {'+' if over >= 0 else '-'} {abs(over):.0%}",
        note,
        goal(wanted, over <= validate_scan.GOAL_OVER_FLOOR),
        scan,
        base=why,
    )
    base_ms = found["base"]["ms"] if "base" in found else None
    figure = None if base_ms is None else Figure(base_ms, base_ms)
    return compare_row(row, figure, Figure(scan, scan), ctx.trees, fmt_ms(base_ms or 0))


def install_rows(ctx: Context) -> list[Row]:
    workdir = Path(tempfile.mkdtemp(prefix="plugman-table-install-"))
    try:
        p_runner = PlugmanRunner(ctx.plugman, copy_marketplace(workdir / "mkt-plugman"), workdir)
        c_runner = None
        if ctx.claude.binary is not None:
            marketplace = copy_marketplace(workdir / "mkt-claude")
            c_runner = ClaudeRunner(ctx.claude.binary, marketplace, workdir)
        return [install_row(ctx, plugin, p_runner, c_runner) for plugin in ctx.mode.plugins]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def install_row(
    ctx: Context, plugin: str, p_runner: PlugmanRunner, c_runner: ClaudeRunner | None
) -> Row:
    plugman, claude = install_series(ctx, plugin, p_runner, c_runner)
    note = (
        "one fresh process each for install and uninstall of a plugin from a local marketplace "
        "(a copy of sample-plugins), user scope, a fresh home per cycle; the sum of the two"
    )
    claude_ms = None if claude is None else claude.both.median_ms
    label = f"install + uninstall ({plugin})"
    return compared(label, plugman.both.median_ms, claude_ms, note, at_least=3)


def install_series(
    ctx: Context, plugin: str, p_runner: PlugmanRunner, c_runner: ClaudeRunner | None
) -> tuple[Series, Series | None]:
    """Both tools' cycles, alternating; plugman's alone when Claude Code is missing or fails."""
    runs = ctx.mode.runs
    if c_runner is not None:
        cycles = [p_runner.cycle, c_runner.cycle]
        both = ctx.claude.run(
            "claude plugin install/uninstall", lambda _: time_cycles(plugin, runs, cycles)
        )
        if both is not None:
            return both[0], both[1]
    return time_cycles(plugin, runs, [p_runner.cycle])[0], None


def resolve_rows(ctx: Context) -> list[Row]:
    note = (
        "`plugman config resolve --json`, servers spread over user/project/local plugman.toml "
        "and .mcp.json (some shadowed), project entries approved; no Claude Code equivalent: "
        "`claude mcp list` starts and health-checks every server; head and base alternate run "
        "after run, each tree on a config it installed itself"
    )
    workdir = Path(tempfile.mkdtemp(prefix="plugman-table-resolve-"))
    try:
        rows = [resolve_row(ctx, n, workdir / str(n), note) for n in ctx.mode.resolve_sizes]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    smallest = rows[0]
    for row, n in zip(rows[1:], ctx.mode.resolve_sizes[1:], strict=True):
        assert row.value_ms is not None and smallest.value_ms is not None
        per = (row.value_ms - smallest.value_ms) / max(n - ctx.mode.resolve_sizes[0], 1)
        row.ratio = "; ".join(filter(None, (f"{per * 1000:.0f} µs/server", row.ratio)))
    return rows


def resolve_row(ctx: Context, n: int, workdir: Path, note: str) -> Row:
    """One size: both trees (and at the goal's size the ``--also`` references) set up, then
    timed interleaved."""
    wanted = n == resolve_speed.GOAL_SERVERS
    references = ctx.also if wanted else ()
    prepared: dict[str, tuple[list[str], dict[str, str]]] = {}
    why = ""
    for tree in ctx.trees.all():
        try:
            cmd, env, shape, _ = resolve_speed.prepare_size(
                ctx.plugman, n, workdir / tree.label, str(tree.path)
            )
        except BenchError as exc:
            if tree.label == "head":
                raise
            why = f"n/a ({first_line(exc)})"
            continue
        prepared[tree.label] = (cmd, env)
    for reference in references:
        argv = reference.argv(ctx.plugman)
        pythonpath = {"PYTHONPATH": str(reference.tree.path)}
        cmd, env, _ = resolve_speed.build_size(argv, n, workdir / reference.tree.label, pythonpath)
        prepared[reference.tree.label] = (cmd, env)
    samples = interleaved(prepared, ctx.mode.paired_runs)
    if samples.get("base") and unsettled(
        Figure.of(samples["base"]), Figure.of(samples["head"]), BAND
    ):
        more = interleaved(prepared, ctx.mode.paired_runs)  # as many rounds again
        for label, runs in more.items():
            samples[label] += runs
    head = Figure.of(samples["head"])
    row = Row(
        f"resolve {n} servers, {shape.hooks} hooks, {shape.plugins} plugins",
        fmt_ms(head.median_ms),
        NO_EQUIVALENT,
        "",
        note,
        resolve_goal(head, references, samples) if wanted else "",
        head.median_ms,
        base=why,
    )
    if references:
        compare_references(row, head, references, samples)
    base = Figure.of(samples["base"]) if samples.get("base") else None
    return compare_row(row, base, head, ctx.trees, fmt_ms(base.median_ms) if base else "")


def own_ratio(reference: list[Run], head: Figure) -> float:
    """How many times faster the head is than a reference tree: the ratio of their median own
    times (the wall time less the wait for a CPU), taken in the same interleaved rounds."""
    return statistics.median(run.own_ms for run in reference) / statistics.median(head.own)


def resolve_goal(head: Figure, references: tuple[Reference, ...], samples: RunsByTree) -> str:
    """The resolve row's goals: issue 15's ≤ 150 ms, and issue 36's ratios against the trees it
    names, judged when ``--also`` timed them in this run."""
    cells = [goal(f"≤ {resolve_speed.GOAL_MS} ms", head.median_ms <= resolve_speed.GOAL_MS)]
    timed = {ref.goal_key: ref for ref in references if ref.goal_key}
    for key, at_least in RESOLVE_REFERENCE_GOALS.items():
        wanted = f"≥ {at_least:g}x {key}" if at_least > 1 else f"faster than {key}"
        ref = timed.get(key)
        if ref is None:
            cells.append(f"{wanted} (with --also {key})")
            continue
        ratio = own_ratio(samples[ref.tree.label], head)
        cells.append(goal(wanted, ratio >= at_least if at_least > 1 else ratio > 1))
    return "; ".join(cells)


def compare_references(
    row: Row, head: Figure, references: tuple[Reference, ...], samples: RunsByTree
) -> None:
    """The reference and ratio cells of the goal's size: each ``--also`` tree's median wall
    time and how many times faster the head is (own time), and its own footnote."""
    walls, ratios = [], []
    for ref in references:
        runs = samples[ref.tree.label]
        walls.append(f"{fmt_ms(statistics.median(run.wall_ms for run in runs))} ({ref.tree.name})")
        ratios.append(f"{own_ratio(runs, head):.2f}x vs {ref.tree.name}")
    row.claude, row.ratio = "; ".join(walls), "; ".join(ratios)
    pythons = ", ".join(
        f"{ref.tree.name} with {ref.python or 'the same venv'}" for ref in references
    )
    row.note += (
        f"; at this size also the reference trees given by --also ({pythons}), each on a config "
        "it installed itself, timed in the same interleaved rounds; reference cell: their median "
        "wall time; ratio: a reference's median own time (wall less the wait for a CPU) over the "
        "head's"
    )


RunsByTree = dict[str, list[Run]]


def interleaved(commands: dict[str, tuple[list[str], dict[str, str]]], runs: int) -> RunsByTree:
    """Each tree's command (by label, in the dict's order) once untimed, then ``runs`` rounds
    of each in turn, the order reversed every other round: the runs of each."""
    check = Check(PASSING, None)
    for label, (cmd, env) in commands.items():
        why = ignores_pythonpath(cmd)
        if why:
            raise PlugmanError(f"cannot time the {label} tree that way: {why}")
        run_once(cmd, env, check)
    labels = list(commands)
    samples: RunsByTree = {label: [] for label in labels}
    for i in range(runs):
        for label in labels if i % 2 == 0 else labels[::-1]:
            samples[label].append(run_measured(*commands[label], check))
    return samples


def probe_rows(ctx: Context) -> list[Row]:
    return [*probe_in_process_rows(ctx), probe_cli_row(ctx)]


def probe_in_process_rows(ctx: Context) -> list[Row]:
    try:
        scenarios = probe_speed.run_scenarios(ctx.mode.probe_runs, not ctx.mode.quick)
    except SystemExit as exc:  # probe_speed stops that way when a server fails to connect
        raise PlugmanError(f"probe: {exc}") from exc
    sequential, default = probe_speed.BATCHES[0][1], probe_speed.BATCHES[2][1]
    note = (
        f"`probe()` in process over {probe_speed.COPIES} copies of one stdio server, 10 at once "
        "(the default); ratio: one at a time over 10 at once, not Claude Code. The stdlib server "
        "sleeps 1 s before serving; the notes server (full run only) spends ~1 CPU-s importing mcp"
    )
    rows = []
    for scenario in scenarios:
        seconds = scenario["seconds"]
        title = "stdlib" if scenario["server"] == probe_speed.TINY_TITLE else "notes"
        rows.append(
            Row(
                f"probe ({probe_speed.COPIES} {title} servers, in process)",
                fmt_ms(seconds[default] * 1000),
                NO_EQUIVALENT,
                f"{fmt_ratio(seconds[sequential] / seconds[default])} vs sequential",
                note,
                value_ms=seconds[default] * 1000,
                band=BAND_SLEEPING,
            )
        )
    return rows


def probe_cli_row(ctx: Context) -> Row:
    """``probe_cli_speed.measure``: plugman and Claude Code interleaved, with their CPU time;
    plugman alone when Claude Code is missing or fails."""
    runs = max(ctx.mode.probe_cli_runs, 1)
    found = ctx.claude.run(
        "claude mcp list", lambda binary: probe_cli_speed.measure(ctx.plugman, binary, runs)
    )
    if found is None:
        found = probe_cli_speed.measure(ctx.plugman, None, runs)
    cpu = f"CPU (with its servers) plugman {cpu_ms(found.plugman_cpu)}"
    if found.claude is not None:
        cpu += f", Claude Code {cpu_ms(found.claude_cpu)}"
    load = f"; load {found.load[0]:.1f} -> {found.load[1]:.1f}" if found.load else ""
    note = (
        f"`plugman mcp probe` / `claude mcp list`, {probe_speed.COPIES} user-scope stdio "
        "servers sleeping 1 s before serving, interleaved (the order reversed every other "
        f"round), median of {runs}; {cpu}{load}; Claude Code starts local servers 3 at a "
        "time, plugman 10; plugman also lists tools, resources and prompts"
    )
    label = f"probe CLI ({probe_speed.COPIES} servers)"
    ms = found.plugman.median_ms
    return compared(
        label, ms, median_ms(found.claude), note, at_least=GOAL_PROBE_RATIO, band=BAND_SLEEPING
    )


def cpu_ms(seconds: list[float]) -> str:
    return f"{statistics.median(seconds) * 1000:,.0f} ms" if seconds else "not measured"


def gateway_rows(ctx: Context) -> list[Row]:
    args = gateway_overhead.parse_args(list(ctx.mode.gateway_argv))
    lanes = gateway_overhead.run_lanes(args)
    added = gateway_overhead.overhead_ms(lanes)
    direct = next(lane for lane in lanes if lane.label == "direct").summary()
    first = gateway_overhead.run_first_answers()
    lists = gateway_overhead.run_first_lists()
    note = (
        f"`plugman mcp serve` in front of the notes server vs the server directly (the "
        f"reference), {args.calls} `echo` calls per path, alternating; Claude Code has no gateway"
    )
    slow = gateway_overhead.SLOW_START
    first_note = (
        f"from spawning `plugman mcp serve --first-list-wait 0` with the notes server and one "
        f"{slow:g} s slow to start: its first tools/list answer (reference: when the slow "
        f"server's tool was announced by list_changed; before issue 15 the first list waited for "
        f"it); initialize took {first['initialize_s']:.2f} s"
    )
    today, cold, warm = lists["today"], lists["first session"], lists["remembered"]
    lasting = gateway_overhead.SLOW_LIST
    lists_note = (
        f"from spawning `plugman mcp serve` with the notes server and one {lasting:g} s slow to "
        f"start to its first tools/list answer, and the tools it held; reference: today's "
        f"(issue 15's) answer at once, {today.tools} of {today.of} tools; the first session waits "
        f"(default 5 s) for the servers it remembers nothing of, a later one lists their "
        f"remembered catalogs at once"
    )
    p50, p99 = gateway_overhead.GOAL_P50_MS, gateway_overhead.GOAL_P99_MS
    answered, announced = first["first_list_s"] * 1000, first["slow_announced_s"] * 1000
    early = gateway_overhead.run_remembered_first_list(args.rounds)
    return [
        Row(
            "gateway: added per call, p50",
            f"{added['p50_ms']:+.2f} ms",
            f"{direct['p50_ms']:.2f} ms (direct)",
            "",
            note,
            goal(f"≤ {p50:g} ms", added["p50_ms"] <= p50),
            added["p50_ms"],
            BAND_GATEWAY_CALL,
        ),
        *gateway_http_rows(lanes, args.calls, added["p50_ms"]),
        Row(
            "gateway: added per call, p99",
            f"{added['p99_ms']:+.2f} ms",
            f"{direct['p99_ms']:.2f} ms (direct)",
            "",
            note,
            goal(f"≤ {p99:g} ms", added["p99_ms"] <= p99),
            added["p99_ms"],
            REPORT_ONLY,
        ),
        Row(
            "gateway: first tools/list",
            fmt_ms(answered),
            f"{fmt_ms(announced)} (slow one listed)",
            "",
            first_note,
            goal("before the slow backend", answered < slow * 1000),
            answered,
            BAND_SLEEPING,
        ),
        Row(
            f"gateway: first list, first session ({lasting:g} s server)",
            f"{fmt_ms(cold.seconds * 1000)}, {cold.tools} of {cold.of} tools",
            f"{fmt_ms(today.seconds * 1000)}, {today.tools} of {today.of} (today)",
            "",
            lists_note,
            goal("every server up by 5 s listed", cold.tools >= cold.of - 1),
            cold.seconds * 1000,
            REPORT_ONLY,  # waits for the slow server by design
        ),
        Row(
            "gateway: first list, remembered",
            f"{fmt_ms(warm.seconds * 1000)}, {warm.tools} of {warm.of} tools",
            f"{fmt_ms(today.seconds * 1000)}, {today.tools} of {today.of} (today)",
            "",
            lists_note,
            goal("every tool, at once", warm.tools == warm.of and warm.seconds < lasting),
            warm.seconds * 1000,
            BAND_SLEEPING,
        ),
        remembered_first_list_row(early, args.rounds),
    ]


def gateway_http_rows(
    lanes: list[gateway_overhead.Lane], calls: int, stdio_p50: float
) -> list[Row]:
    """The HTTP gateway's added p50, through the SDK's client and a minimal one, beside the
    stdio gateway's (same lanes, same run)."""
    note = (
        f"`plugman mcp serve --transport http` on loopback in front of the notes server vs the "
        f"server directly over stdio, {calls} `echo` calls per lane, alternating blocks with the "
        "direct and stdio lanes; through the MCP SDK's client, and through a minimal keep-alive "
        "client (`RawHttp`: the gateway's own cost, without the SDK client's); reference: the "
        "stdio gateway's added p50 in the same run"
    )
    wanted = gateway_overhead.GOAL_HTTP_P50_MS
    rows = []
    for label, client in (("http", "SDK client"), ("http, raw", "raw client")):
        added = gateway_overhead.http_overhead_ms(lanes, label)["p50_ms"]
        rows.append(
            Row(
                f"gateway: added per call over HTTP, p50 ({client})",
                f"{added:+.2f} ms",
                f"{stdio_p50:+.2f} ms (stdio gateway)",
                "",
                note,
                goal(f"≤ +{wanted:g} ms", added <= wanted),
                added,
                BAND_GATEWAY_CALL,
            )
        )
    return rows


FLEET_P50 = "gateway fleet (HAProxy + Redis limits, OIDC): added per call, p50"
FLEET_P99 = "gateway fleet (HAProxy + Redis limits, OIDC): added per call, p99"
FLEET_CROWD = "gateway fleet: concurrent clients on one replica (OIDC, Redis limits)"


def fleet_rows(ctx: Context) -> list[Row]:
    """``gateway_fleet.measure``: HAProxy + 3 replicas with limits in Redis vs one replica with
    limits in memory (both OIDC), and 1,000 concurrent clients on one fleet replica (issue 37)."""
    args = gateway_fleet.parse_args(list(ctx.mode.gateway_argv))
    if why := gateway_fleet.missing():
        cells = (f"{NOT_AVAILABLE} ({why})", "", "")
        labels = (FLEET_P50, FLEET_CROWD)
        return [Row(label, *cells, band=REPORT_ONLY) for label in labels]
    found = gateway_fleet.measure(args)
    direct, added = found.latency["lanes"]["one replica"], found.latency["added"]
    note = (
        f"`who__echo` through HAProxy 2.6 (round robin, retry on conn-failure) to 3 "
        f"`plugman mcp serve --transport http --auth oidc` replicas counting `--rate-limit` and "
        f"`--tool-rate-limit` in one shared redis-server vs straight to one lone replica with "
        f"the same flags counting in its memory (the reference); the same RS256 JWT on every "
        f"request; {args.calls} calls per lane in alternating blocks of {args.block}, "
        f"2026-07-28 requests on one keep-alive connection per lane (a raw client: the SDK "
        "client's own ~10 ms per call would drown the hop); Claude Code has no gateway"
    )
    crowd = found.crowd
    crowd_note = (
        f"{crowd['clients']} clients at once on one fleet replica (`--auth oidc`, limits in "
        f"Redis), each on its own connection with the JWT "
        f"(asyncio streams), each 1 tools/list + {crowd['calls_each']} tools/call: "
        f"{crowd['ok']} of {crowd['requests']} requests right, {crowd['failed']} failed, in "
        f"{crowd['wall_s']:.1f} s; per request (queueing included) p50 "
        f"{fmt_ms(crowd['p50_ms'])}, p99 {fmt_ms(crowd['p99_ms'])}; the replica's RSS "
        f"{crowd['rss_before_kb'] // 1024} -> {crowd['rss_after_kb'] // 1024} MB, its backend "
        f"{crowd['backend_rss_kb'] // 1024} MB"
    )
    p50, p99 = gateway_fleet.GOAL_P50_MS, gateway_fleet.GOAL_P99_MS
    return [
        Row(
            FLEET_P50,
            f"{added['p50_ms']:+.2f} ms",
            f"{direct['p50_ms']:.2f} ms (one replica)",
            "",
            note,
            goal(f"≤ +{p50:g} ms", added["p50_ms"] <= p50),
            added["p50_ms"],
            BAND_GATEWAY_CALL,
        ),
        Row(
            FLEET_P99,
            f"{added['p99_ms']:+.2f} ms",
            f"{direct['p99_ms']:.2f} ms (one replica)",
            "",
            note,
            goal(f"≤ +{p99:g} ms", added["p99_ms"] <= p99),
            added["p99_ms"],
            REPORT_ONLY,
        ),
        Row(
            FLEET_CROWD,
            f"{crowd['clients']:,}: {crowd['ok']:,}/{crowd['requests']:,} ok",
            f"RSS {crowd['rss_after_kb'] // 1024} MB",
            "",
            crowd_note,
            goal(f"≥ {gateway_fleet.GOAL_CLIENTS:,}, none failed", found.crowd_met),
            crowd["p99_ms"],
            REPORT_ONLY,  # queueing on a shared 2-core machine
        ),
    ]


def remembered_first_list_row(early: dict[str, gateway_overhead.Started], rounds: int) -> Row:
    """The remembered first list (issue 36): over the floor, beside the full server's."""
    floor = early[gateway_overhead.FLOOR].seconds * 1000
    answered = early[gateway_overhead.EARLY].seconds * 1000
    full = early[gateway_overhead.FULL].seconds * 1000
    over = answered - floor
    wanted = gateway_overhead.GOAL_EARLY_MS
    note = (
        "from spawning `plugman mcp serve` (the notes server, remembered by one earlier session) "
        "to its first tools/list answer over raw JSON-RPC on pipes, vs `python -c pass` with the "
        "same interpreter (the floor) and the same gateway without its early answers "
        "(`PLUGMAN_GATEWAY_EARLY=0`: the full server, as before issue 36), interleaved round "
        f"after round, medians of {rounds}; CPU of the whole session: early "
        f"{early[gateway_overhead.EARLY].cpu * 1000:.0f} ms, full server "
        f"{early[gateway_overhead.FULL].cpu * 1000:.0f} ms"
    )
    return Row(
        "gateway: remembered first list",
        fmt_ms(answered),
        f"{fmt_ms(floor)} (floor)",
        f"floor + {over:.0f} ms; full server floor + {full - floor:.0f} ms",
        note,
        goal(f"≤ floor + {wanted:g} ms", over <= wanted),
        over,
        BAND_LAUNCHER,
    )


def hook_launcher_rows(ctx: Context) -> list[Row]:
    runs = 20 if ctx.mode.quick else 40
    found = hook_launcher.measure(ctx.plugman, runs)
    note = (
        "the same plugin's `true` handler for Codex's PostToolUse, the same event JSON on stdin, "
        "four ways interleaved run after run (the order reversed every other round), median of "
        f"{runs} each: `sh -c true` (the handler run directly: the reference); the direct form "
        "(`plugman-hook codex PostToolUse ID`, for a handler with nothing to translate: its sh "
        "plan execs it); the plan path (`plugman hooks exec codex PostToolUse ID`, a `Bash` "
        "matcher: its JSON plan, no resolve); the full launcher (the same with "
        "`PLUGMAN_NO_PLANS=1`: resolving the config at every call); each path checked through "
        f"`PLUGMAN_LAUNCH_TRACE` first. CPU (user + system) over the direct run: direct form "
        f"{found['direct_form_added_cpu_ms']:+.1f} ms, plan path "
        f"{found['plan_added_cpu_ms']:+.0f} ms, full {found['full_added_cpu_ms']:+.0f} ms"
    )
    reference = f"{fmt_ms(found['direct_ms'])} (direct)"
    rows = []
    for variant, label, wanted in HOOK_PATHS:
        added = found[f"{variant}_added_ms"]
        rows.append(
            Row(
                f"hook launcher, {label}",
                f"{added:+.1f} ms" if abs(added) < 10 else f"{added:+.0f} ms",
                reference,
                "",
                note,
                "" if wanted is None else goal(f"≤ +{wanted:g} ms", added <= wanted),
                added,
                REPORT_ONLY if wanted is None else BAND_LAUNCHER,
            )
        )
    return rows


def notice_rows(ctx: Context) -> list[Row]:
    runs = 10 if ctx.mode.quick else 20
    python = str(Path(ctx.plugman).absolute().parent / "python")
    found = notice_speed.measure(ctx.plugman, python, runs)
    ms, limit = found["notice_ms"], found["goal_ms"]
    note = (
        "`python -m plugman hooks notify claude-code`, what `agents add --notify-updates` writes "
        "as each agent's SessionStart hook, answering from the cache a real `plugman outdated` "
        f"wrote (one plugin with an update; it prints Claude's JSON notice), vs `python -c pass` "
        f"with the same interpreter (the floor), {runs} fresh processes each, alternating, median"
    )
    return [
        Row(
            "update notice: per agent start",
            fmt_ms(ms),
            f"{fmt_ms(found['floor_ms'])} (floor)",
            f"floor + {found['added_ms']:.0f} ms",
            note,
            goal(f"< {limit} ms", ms < limit),
            found["added_ms"],
            BAND_LAUNCHER,
        )
    ]


def launcher_rows(ctx: Context) -> list[Row]:
    found = launcher_overhead.measure(10 if ctx.mode.quick else 20)
    rows = []
    for name, row in found.items():
        note = (
            "from spawning to the `initialize` answer: the server's own command (the "
            "reference), `plugman mcp run` from its launch plan (what an agent gets from the "
            "second start on) and the full launcher (`PLUGMAN_NO_PLANS=1`: resolving at every "
            "start), interleaved start after start, median of "
            f"{row['runs']}; `minimal` answers by hand (no SDK): the launcher's own cost, which "
            "the goal judges; `notes` is the sample server on the MCP SDK, whose start (seconds "
            "on a loaded machine) spreads wider than the goal and the band: its rows and the full "
            "launcher's are reported, never a regression; nothing is added per call (the "
            "launcher execs the server)"
        )
        reference = f"{fmt_ms(row['direct_ms'])} (direct)"
        wanted = launcher_overhead_goal(name)
        rows += [
            Row(
                f"server start, plan path ({name})",
                f"{row['added_ms']:+.0f} ms",
                reference,
                "",
                note,
                "" if wanted is None else goal(f"≤ +{wanted:g} ms", row["added_ms"] <= wanted),
                row["added_ms"],
                REPORT_ONLY if wanted is None else BAND_LAUNCHER,
            ),
            Row(
                f"server start, full launcher ({name})",
                f"{row['full_added_ms']:+.0f} ms",
                reference,
                "",
                note,
                value_ms=row["full_added_ms"],
                band=REPORT_ONLY,
            ),
        ]
    return rows


def launcher_overhead_goal(name: str) -> float | None:
    """The issue's goal for a server's plan path: judged on the minimal server only."""
    return GOAL_SERVER_START_MS if name == "minimal" else None


def startup_rows(ctx: Context) -> list[Row]:
    runs = ctx.mode.paired_runs
    found = startup_speed.time_trees(ctx.plugman, runs, ctx.trees.all())
    head, base = found["head"], found.get("base")
    if base is not None:  # rows the rounds left unsettled get as many rounds again
        again = [
            label
            for label in head.runs
            if label in base.runs
            and label != startup_speed.FLOOR
            and unsettled(Figure.of(base.runs[label]), Figure.of(head.runs[label]), BAND)
        ]
        if again:
            more = startup_speed.time_trees(ctx.plugman, runs, ctx.trees.all(), only=again)
            for label in again:
                base.runs[label] += more["base"].runs[label]
                head.runs[label] += more["head"].runs[label]
    floor = head.floor.median_ms
    claude = ctx.claude.run(
        "claude --version", lambda binary: startup_speed.time_claude(binary, runs)
    )
    note = (
        "a fresh process each, in an empty PLUGMAN_HOME and project; reference: `python -c pass` "
        "with the same interpreter (the floor), measured in the same run; head and base "
        "alternate run after run; `claude --version` "
        f"(a native executable) took {fmt_ms(claude.median_ms) if claude else NOT_AVAILABLE}"
    )
    rows = []
    for label, _, _, over in startup_speed.COMMANDS:
        ms, limit = head.timed[label].median_ms, floor + over
        row = Row(
            f"start-up: {label}",
            fmt_ms(ms),
            f"{fmt_ms(floor)} (floor)",
            f"floor {'+' if ms >= floor else '-'} {abs(ms - floor):.0f} ms",
            note,
            goal(f"≤ floor + {over} ms", ms <= limit),
            ms,
        )
        figure = None
        if base is not None and label in base.missing:
            row.base = f"n/a ({base.missing[label]})"
        elif base is not None:
            figure = Figure.of(base.runs[label])
        head_figure = Figure.of(head.runs[label])
        cell = fmt_ms(figure.median_ms) if figure else ""
        rows.append(compare_row(row, figure, head_figure, ctx.trees, cell))
    return rows


@dataclass(frozen=True)
class Section:
    """A group of rows. ``paired``: its function times both trees itself, interleaved run after
    run; otherwise it runs once per tree in a child process importing plugman from that tree
    (``--worker KEY``), base and head alternating, and its rows are compared by name."""

    key: str
    title: str
    rows: Callable[[Context], list[Row]]
    paired: bool = False
    confirm: bool | None = None  # a regression measured again (None: when not paired)

    @property
    def confirmed(self) -> bool:
        """Whether a regression is reported only when a second measurement shows it too: rows
        decided on two figures, not over paired rounds."""
        return not self.paired if self.confirm is None else self.confirm


SECTIONS = (
    Section("validate", "validate", validate_rows),
    Section(
        "scan", "validate: hidden-text scan", lambda ctx: [validate_scan_cost(ctx)], True, True
    ),
    Section("install", "install + uninstall", install_rows),
    Section("resolve", "resolve", resolve_rows, paired=True),
    Section("probe", "probe", probe_rows),
    Section("gateway", "gateway overhead", gateway_rows),
    Section("fleet", "gateway fleet", fleet_rows),
    Section("hooks", "hook launcher", hook_launcher_rows),
    Section("notice", "update notice", notice_rows),
    Section("launcher", "server launcher", launcher_rows),
    Section("startup", "start-up", startup_rows, paired=True),
)


# Driver --------------------------------------------------------------------------------------


def run_sections(
    ctx: Context, started: float, chosen: list[Section], argv: list[str]
) -> tuple[list[Row], str | None]:
    """Every chosen section's rows, stopping at the first plugman failure (returned as text);
    ``argv``: the mode's options, passed on to the per-tree children."""
    rows: list[Row] = []
    for i, section in enumerate(chosen):
        progress(started, f"{section.title} ...")
        try:
            found = measure_section(ctx, section, argv, reverse=i % 2 == 1)
            if section.confirmed and any(row.regression for row in found):
                progress(started, f"{section.title}: a regression; measuring again to confirm")
                alone = replace(ctx, claude=Claude(None, "not timed again"))
                again = measure_section(alone, section, argv, reverse=i % 2 == 0)
                found = confirmed(found, again)
            rows += found
        except Exception as exc:  # a plugman failure: stop, but keep what was measured
            return rows, f"{section.title}: {first_line(exc)}"
    return rows, None


def measure_section(ctx: Context, section: Section, argv: list[str], reverse: bool) -> list[Row]:
    if section.paired:
        return section.rows(ctx)
    return per_tree(ctx, section, argv, reverse)


def confirmed(first: list[Row], again: list[Row]) -> list[Row]:
    """``first``, each regression kept only when the second measurement shows it too (a load
    spike rarely hits the same row twice; a real slowdown always does). Only for sections
    decided on two figures (measured once per tree, and the hidden-text scan's minima): start-up
    and resolve decide over their paired rounds (``compare``)."""
    second = {row.benchmark: row for row in again}
    for row in first:
        if not row.regression:
            continue
        other = second.get(row.benchmark)
        if other is not None and other.regression:
            again_delta = other.delta.replace(" REGRESSION", "")
            row.regression += f"; again: {other.plugman} vs {other.base} ({again_delta})"
        else:
            row.regression = ""
            row.delta = row.delta.replace(" REGRESSION", "") + " (noise: not again)"
    return first


def per_tree(ctx: Context, section: Section, argv: list[str], reverse: bool) -> list[Row]:
    """The section's rows on the head, compared with the same rows on the base: one child
    process per tree, the base first or (``reverse``) last."""
    trees = ctx.trees.all()
    found: dict[str, list[Row]] = {}
    base_why = ""
    for tree in trees[::-1] if reverse else trees:
        try:
            found[tree.label] = run_worker(ctx, section, tree, argv)
        except PlugmanError as exc:
            if tree.label == "head":
                raise
            base_why = f"n/a ({first_line(exc)})"
    base_rows = {row.benchmark: row for row in found.get("base", [])}
    rows = []
    for row in found["head"]:
        base = base_rows.get(row.benchmark)
        row.base = base_why or ("" if base else "n/a (no such row)")
        figure = None
        if base is not None and base.value_ms is not None:
            figure = Figure(base.value_ms, base.value_ms)
        head = Figure(row.value_ms or 0.0, row.value_ms or 0.0)
        if row.value_ms is None:
            figure = None
        rows.append(compare_row(row, figure, head, ctx.trees, base.plugman if base else ""))
    return rows


def run_worker(ctx: Context, section: Section, tree: Tree, argv: list[str]) -> list[Row]:
    """``section`` run by a child importing plugman from ``tree``; Claude Code is timed only
    in the head's."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", section.key, *argv]
    cmd += ["--tree", str(tree.path)]
    if tree.label == "head" and ctx.claude.binary is not None:
        cmd += ["--claude-binary", ctx.claude.binary]
    done = subprocess.run(cmd, env=tree.env(), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()
        raise PlugmanError(f"{tree.name}: {tail[-1] if tail else f'exit {done.returncode}'}")
    answer = json.loads(done.stdout)
    ctx.claude.failures += answer["claude_failures"]
    return [row_from_json(item) for item in answer["rows"]]


def row_from_json(item: dict[str, object]) -> Row:
    band = item.pop("band")
    row = Row(**item)  # type: ignore[arg-type]
    row.band = Band(**band) if isinstance(band, dict) else None
    return row


def worker(ctx: Context, key: str) -> int:
    """One section's rows as JSON on stdout (the child side of ``per_tree``)."""
    section = next(section for section in SECTIONS if section.key == key)
    try:
        rows = section.rows(ctx)
    except Exception as exc:
        print(f"{section.title}: {first_line(exc)}", file=sys.stderr)
        return 1
    answer = {"rows": [asdict(row) for row in rows], "claude_failures": ctx.claude.failures}
    print(json.dumps(answer))
    return 0


def footer(ctx: Context, seconds: float, load: tuple[float, float], failure: str | None) -> str:
    mode = "quick" if ctx.mode.quick else "full"
    parts = [
        f"{mode} run, {seconds:.0f} s wall; {platform.python_implementation()} "
        f"{platform.python_version()}, {os.cpu_count()} CPUs, load (1 min) "
        f"{load[0]:.2f} -> {load[1]:.2f}; Claude Code {CLAUDE_VERSION}"
    ]
    if ctx.trees.base is not None:
        parts.append(
            f"base: plugman/ of {ctx.trees.base.name}, same venv, in the same run; Δ: the "
            "head over the base (start-up, resolve: median per-round difference in own time, "
            "the wall time less the wait for a CPU); a regression: slower than the row's band, "
            "consistently over the rounds (bench/README.md)"
        )
    cpus = os.cpu_count() or 1
    if max(load) > cpus:
        parts.append(f"a load above {cpus} (other processes) makes every figure noisier")
    if ctx.claude.install_s is not None:
        parts.append(f"Claude Code was installed by this run (npm, {ctx.claude.install_s:.0f} s)")
    if ctx.claude.binary is None:
        parts.append(f"Claude Code not available: {ctx.claude.why}")
    parts += [f"Claude Code run failed, {failed}" for failed in ctx.claude.failures]
    if failure:
        parts.append(f"FAILED (plugman), table incomplete: {failure}")
    return "\n".join(parts)


def open_reference(spec: str, index: int, dest: Path) -> Reference:
    """``REV|DIR[:PYTHON]``: a revision's ``plugman/`` unpacked into ``dest``, or a folder
    holding one; byte-compiled by the interpreter that will run it."""
    where, _, python = spec.partition(":")
    label = f"also-{index}"
    if Path(where).is_dir():
        tree = Tree(label, Path(where).resolve(), where)
        sha = git_sha(tree.path, "HEAD")
    else:
        sha = git_sha(REPO_ROOT, where)
        tree = replace(checkout(REPO_ROOT, where, dest), label=label, name=where)
    if not (tree.path / "plugman" / "__init__.py").is_file():
        raise BaseError(f"--also {spec}: {tree.path} holds no plugman/ package")
    key = next((key for key in RESOLVE_REFERENCE_GOALS if sha.startswith(key)), "")
    cmd = [python or sys.executable, "-m", "compileall", "-q", "plugman"]
    subprocess.run(cmd, cwd=tree.path, env=tree.env(), capture_output=True, check=True)
    return Reference(tree, python or None, key)


def git_sha(repo: Path, rev: str) -> str:
    """The commit ``rev`` names in ``repo``, or "" where git cannot say."""
    try:
        return git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").decode().strip()
    except BaseError:
        return ""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few repetitions, small samples (CI)")
    parser.add_argument("--tools-dir", type=Path, default=DEFAULT_TOOLS_DIR)
    parser.add_argument(
        "--base",
        default=DEFAULT_BASE,
        help=f"the tree to compare with: a git revision (default {DEFAULT_BASE}), a directory "
        "holding a plugman/ package, or `none`",
    )
    parser.add_argument("--gate", action="store_true", help="exit 1 when a row regressed")
    parser.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="REV|DIR[:PYTHON]",
        help="a reference tree timed beside the head in the resolve row at "
        f"{resolve_speed.GOAL_SERVERS} servers (repeatable; PYTHON: the interpreter of a venv "
        "it needs, default this one); the issue's goals name a96adb6 and 2fdbf5a",
    )
    keys = ",".join(section.key for section in SECTIONS)
    parser.add_argument("--only", help=f"comma-separated sections, of {keys}")
    parser.add_argument("--runs", type=int, help="timed runs of validate, resolve and start-up")
    parser.add_argument("--resolve-sizes", type=resolve_speed.parse_sizes)
    parser.add_argument("--no-claude", action="store_true", help="time plugman only")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--claude-binary", help=argparse.SUPPRESS)
    parser.add_argument("--tree", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    unknown = set((args.only or keys).split(",")) - set(keys.split(","))
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))} (of {keys})")
    return args


def mode_of(args: argparse.Namespace) -> Mode:
    mode = QUICK if args.quick else FULL
    if args.runs:
        mode = replace(mode, runs=args.runs, paired_runs=args.runs)
    if args.resolve_sizes:
        mode = replace(mode, resolve_sizes=args.resolve_sizes)
    return mode


def worker_argv(args: argparse.Namespace) -> list[str]:
    """The options a per-tree child needs to measure as this run does."""
    found = ["--quick"] if args.quick else []
    found += ["--runs", str(args.runs)] if args.runs else []
    return [*found, "--tools-dir", str(args.tools_dir)]


def imported_from(tree: Path) -> bool:
    """Whether this process's plugman is the one under ``tree`` (a worker must time its own)."""
    import plugman

    return Path(plugman.__file__).resolve().is_relative_to(tree.resolve())


def plugman_binary() -> str:
    """The ``plugman`` console script of the venv running this (the same for every tree: its
    imports follow PYTHONPATH)."""
    beside = Path(sys.executable).parent / "plugman"
    return str(beside) if beside.exists() else str(ensure_plugman())


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        binary = args.claude_binary
        claude = Claude(binary) if binary else Claude(None, "not timed on this tree")
        here = Tree("head", args.tree or Path.cwd(), "worker")
        if args.tree and not imported_from(args.tree):
            print(f"plugman is not imported from {args.tree}: PYTHONPATH lost", file=sys.stderr)
            return 1
        return worker(
            Context(plugman_binary(), claude, mode_of(args), Trees(here, None)), args.worker
        )
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    try:
        plugman = plugman_binary()
    except ToolError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.no_claude:
        claude = Claude(None, "--no-claude")
    else:
        progress(started, f"Claude Code {CLAUDE_VERSION} ...")
        claude = find_claude(args.tools_dir.resolve())
    if claude.binary is None:
        progress(started, f"Claude Code not available: {claude.why}")
    chosen = [s for s in SECTIONS if args.only is None or s.key in args.only.split(",")]
    scratch = Path(tempfile.mkdtemp(prefix="plugman-table-base-"))
    try:
        spec = None if args.base == "none" else args.base
        progress(started, f"trees: head and base {spec} ...")
        trees = open_trees(spec, scratch)
        if trees.base is None:
            progress(started, f"no comparison: {trees.why}")
        try:
            also = tuple(
                open_reference(spec, i, scratch / f"also-{i}") for i, spec in enumerate(args.also)
            )
        except (BaseError, subprocess.CalledProcessError) as exc:
            print(f"error: --also: {first_line(exc)}", file=sys.stderr)
            return 1
        ctx = Context(plugman, claude, mode_of(args), trees, also)
        rows, failure = run_sections(ctx, started, chosen, worker_argv(args))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    seconds = time.perf_counter() - started
    load = (load_before, os.getloadavg()[0])
    text = "\n".join([*render(rows, trees), "", footer(ctx, seconds, load, failure)]) + "\n"
    print(text, end="")
    out = results_dir() / "table.md"
    out.write_text(text, encoding="utf-8")
    progress(started, f"wrote {out}")
    if failure:
        return 1
    return 1 if args.gate and any(row.regression for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

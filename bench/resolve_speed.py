"""Wall-clock speed of ``plugman config resolve --json`` at 10, 100, 1,000 and 10,000 servers.

Each size is a fresh temp ``PLUGMAN_HOME`` (``PLUGMAN_MANAGED_DIR=<home>/managed``, left empty)
and a fresh temp project holding N MCP servers. One in five comes from an installed plugin (N/5
plugins, each with one server in its ``.mcp.json``, installed in user scope from a generated
local marketplace, untimed; at 10,000 servers the plugins stay at 200 to keep the set-up short)
and the rest are spread over every file a user writes by hand:

* user ``<home>/config/plugman.toml`` ``[mcp_servers]``: 40 % (every third one http, the others
  stdio with ``args`` and an ``env`` using ``${VAR:-default}``);
* project ``plugman.toml`` ``[mcp_servers]``: 20 %; project ``.mcp.json``: 30 %;
* local ``.plugman/local.toml``: 10 %, half of them shadowing a user server of the same name;

plus N/10 hooks (at least 2) in the user and project ``plugman.toml`` ``[hooks]`` tables. Project
entries are approved first (``plugman trust approve --all``, untimed), and one untimed run checks
that the resolved document has exactly the servers and hooks expected and nothing pending.

Each size is then timed as the median of N fresh processes (default 5) after one untimed warm-up.
There is no Claude Code figure: its only command that lists the merged servers, ``claude mcp
list``, starts and health-checks every server, so it measures the servers, not the merge.

Goal (issue 15): 1,000 servers / 100 hooks / 200 plugins in at most 150 ms for the whole
process, growing linearly. Results go to ``bench/results/resolve-speed.json``.

Side by side: ``--tree PATH[:PYTHON]`` (repeatable) times several source trees of plugman in one
run instead: each tree builds its own data with its own code (``PYTHON -m plugman`` with
``PYTHONPATH=PATH``; PYTHON defaults to this interpreter), untimed, then the trees' ``config
resolve --json`` run alternately, the order reversed every other round, and each tree's wall and
child CPU (``getrusage(RUSAGE_CHILDREN)``) medians are printed beside the first tree's. Nothing is
written to ``bench/results`` then.

Usage: ``.venv/bin/python bench/resolve_speed.py [--runs N] [--quick] [--sizes 10,100,1000,10000]
[--tree PATH[:PYTHON] ...]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from claude_code import ToolError, ensure_plugman, results_dir
from validate_speed import BenchError, Check, Timing, time_command

SIZES = (10, 100, 1000, 10000)
GOAL_SERVERS, GOAL_MS = 1000, 150
MAX_PLUGINS = 200
HOOK_EVENTS = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop")
TIMEOUT_S = 300


@dataclass
class Layout:
    """The files of one config size, and what resolving them must give."""

    user: list[str]
    project_toml: list[str]
    mcp_json: dict[str, Any]
    local: list[str]
    servers: int
    hooks: int
    plugins: int


@dataclass
class SizeResult:
    """One config size: its shape and its timing."""

    servers_written: int
    servers_resolved: int
    hooks: int
    plugins: int
    timing: Timing

    @property
    def median_ms(self) -> float:
        return self.timing.median_ms


def toml_server(name: str, i: int) -> list[str]:
    """One ``[mcp_servers.<name>]`` table: http for every third, stdio otherwise."""
    if i % 3 == 0:
        return [
            f"[mcp_servers.{name}]",
            'type = "http"',
            f'url = "https://{name}.example.com/mcp"',
            f'headers = {{ "X-Client" = "bench-{i}" }}',
            "",
        ]
    return [
        f"[mcp_servers.{name}]",
        f'command = "{name}-server"',
        f'args = ["--port", "{8000 + i}", "--verbose"]',
        'env = { MODE = "${BENCH_MODE:-fast}", LEVEL = "' + str(i) + '" }',
        "",
    ]


def toml_hooks(prefix: str, count: int) -> list[str]:
    """A ``[hooks]`` table of ``count`` command handlers spread over a few events."""
    by_event: dict[str, list[str]] = {}
    for i in range(count):
        event = HOOK_EVENTS[i % len(HOOK_EVENTS)]
        group = (
            f'{{ matcher = "Tool{i}", hooks = [{{ type = "command", '
            f'command = "echo {prefix}-{i}" }}] }}'
        )
        by_event.setdefault(event, []).append(group)
    lines = ["[hooks]"]
    lines += [f"{event} = [{', '.join(groups)}]" for event, groups in by_event.items()]
    return [*lines, ""]


def layout(n: int) -> Layout:
    """``n`` servers: one in five from a plugin (at most MAX_PLUGINS), the rest spread over
    user, project, .mcp.json and local; and n/10 hooks."""
    plugins = min(n // 5, MAX_PLUGINS)
    files = n - plugins
    n_user, n_project, n_json = files * 4 // 10, files * 2 // 10, files * 3 // 10
    n_local = files - n_user - n_project - n_json
    shadowing = min(n_local // 2, n_user)
    user: list[str] = []
    for i in range(n_user):
        user += toml_server(f"user-{i:04d}", i)
    project: list[str] = []
    for i in range(n_project):
        project += toml_server(f"proj-{i:04d}", i)
    local: list[str] = []
    for i in range(n_local):
        name = f"user-{i:04d}" if i < shadowing else f"local-{i:04d}"
        local += toml_server(name, i + 1)
    servers = {
        f"json-{i:04d}": {"command": f"json-{i}-server", "args": ["--stdio", str(i)]}
        for i in range(n_json)
    }
    hooks = max(2, n // 10)
    user += toml_hooks("user", hooks - hooks // 2)
    project += toml_hooks("project", hooks // 2)
    return Layout(user, project, {"mcpServers": servers}, local, n - shadowing, hooks, plugins)


def write_layout(shape: Layout, home: Path, project: Path) -> None:
    """Write every file of ``shape`` into a PLUGMAN_HOME and a project folder."""
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "managed").mkdir(exist_ok=True)
    (project / ".plugman").mkdir(parents=True, exist_ok=True)
    user = home / "config" / "plugman.toml"  # after what install declared there
    declared = user.read_text(encoding="utf-8") if user.exists() else ""
    user.write_text(declared + "\n" + "\n".join(shape.user), encoding="utf-8")
    (project / "plugman.toml").write_text("\n".join(shape.project_toml), encoding="utf-8")
    (project / ".mcp.json").write_text(json.dumps(shape.mcp_json, indent=2), encoding="utf-8")
    (project / ".plugman" / "local.toml").write_text("\n".join(shape.local), encoding="utf-8")


def write_market(shape: Layout, market: Path) -> None:
    """A local marketplace of ``shape.plugins`` plugins, one MCP server each."""
    entries = []
    for i in range(shape.plugins):
        name = f"bench-{i:04d}"
        root = market / "plugins" / name
        (root / ".claude-plugin").mkdir(parents=True)
        manifest = {"name": name, "version": "1.0.0", "description": f"bench plugin {i}"}
        (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
        server = {"command": f"plugin-{i}-server", "args": ["--stdio"]}
        (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"srv": server}}))
        entries.append({"name": name, "source": f"./plugins/{name}", "version": "1.0.0"})
    (market / ".claude-plugin").mkdir(parents=True)
    catalog = {"name": "bench-market", "owner": {"name": "bench"}, "plugins": entries}
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))


def plugman_env(home: Path) -> dict[str, str]:
    """The caller's environment (bytecode caches allowed) with plugman pointed at ``home``."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "BENCH_MODE")
    }
    env["PLUGMAN_HOME"] = str(home)
    env["PLUGMAN_MANAGED_DIR"] = str(home / "managed")
    return env


def run_checked(cmd: list[str], env: dict[str, str]) -> str:
    """Run an untimed set-up or check command; return its stdout or raise BenchError."""
    proc = subprocess.run(
        cmd, capture_output=True, text=True, env=env, timeout=TIMEOUT_S, check=False
    )
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr.strip() or proc.stdout.strip()).splitlines()[-15:])
        raise BenchError(f"exit code {proc.returncode}: {' '.join(cmd)}\n{tail}")
    return proc.stdout


def check_resolved(stdout: str, shape: Layout) -> int:
    """The number of resolved servers; BenchError unless servers, hooks, approvals are right."""
    try:
        doc = json.loads(stdout)
    except ValueError as exc:
        raise BenchError(f"config resolve --json did not print JSON: {exc}") from exc
    servers = len(doc.get("mcpServers", {}))
    hooks = sum(len(groups) for groups in doc.get("hooks", {}).values())
    pending = [d for d in doc.get("diagnostics", []) if d.get("code") == "pending-approval"]
    if servers != shape.servers or hooks != shape.hooks or pending:
        raise BenchError(
            f"resolved {servers} servers / {hooks} hooks / {len(pending)} pending, expected "
            f"{shape.servers} / {shape.hooks} / 0"
        )
    return servers


def build_size(
    plugman: list[str], n: int, workdir: Path, env: dict[str, str] | None = None
) -> tuple[list[str], dict[str, str], int]:
    """Build the config of size ``n`` under ``workdir`` with ``plugman`` (its argv) and check it:
    the timed command, its environment and the number of servers resolved."""
    shape = layout(n)
    home, project = workdir / f"home-{n}", workdir / f"project-{n}"
    project.mkdir(parents=True)
    env = {**plugman_env(home), **(env or {}), "HOME": str(workdir)}
    at = [*plugman, "--project", str(project)]
    if shape.plugins:  # first, into an empty config: the install itself is not what is timed
        market = workdir / f"market-{n}"
        write_market(shape, market)
        run_checked([*at, "marketplace", "add", str(market)], env)
        run_checked([*at, "install", *[f"bench-{i:04d}" for i in range(shape.plugins)]], env)
    write_layout(shape, home, project)
    run_checked([*at, "trust", "approve", "--all"], env)
    cmd = [*at, "config", "resolve", "--json"]
    return cmd, env, check_resolved(run_checked(cmd, env), shape)


def prepare_size(
    plugman: str, n: int, workdir: Path, pythonpath: str | None = None
) -> tuple[list[str], dict[str, str], Layout, int]:
    """Build the config of size ``n`` under ``workdir`` and check it (bench/table.py's base and
    head trees): the command to time, its environment (plugman imported from ``pythonpath``
    when given), the layout and the number of servers resolved."""
    env = None if pythonpath is None else {"PYTHONPATH": pythonpath}
    cmd, env, resolved = build_size([plugman], n, workdir, env)
    return cmd, env, layout(n), resolved


def time_size(plugman: str, n: int, runs: int, workdir: Path) -> SizeResult:
    """Build the config of size ``n`` under ``workdir``, check it, then time it."""
    shape = layout(n)
    cmd, env, resolved = build_size([plugman], n, workdir)
    timing = time_command(cmd, runs, Check(frozenset({0}), None), env)
    return SizeResult(n, resolved, shape.hooks, shape.plugins, timing)


@dataclass
class Tree:
    """A source tree of plugman run side by side (``--tree PATH[:PYTHON]``) and its runs."""

    path: Path
    python: str
    cmd: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    wall_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)


def parse_tree(text: str) -> Tree:
    path, _, python = text.partition(":")
    if not (Path(path) / "plugman" / "__init__.py").is_file():
        raise argparse.ArgumentTypeError(f"{path} is not a plugman source tree")
    return Tree(Path(path).resolve(), python or sys.executable)


def run_timed(tree: Tree) -> None:
    """One run of ``tree``'s command: its wall time and its child CPU time, in ms."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(tree.cmd, env=tree.env, capture_output=True, timeout=TIMEOUT_S)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise BenchError(f"exit code {proc.returncode}: {tree.path}: {' '.join(tree.cmd)}")
    tree.wall_ms.append(wall * 1000)
    used = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    tree.cpu_ms.append(used * 1000)


def side_by_side(trees: list[Tree], n: int, runs: int) -> None:
    """Build each tree's data with its own code (untimed), then time the trees alternately (one
    untimed round first; the order reversed every other round) and print the medians."""
    workdir = Path(tempfile.mkdtemp(prefix="plugman-resolve-trees-"))
    try:
        for i, tree in enumerate(trees):
            own = workdir / f"tree-{i}"
            own.mkdir()
            pythonpath = {"PYTHONPATH": str(tree.path)}
            # -P: the current folder does not go before PYTHONPATH (it may hold another plugman)
            compiling = [tree.python, "-P", "-m", "compileall", "-q", str(tree.path / "plugman")]
            subprocess.run(compiling, check=True, capture_output=True)
            plugman = [tree.python, "-P", "-m", "plugman"]
            tree.cmd, tree.env, _ = build_size(plugman, n, own, pythonpath)
        for round_ in range(runs + 1):
            for tree in trees if round_ % 2 else trees[::-1]:
                run_timed(tree)
        for tree in trees:  # the first round was the warm-up
            del tree.wall_ms[0], tree.cpu_ms[0]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    first = trees[0]
    print(f"\nconfig resolve --json, {n} servers; {runs} interleaved runs per tree; medians\n")
    print(f"{'tree':<40} {'wall ms':>8} {'CPU ms':>8} {'first/this wall':>16} {'CPU':>6}")
    for tree in trees:
        wall, cpu = statistics.median(tree.wall_ms), statistics.median(tree.cpu_ms)
        ratio_wall = statistics.median(first.wall_ms) / wall
        ratio_cpu = statistics.median(first.cpu_ms) / cpu
        print(f"{tree.path!s:<40} {wall:>8.1f} {cpu:>8.1f} {ratio_wall:>15.2f}x {ratio_cpu:>5.2f}x")


def measure(plugman: str, runs: int, sizes: tuple[int, ...] = SIZES) -> list[SizeResult]:
    """Time ``config resolve --json`` at every size."""
    workdir = Path(tempfile.mkdtemp(prefix="plugman-resolve-bench-"))
    try:
        return [time_size(plugman, n, runs, workdir) for n in sizes]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def report(results: list[SizeResult], runs: int) -> None:
    print(
        f"\nplugman config resolve --json; median of {runs} runs; "
        f"{platform.python_implementation()} {platform.python_version()}; "
        f"{os.cpu_count()} CPUs\n"
    )
    header = f"{'servers':>8} {'resolved':>9} {'hooks':>6} {'plugins':>8} {'median ms':>10}"
    print(header)
    print("-" * len(header))
    for r in results:
        print(
            f"{r.servers_written:>8} {r.servers_resolved:>9} {r.hooks:>6} {r.plugins:>8} "
            f"{r.median_ms:>10,.0f}"
        )
    goal = [r for r in results if r.servers_written == GOAL_SERVERS]
    if goal:
        verdict = "met" if goal[0].median_ms <= GOAL_MS else "NOT met"
        print(f"\ngoal: {GOAL_SERVERS} servers in at most {GOAL_MS} ms: {verdict}")
    print("\nno Claude Code figure: `claude mcp list` health-checks every server (not comparable)")


def save(results: list[SizeResult], runs: int, quick: bool) -> Path:
    out = results_dir() / "resolve-speed.json"
    payload = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "runs": runs,
        "quick": quick,
        "sizes": [{**asdict(r), "median_ms": r.median_ms} for r in results],
    }
    out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return out


def parse_sizes(text: str) -> tuple[int, ...]:
    sizes = tuple(int(part) for part in text.split(",") if part.strip())
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError("sizes must be positive integers, e.g. 10,100,1000")
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per size (default 5)")
    parser.add_argument("--quick", action="store_true", help="3 runs per size")
    parser.add_argument(
        "--sizes", type=parse_sizes, default=SIZES, help="default 10,100,1000,10000"
    )
    parser.add_argument(
        "--tree",
        type=parse_tree,
        action="append",
        default=[],
        metavar="PATH[:PYTHON]",
        help="time these source trees side by side (repeatable; ratios against the first)",
    )
    args = parser.parse_args(argv)
    runs: int = 3 if args.quick else args.runs
    if runs < 1:
        parser.error("--runs must be at least 1")
    if args.tree:
        try:
            for n in args.sizes:
                side_by_side(args.tree, n, runs)
        except (BenchError, subprocess.SubprocessError) as exc:
            print(f"FAILED: {exc}", file=sys.stderr)
            return 1
        return 0
    try:
        plugman = str(ensure_plugman())
        results = measure(plugman, runs, args.sizes)
    except (ToolError, BenchError) as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    report(results, runs)
    print(f"\nwrote {save(results, runs, args.quick)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Wall-clock speed of ``plugman mcp probe`` against ``claude mcp list`` over 10 stdio servers.

Both commands start every configured MCP server, connect, and report whether it connected;
Claude Code starts local servers 3 at a time, plugman 10. The servers are ten copies of the
stdlib-only server of ``probe_speed.py`` (it sleeps 1 s before serving, as ``npx``/``uvx`` do on a
cold cache), written as user-scope servers: ``[mcp_servers]`` in ``<PLUGMAN_HOME>/config/
plugman.toml`` for plugman, ``mcpServers`` in ``~/.claude.json`` (a throw-away HOME) for Claude
Code. Both run from an empty temp project folder. plugman also lists each server's tools,
resources and prompts; Claude Code only connects.

Each command is timed as the median of N fresh processes (default 3) after one untimed warm-up;
every run must report all ten servers connected. The two commands run interleaved (plugman, then
Claude Code, the order reversed every other round), and the CPU time of each (its own and its
servers', from ``getrusage(RUSAGE_CHILDREN)``) is reported beside the wall time: on a loaded
machine the wall time of CPU work stretches, and plugman spends more CPU (it imports the mcp SDK,
~0.85 CPU-s, while its servers start) while Claude Code mostly waits for its batches of 3, so
timing one command's runs in a quiet minute and the other's in a busy one moves the ratio from
about 1.2x to over 2x. Only interleaved runs compare the two.

Results go to ``bench/results/probe-cli-speed.json``.

Usage: ``.venv/bin/python bench/probe_cli_speed.py [--runs N] [--quick]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import statistics
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from claude_code import (
    CLAUDE_VERSION,
    DEFAULT_TOOLS_DIR,
    VENV_PYTHON,
    ToolError,
    claude_env,
    ensure_claude,
    ensure_plugman,
    results_dir,
)
from probe_speed import COPIES, TINY
from validate_speed import BenchError, Check, Timing, run_once, time_command

PASSING = frozenset({0})
PLUGMAN_DONE = re.compile(rf"{COPIES} servers: {COPIES} connected")
CLAUDE_DONE = re.compile(rf"(?:✔ Connected.*?){{{COPIES}}}", re.DOTALL)


@dataclass
class ProbeCli:
    """Timings of both commands; ``claude`` is None when Claude Code was not timed. CPU seconds
    (the command's and its servers') per run, when the runs were interleaved."""

    plugman: Timing
    claude: Timing | None
    plugman_cpu: list[float] = field(default_factory=list)
    claude_cpu: list[float] = field(default_factory=list)
    load: tuple[float, float] | None = None  # 1-minute load average before, after


@dataclass(frozen=True)
class Case:
    """One command ready to run: argv, environment, working folder and what a run must show."""

    cmd: list[str]
    env: dict[str, str]
    cwd: Path
    check: Check


def servers(script: Path) -> dict[str, dict[str, Any]]:
    """Ten stdio servers, all running ``script``."""
    entry = {"command": str(VENV_PYTHON), "args": [str(script)]}
    return {f"server-{i}": dict(entry) for i in range(COPIES)}


def plugman_toml(entries: dict[str, dict[str, Any]]) -> str:
    lines: list[str] = []
    for name, entry in entries.items():
        args = ", ".join(json.dumps(arg) for arg in entry["args"])
        lines += [f"[mcp_servers.{name}]", f"command = {json.dumps(entry['command'])}"]
        lines += [f"args = [{args}]", ""]
    return "\n".join(lines)


@contextmanager
def workspace() -> Iterator[tuple[Path, Path]]:
    """A temp folder with an empty ``project`` and the server script: (folder, script)."""
    workdir = Path(tempfile.mkdtemp(prefix="plugman-probe-cli-bench-"))
    try:
        (workdir / "project").mkdir()
        script = workdir / "tiny.py"
        script.write_text(TINY, encoding="utf-8")
        yield workdir, script
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@contextmanager
def plugman_case(plugman: str) -> Iterator[Case]:
    """``plugman --project <empty> mcp probe`` with the servers in user scope."""
    with workspace() as (workdir, script):
        home = workdir / "plugman-home"
        (home / "config").mkdir(parents=True)
        toml = plugman_toml(servers(script))
        (home / "config" / "plugman.toml").write_text(toml, encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update({"PLUGMAN_HOME": str(home), "PLUGMAN_MANAGED_DIR": str(home / "managed")})
        project = workdir / "project"
        cmd = [plugman, "--project", str(project), "mcp", "probe"]
        yield Case(cmd, env, project, Check(PASSING, PLUGMAN_DONE))


@contextmanager
def claude_case(claude: str) -> Iterator[Case]:
    """``claude mcp list`` with the servers in ``~/.claude.json`` (a throw-away HOME)."""
    with workspace() as (workdir, script):
        env = claude_env()
        config = {"mcpServers": {k: {"type": "stdio", **v} for k, v in servers(script).items()}}
        (Path(env["HOME"]) / ".claude.json").write_text(json.dumps(config), encoding="utf-8")
        yield Case([claude, "mcp", "list"], env, workdir / "project", Check(PASSING, CLAUDE_DONE))


def time_plugman(plugman: str, runs: int) -> Timing:
    """``plugman mcp probe`` alone: one warm-up, then ``runs`` timed runs."""
    with plugman_case(plugman) as case:
        return time_command(case.cmd, runs, case.check, case.env, case.cwd)


def time_claude(claude: str, runs: int) -> Timing:
    """``claude mcp list`` alone: one warm-up, then ``runs`` timed runs."""
    with claude_case(claude) as case:
        return time_command(case.cmd, runs, case.check, case.env, case.cwd)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def interleaved(cases: Sequence[Case], runs: int) -> list[tuple[Timing, list[float]]]:
    """Every case once untimed, then ``runs`` rounds running each case once, the order reversed
    every other round: (wall timing, CPU seconds per run) per case. The exit code must not
    change."""
    found: list[tuple[Timing, list[float]]] = [(Timing(), []) for _ in cases]
    firsts = [run_once(c.cmd, c.env, c.check, c.cwd)[1] for c in cases]
    for round_ in range(runs):
        order = list(range(len(cases)))
        for i in order if round_ % 2 == 0 else order[::-1]:
            case, (timing, cpu) = cases[i], found[i]
            before = children_cpu()
            seconds, code = run_once(case.cmd, case.env, case.check, case.cwd)
            if code != firsts[i]:
                raise BenchError(f"exit code changed from {firsts[i]} to {code}: {case.cmd}")
            timing.seconds.append(seconds)
            timing.exit_codes.append(code)
            cpu.append(children_cpu() - before)
    return found


def measure(plugman: str, claude: str | None, runs: int) -> ProbeCli:
    """Both commands, interleaved in the same run (plugman alone when ``claude`` is None)."""
    load_before = os.getloadavg()[0]
    with ExitStack() as stack:
        cases = [stack.enter_context(plugman_case(plugman))]
        if claude is not None:
            cases.append(stack.enter_context(claude_case(claude)))
        found = interleaved(cases, runs)
    load = (load_before, os.getloadavg()[0])
    (p_time, p_cpu), rest = found[0], found[1:]
    if not rest:
        return ProbeCli(p_time, None, p_cpu, load=load)
    (c_time, c_cpu) = rest[0]
    return ProbeCli(p_time, c_time, p_cpu, c_cpu, load)


def report(result: ProbeCli, runs: int) -> None:
    print(
        f"\n{COPIES} stdio servers (1 s start-up sleep each); median of {runs} runs; "
        f"Claude Code {CLAUDE_VERSION}; {platform.python_implementation()} "
        f"{platform.python_version()}; {os.cpu_count()} CPUs\n"
    )
    if result.load is not None:
        print(f"load average (1 min) before/after: {result.load[0]:.2f}/{result.load[1]:.2f}\n")
    p_ms = result.plugman.median_ms
    print(f"{'plugman mcp probe':<20} {p_ms:>8,.0f} ms wall {_cpu(result.plugman_cpu)}")
    if result.claude is not None:
        c_ms = result.claude.median_ms
        print(f"{'claude mcp list':<20} {c_ms:>8,.0f} ms wall {_cpu(result.claude_cpu)}")
        print(f"\nclaude/plugman: {c_ms / p_ms:.2f}x (interleaved, same run)")


def _cpu(seconds: list[float]) -> str:
    return (
        f"{statistics.median(seconds) * 1000:>8,.0f} ms CPU (with its servers)" if seconds else ""
    )


def save(result: ProbeCli, runs: int, quick: bool) -> Path:
    out = results_dir() / "probe-cli-speed.json"
    payload = {
        "claude_version": CLAUDE_VERSION,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "servers": COPIES,
        "runs": runs,
        "quick": quick,
        "timings": asdict(result),
    }
    out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs per command (default 3)")
    parser.add_argument("--quick", action="store_true", help="1 run per command")
    parser.add_argument("--tools-dir", type=Path, default=DEFAULT_TOOLS_DIR)
    args = parser.parse_args(argv)
    runs: int = 1 if args.quick else args.runs
    if runs < 1:
        parser.error("--runs must be at least 1")
    try:
        claude = str(ensure_claude(args.tools_dir.resolve()))
        plugman = str(ensure_plugman())
    except ToolError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    try:
        result = measure(plugman, claude, runs)
    except BenchError as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    report(result, runs)
    print(f"\nwrote {save(result, runs, args.quick)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

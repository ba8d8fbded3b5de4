"""Read-back cost: what asking the linked agents adds to `plugman list` (`--check`) and
`plugman doctor`.

One throwaway HOME, PLUGMAN_HOME and project: the sample marketplace, `writing-skills` at user
scope with Claude Code linked there, `notes-server` at project scope with Codex, Gemini CLI and
Copilot CLI linked there (their folder trusted in Codex and Copilot CLI), the pinned agents from
`.tools` on PATH, offline (`COPILOT_OFFLINE`). Each figure is the median of N fresh processes
(default 3) after one untimed warm-up: `plugman list`, `plugman list --check` with every agent,
and `list --check` with one agent on PATH at a time (the others missing, so not asked: that
agent's own cost). Every run must exit 0.

Results go to `bench/results/readback-speed.json`.

Usage: `.venv/bin/python bench/readback_speed.py [--runs N]`
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOOLS = REPO / ".tools"
BINS = {
    "claude-code": TOOLS / "claude-code" / "node_modules" / ".bin",
    "codex": TOOLS / "codex" / "node_modules" / ".bin",
    "gemini": TOOLS / "gemini-cli" / "node_modules" / ".bin",
    "copilot-cli": TOOLS / "copilot" / "node_modules" / ".bin",
}
BASE_PATH = f"{Path(sys.executable).parent}{os.pathsep}/usr/bin{os.pathsep}/bin"


def plugman(env: dict[str, str], project: Path, *args: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "plugman", "--project", str(project), *args],
        env=env, cwd=project, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"plugman {' '.join(args)} failed: {done.stderr[-2000:]}")
    return took


def median_ms(runs: int, env: dict[str, str], project: Path, *args: str) -> float:
    plugman(env, project, *args)  # warm-up
    return 1000 * statistics.median(plugman(env, project, *args) for _ in range(runs))


def setup(root: Path) -> tuple[dict[str, str], Path]:
    home, project = root / "home", root / "project"
    project.mkdir(parents=True)
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(
        f'[projects."{project}"]\ntrust_level = "trusted"\n'
    )
    (home / ".copilot").mkdir()
    (home / ".copilot" / "config.json").write_text(json.dumps({"trusted_folders": [str(project)]}))
    env = {
        "HOME": str(home),
        "PLUGMAN_HOME": str(root / "plugman-home"),
        "PATH": BASE_PATH,
        "COPILOT_OFFLINE": "true",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "GEMINI_TELEMETRY_ENABLED": "false",
    }
    plugman(env, project, "marketplace", "add", str(REPO / "sample-plugins"))
    plugman(env, project, "agents", "add", "claude-code")
    plugman(env, project, "agents", "add", "codex", "gemini", "copilot-cli", "--scope", "project")
    plugman(env, project, "install", "writing-skills")
    plugman(env, project, "install", "notes-server", "--scope", "project")
    return env, project


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    missing = [name for name, folder in BINS.items() if not folder.is_dir()]
    if missing:
        print(f"agents not installed under {TOOLS}: {', '.join(missing)}", file=sys.stderr)
        return 1
    rows: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        env, project = setup(Path(tmp))
        rows["plugman list"] = median_ms(args.runs, env, project, "list")
        every = {**env, "PATH": os.pathsep.join([*map(str, BINS.values()), BASE_PATH])}
        rows["plugman list --check (4 agents)"] = median_ms(
            args.runs, every, project, "list", "--check"
        )
        for name, folder in BINS.items():
            one = {**env, "PATH": f"{folder}{os.pathsep}{BASE_PATH}"}
            rows[f"plugman list --check ({name} only)"] = median_ms(
                args.runs, one, project, "list", "--check"
            )
    width = max(map(len, rows))
    print(f"read-back; median of {args.runs} runs; {os.cpu_count()} CPUs")
    for name, ms in rows.items():
        print(f"{name:{width}}  {ms:7.0f} ms")
    out = REPO / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "readback-speed.json").write_text(json.dumps({"runs": args.runs, "ms": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

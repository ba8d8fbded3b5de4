"""``plugman lock export``: how long an SBOM takes, in CycloneDX and in SPDX, for a project of 1
and of 25 locked plugins (each with two MCP servers, ``npx -y`` and ``uvx``), beside the python
floor and ``plugman paths`` (the start-up every command pays); and what importing each SBOM
library costs on its own: cyclonedx-python-lib (a dependency, imported only by ``lock export
--format cyclonedx``) and spdx-tools (only the tests' validator: plugman writes SPDX itself).

Each command is timed as the median of N fresh processes (default 5) after one untimed warm-up,
in a temp ``PLUGMAN_HOME`` and project whose plugins are installed first (not timed). Every run
must exit 0 and print the document. No goal: the figures say what the choice of libraries cost.

Results go to ``bench/results/sbom-speed.json``.

Usage: ``.venv/bin/python bench/sbom_speed.py [--runs N] [--quick]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from claude_code import VENV_PYTHON, ToolError, ensure_plugman, results_dir
from validate_speed import BenchError, Check, Timing, time_command

PASSING = frozenset({0})
SIZES = (1, 25)
IMPORTS = {
    "cyclonedx-python-lib": "from cyclonedx.output.json import JsonV1Dot7; "
    "from cyclonedx.model.bom import Bom; from packageurl import PackageURL",
    "spdx-tools": "from spdx_tools.spdx.parser.parse_anything import parse_file; "
    "from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document",
}


def _plugins(folder: Path, count: int) -> list[str]:
    """`count` plugin folders, each launching an npm and a PyPI package."""
    made = []
    for i in range(count):
        root = folder / f"plugin-{i}"
        (root / ".claude-plugin").mkdir(parents=True)
        servers = {
            "files": {"command": "npx", "args": ["-y", f"pkg-{i}@1.0.{i}"]},
            "tool": {"command": "uvx", "args": [f"tool-{i}==1.{i}"]},
        }
        manifest = {"name": f"plugin-{i}", "version": "1.0.0", "mcpServers": servers}
        (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
        made.append(str(root))
    return made


def measure(plugman: str, runs: int) -> dict[str, Timing]:
    workdir = Path(tempfile.mkdtemp(prefix="plugman-sbom-bench-"))
    try:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env |= {"PLUGMAN_HOME": str(workdir / "home"), "HOME": str(workdir)}
        timed = {"python -c pass (floor)": _time([str(VENV_PYTHON), "-c", "pass"], runs, env)}
        for library, code in IMPORTS.items():
            timed[f"import {library}"] = _time([str(VENV_PYTHON), "-c", code], runs, env)
        timed["plugman paths"] = _time([plugman, "paths"], runs, env)
        for count in SIZES:
            project = workdir / f"project-{count}"
            project.mkdir()
            specs = _plugins(workdir / f"plugins-{count}", count)
            install = [plugman, "--project", str(project), "install", *specs, "-s", "project"]
            subprocess.run(install, env=env, check=True, capture_output=True)
            for form, done in (("cyclonedx", r'"specVersion": "1.7"'), ("spdx", r"SPDX-2.3")):
                argv = [plugman, "--project", str(project), "lock", "export", "--format", form]
                label = f"lock export --format {form} ({count} plugins)"
                timed[label] = time_command(argv, runs, Check(PASSING, re.compile(done)), env)
        return timed
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _time(argv: list[str], runs: int, env: dict[str, str]) -> Timing:
    return time_command(argv, runs, Check(PASSING, None), env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per command (default 5)")
    parser.add_argument("--quick", action="store_true", help="3 runs per command")
    args = parser.parse_args(argv)
    runs: int = 3 if args.quick else args.runs
    try:
        plugman = str(ensure_plugman())
        timed = measure(plugman, runs)
    except (ToolError, BenchError, subprocess.CalledProcessError) as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    print(f"\nlock export; median of {runs} runs; python {platform.python_version()}\n")
    for label, timing in timed.items():
        print(f"{label:<48} {timing.median_ms:>8,.0f} ms")
    out = results_dir() / "sbom-speed.json"
    payload = {"python": platform.python_version(), "runs": runs, "quick": args.quick}
    payload |= {"timings": {label: asdict(t) for label, t in timed.items()}}
    out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Shared helpers for the bench scripts: npm tool (Claude Code) install, environment, corpus.

Stdlib only. Claude Code (``@anthropic-ai/claude-code``) is pinned to an exact version and
installed into a private tools directory (``<repo>/.tools`` by default, gitignored); it is always
run with a throwaway HOME so that it never reads or writes a real home directory.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CLAUDE_PACKAGE = "@anthropic-ai/claude-code"
CLAUDE_VERSION = "2.1.332"

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TOOLS_DIR = REPO_ROOT / ".tools"
DEFAULT_CORPUS = REPO_ROOT / "tests" / "corpus" / "manifests"
RESULTS_DIR = REPO_ROOT / "bench" / "results"
PLUGMAN = REPO_ROOT / ".venv" / "bin" / "plugman"
VENV_PYTHON = REPO_ROOT / ".venv" / "bin" / "python"

_temp_homes: list[str] = []


class ToolError(RuntimeError):
    """A tool (npm, Claude Code, plugman) could not be installed or run at all."""


def claude_binary(tools_dir: Path) -> Path:
    """Where ``ensure_claude`` installs the ``claude`` binary for ``tools_dir``."""
    return npm_tool_binary(tools_dir, "claude-code", "claude")


def ensure_claude(tools_dir: Path = DEFAULT_TOOLS_DIR) -> Path:
    """Return the pinned ``claude`` binary, installing it with npm under ``tools_dir`` if needed."""
    return ensure_npm_tool(CLAUDE_PACKAGE, CLAUDE_VERSION, "claude-code", "claude", tools_dir)


def npm_tool_binary(tools_dir: Path, name: str, binary: str) -> Path:
    """Where ``ensure_npm_tool`` installs ``binary`` for the tool ``name`` under ``tools_dir``."""
    return tools_dir / name / "node_modules" / ".bin" / binary


def ensure_npm_tool(
    package: str, version: str, name: str, binary: str, tools_dir: Path = DEFAULT_TOOLS_DIR
) -> Path:
    """Return ``binary`` of npm ``package`` at exactly ``version``, installed in ``tools_dir/name``.

    An existing install of that exact version is reused; otherwise ``npm install`` runs (network).
    Raises ToolError when npm is missing or the install fails.
    """
    prefix = tools_dir / name
    path = npm_tool_binary(tools_dir, name, binary)
    if path.exists() and installed_npm_version(prefix, package) == version:
        return path
    npm = shutil.which("npm")
    if npm is None:
        raise ToolError(
            f"npm is not on PATH; it is needed to install {package}@{version} "
            f"into {prefix} (install Node.js and npm, then rerun)"
        )
    prefix.mkdir(parents=True, exist_ok=True)
    cmd = [
        npm,
        "install",
        "--prefix",
        str(prefix),
        "--no-audit",
        "--no-fund",
        f"{package}@{version}",
    ]
    print(f"installing {package}@{version} into {prefix} ...", file=sys.stderr)
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-20:])
        raise ToolError(f"`{' '.join(cmd)}` failed with exit code {proc.returncode}:\n{tail}")
    if not path.exists():
        raise ToolError(f"npm install succeeded but {path} does not exist")
    found = installed_npm_version(prefix, package)
    if found != version:
        raise ToolError(f"expected {package}@{version} in {prefix}, found {found}")
    return path


def installed_npm_version(prefix: Path, package: str) -> str | None:
    """The version of npm ``package`` installed under an npm ``prefix``, or None."""
    manifest = prefix / "node_modules" / package / "package.json"
    try:
        data: Any = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    version = data.get("version") if isinstance(data, dict) else None
    return version if isinstance(version, str) else None


def installed_claude_version(prefix: Path) -> str | None:
    """The version of Claude Code installed under an npm ``prefix``, or None."""
    return installed_npm_version(prefix, CLAUDE_PACKAGE)


def claude_env() -> dict[str, str]:
    """Environment for running Claude Code: a fresh temp HOME, no auto-update, no telemetry.

    The temp HOME is removed when the interpreter exits.
    """
    home = tempfile.mkdtemp(prefix="plugman-bench-home-")
    _temp_homes.append(home)
    env = dict(os.environ)
    env.update(
        {
            "HOME": home,
            "USERPROFILE": home,
            "XDG_CONFIG_HOME": str(Path(home) / ".config"),
            "XDG_CACHE_HOME": str(Path(home) / ".cache"),
            "XDG_DATA_HOME": str(Path(home) / ".local" / "share"),
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
    )
    # Never let a developer's own Claude configuration leak into the run.
    env.pop("CLAUDE_CONFIG_DIR", None)
    return env


@atexit.register
def _cleanup_homes() -> None:
    for home in _temp_homes:
        shutil.rmtree(home, ignore_errors=True)


def corpus_targets(corpus: Path = DEFAULT_CORPUS) -> list[tuple[str, Path]]:
    """Every ``.claude-plugin/plugin.json`` and ``.claude-plugin/marketplace.json`` in ``corpus``.

    Returns ``(kind, path)`` pairs, kind ``"plugin"`` or ``"marketplace"``, sorted by path.
    Uses ``os.walk`` because the manifest folders start with a dot.
    """
    kinds = {"plugin.json": "plugin", "marketplace.json": "marketplace"}
    found: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(corpus):
        dirnames.sort()
        if Path(dirpath).name != ".claude-plugin":
            continue
        for filename in sorted(filenames):
            kind = kinds.get(filename)
            if kind is not None:
                found.append((kind, Path(dirpath) / filename))
    found.sort(key=lambda item: str(item[1]))
    return found


def ensure_plugman() -> Path:
    """The venv's ``plugman`` executable, or a clear error if it is not installed."""
    if not PLUGMAN.exists():
        raise ToolError(f"{PLUGMAN} not found; create the venv and `pip install -e .[test]`")
    return PLUGMAN


def results_dir() -> Path:
    """``bench/results``, created on demand."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    return RESULTS_DIR


def display_path(path: Path, corpus: Path = DEFAULT_CORPUS) -> str:
    """``path`` relative to the corpus (or the repo) when it is inside it, for short output."""
    for base in (corpus, REPO_ROOT):
        try:
            return str(path.relative_to(base))
        except ValueError:
            continue
    return str(path)

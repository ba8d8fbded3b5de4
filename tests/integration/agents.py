"""Real coding agents (Claude Code, Gemini CLI, Codex, Copilot CLI), installed from npm, asked
about MCP configs.

A helper module for integration tests, not tests. Each agent is pinned to an exact version and
installed once under ``<repo>/.tools/<name>`` (see ``bench.claude_code.ensure_npm_tool``). When it
is not installed yet and npm or its registry cannot be reached, the test asking for it is skipped;
any other install failure fails it.

Agents always run with a throwaway HOME (``agent_env``), so they never read or write a real home.
``claude mcp list`` and ``gemini mcp list`` start every configured server and report whether it
connected; ``connected`` reads that report. Line formats, as printed by the pinned versions::

    notes: /venv/bin/python3 /path/notes_server.py - ✔ Connected             (claude)
    ✓ notes: /venv/bin/python3 /path/notes_server.py (stdio) - Connected     (gemini)

Project-scope servers need consent first: ``trust_claude_project`` (otherwise Claude lists them as
``⏸ Pending approval``) and ``trust_gemini_folder`` (otherwise Gemini lists every server, user
scope included, as ``Disabled``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from bench.claude_code import (
    CLAUDE_PACKAGE,
    CLAUDE_VERSION,
    DEFAULT_TOOLS_DIR,
    ToolError,
    ensure_npm_tool,
    installed_npm_version,
    npm_tool_binary,
)

GEMINI_PACKAGE = "@google/gemini-cli"
GEMINI_VERSION = "0.61.0"
CODEX_PACKAGE = "@openai/codex"
CODEX_VERSION = "0.171.0"
COPILOT_PACKAGE = "@github/copilot"
COPILOT_VERSION = "1.0.102"

MCP_LIST_TIMEOUT_S = 120

# Variables that would point an agent at a developer's own configuration, credentials, trust
# decisions or sandbox; agent_env drops every variable with one of these prefixes or names.
_DROPPED_PREFIXES = ("CLAUDE", "ANTHROPIC_", "GEMINI_", "CODEX_", "OPENAI_", "COPILOT_", "GH_")
_DROPPED_NAMES = frozenset({"SANDBOX", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS"})

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# <prefix>:<package>@<version> -> the installed binary, or ("skip" | "fail", why not).
_installed: dict[str, Path | tuple[str, str]] = {}


def claude_bin(tools_dir: Path = DEFAULT_TOOLS_DIR) -> Path:
    """The pinned ``claude`` binary, installed on first use (skip: npm unreachable)."""
    return _npm_tool(CLAUDE_PACKAGE, CLAUDE_VERSION, "claude-code", "claude", tools_dir)


def gemini_bin(tools_dir: Path = DEFAULT_TOOLS_DIR) -> Path:
    """The pinned ``gemini`` binary, installed on first use (skip: npm unreachable)."""
    return _npm_tool(GEMINI_PACKAGE, GEMINI_VERSION, "gemini-cli", "gemini", tools_dir)


def codex_bin(tools_dir: Path = DEFAULT_TOOLS_DIR) -> Path:
    """The pinned ``codex`` binary, installed on first use (skip: npm unreachable)."""
    return _npm_tool(CODEX_PACKAGE, CODEX_VERSION, "codex", "codex", tools_dir)


def copilot_bin(tools_dir: Path = DEFAULT_TOOLS_DIR) -> Path:
    """The pinned ``copilot`` binary, installed on first use (skip: npm unreachable)."""
    return _npm_tool(COPILOT_PACKAGE, COPILOT_VERSION, "copilot", "copilot", tools_dir)


def _npm_tool(package: str, version: str, name: str, binary: str, tools_dir: Path) -> Path:
    key = f"{tools_dir / name}:{package}@{version}"
    if key not in _installed:
        # Remembered, failures included, so that an offline run tries npm once, not every test.
        with _install_lock(tools_dir, name):
            _installed[key] = _install(package, version, name, binary, tools_dir)
    found = _installed[key]
    if isinstance(found, Path):
        return found
    outcome, message = found
    if outcome == "skip":
        pytest.skip(message)
    pytest.fail(message)


def _install(
    package: str, version: str, name: str, binary: str, tools_dir: Path
) -> Path | tuple[str, str]:
    """The installed binary, or ``("skip" | "fail", why)``; "skip" when npm cannot be reached."""
    prefix = tools_dir / name
    path = npm_tool_binary(tools_dir, name, binary)
    if path.exists() and installed_npm_version(prefix, package) == version:
        return path  # no network needed
    spec = f"{package}@{version}"
    npm = shutil.which("npm")
    if npm is None:
        return "skip", f"npm could not be reached (not on PATH) to install {spec} into {prefix}"
    # A quick look-up without npm's retries (an offline `npm install` spends a minute retrying).
    cmd = [npm, "view", spec, "version", "--fetch-retries=0", "--fetch-timeout=20000"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        return "skip", f"npm could not be reached to install {spec}: `npm view` timed out"
    if proc.returncode != 0:
        code, detail = _npm_error(proc.stderr)
        if code == "E404":
            return "fail", f"{spec} is not in the npm registry: {detail}"
        return "skip", f"npm could not be reached to install {spec} into {prefix}: {detail}"
    try:
        return ensure_npm_tool(package, version, name, binary, tools_dir)
    except ToolError as exc:
        return "fail", str(exc)


def _npm_error(stderr: str) -> tuple[str, str]:
    """npm's error code (``E404``, ``ECONNREFUSED``, ...) and its most telling line."""
    lines = [
        line.removeprefix("npm error").strip()
        for line in stderr.splitlines()
        if line.startswith("npm error") and not line.removeprefix("npm error").startswith("    ")
    ]
    lines = [line for line in lines if line and not line.startswith("A complete log")]
    code = next((line.split()[1] for line in lines if line.startswith("code ")), "")
    reason = next((line for line in lines if "FetchError" in line or "reason:" in line), None)
    detail = reason or next((line for line in lines if not line.startswith("code ")), "")
    return code, f"{code} {detail}".strip() or stderr.strip()[-500:]


@contextmanager
def _install_lock(tools_dir: Path, name: str) -> Iterator[None]:
    """Hold an exclusive lock while installing ``name``: xdist workers share ``tools_dir``."""
    tools_dir.mkdir(parents=True, exist_ok=True)
    with (tools_dir / f".{name}.lock").open("a") as handle:
        if sys.platform != "win32":
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield


def agent_env(home: Path, path_first: Path) -> dict[str, str]:
    """Environment for running an agent with ``home`` as HOME and ``path_first`` first on PATH.

    ``path_first`` is normally the venv's bin folder, so that ``python3`` there has the ``mcp``
    SDK. XDG folders live under ``home``; auto-update, telemetry and error reporting are off; the
    developer's own agent variables (``CLAUDE*``, ``ANTHROPIC_*``, ``GEMINI_*``) are dropped, and
    Gemini's system settings files are pointed into ``home`` (where they do not exist).
    Proxy and certificate variables are passed through unchanged.
    """
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(_DROPPED_PREFIXES) and key not in _DROPPED_NAMES
    }
    path = os.environ.get("PATH", "")
    env.update(
        {
            "HOME": str(home),
            "USERPROFILE": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "PATH": f"{path_first}{os.pathsep}{path}" if path else str(path_first),
            # Claude Code: the last one implies the three before it; all set for clarity.
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            # Gemini CLI: no OpenTelemetry, no second node process, no /etc/gemini-cli settings.
            "GEMINI_TELEMETRY_ENABLED": "false",
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(home / ".gemini-system" / "settings.json"),
            "GEMINI_CLI_SYSTEM_DEFAULTS_PATH": str(home / ".gemini-system" / "defaults.json"),
        }
    )
    return env


def trust_claude_project(home: Path, project: Path, names: Iterable[str]) -> None:
    """Let Claude Code start the ``.mcp.json`` servers ``names`` of ``project``.

    Marks the folder trusted in ``$HOME/.claude.json`` (merged: other keys are kept) and approves
    the servers in ``<project>/.claude/settings.local.json`` (``enabledMcpjsonServers``, replaced;
    other keys are kept).
    """
    config_path = home / ".claude.json"
    config = _read_object(config_path)
    projects = config.setdefault("projects", {})
    if not isinstance(projects, dict):
        raise ValueError(f"{config_path}: `projects` is not an object")
    entry = projects.setdefault(str(project.resolve()), {})
    if not isinstance(entry, dict):
        raise ValueError(f"{config_path}: `projects[{str(project.resolve())!r}]` is not an object")
    entry["hasTrustDialogAccepted"] = True
    _write_object(config_path, config)

    local_path = project / ".claude" / "settings.local.json"
    local = _read_object(local_path)
    local["enabledMcpjsonServers"] = list(dict.fromkeys(names))
    _write_object(local_path, local)


def trust_gemini_folder(home: Path, folder: Path) -> None:
    """Mark ``folder`` trusted in ``$HOME/.gemini/trustedFolders.json`` (other entries kept)."""
    path = home / ".gemini" / "trustedFolders.json"
    trusted = _read_object(path)
    trusted[str(folder.resolve())] = "TRUST_FOLDER"
    _write_object(path, trusted)


def claude_mcp_list(home: Path, project: Path, env: dict[str, str]) -> str:
    """``claude mcp list`` run in ``project``: its stdout and stderr, interleaved."""
    return _run_agent([str(claude_bin()), "mcp", "list"], home, project, env)


def gemini_mcp_list(home: Path, project: Path, env: dict[str, str]) -> str:
    """``gemini mcp list`` run in ``project``: its stdout and stderr, interleaved."""
    return _run_agent([str(gemini_bin()), "mcp", "list"], home, project, env)


def _run_agent(cmd: list[str], home: Path, project: Path, env: dict[str, str]) -> str:
    if env.get("HOME") != str(home):
        raise ValueError(f"env HOME is {env.get('HOME')!r}, not {str(home)!r}: use agent_env()")
    try:
        proc = subprocess.run(
            cmd,
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=MCP_LIST_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        partial = exc.output or ""
        if isinstance(partial, bytes):
            partial = partial.decode("utf-8", "replace")
        pytest.fail(
            f"`{' '.join(cmd)}` in {project} did not finish in {MCP_LIST_TIMEOUT_S} s:\n{partial}"
        )
    return proc.stdout


SESSION_TIMEOUT_S = 90


def claude_session_events(project: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    """The events a real ``claude -p`` session in ``project`` emits up to its ``init`` event.

    No login and no network: a fake API key and a base URL on a closed loopback port make the
    model request fail, but the session first runs its SessionStart hooks (``hook_response``
    events) and reports what it loaded (the ``init`` event: ``skills``, ``slash_commands``,
    ``agents``, ``plugins``, ``mcp_servers``). The process is killed once ``init`` is read.
    """
    session = {
        **env,
        "ANTHROPIC_API_KEY": "sk-ant-fake",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "CLAUDE_CODE_MAX_RETRIES": "0",
    }
    cmd = [str(claude_bin()), "-p", "hi", "--output-format", "stream-json", "--verbose"]
    cmd += ["--max-turns", "1"]
    events: list[dict[str, Any]] = []
    proc = subprocess.Popen(
        cmd,
        cwd=project,
        env=session,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    watchdog = threading.Timer(SESSION_TIMEOUT_S, proc.kill)  # a session that never says init
    watchdog.start()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                events.append(event)
                if event.get("type") == "system" and event.get("subtype") == "init":
                    break
    finally:
        watchdog.cancel()
        proc.kill()
        proc.wait(timeout=SESSION_TIMEOUT_S)
    if not any(e.get("subtype") == "init" for e in events):
        pytest.fail(f"`claude -p` in {project} ended without an init event: {events}")
    return events


def connected(output: str, name: str) -> bool:
    """Whether the ``mcp list`` output of Claude Code or Gemini CLI says server ``name`` connected.

    Claude: ``name: <command or url> - ✔ Connected``; Gemini: ``✓ name: <command> (stdio) -
    Connected``. Any other status or a missing line is False: Claude's ``✘ Failed to connect — …``
    and ``⏸ Pending approval (run `claude` to approve)``, Gemini's ``✗ name: … - Disconnected``
    and ``○ name: … - Disabled``.
    """
    claude = re.compile(rf"{re.escape(name)}: .* - ✔ Connected")
    gemini = re.compile(rf"✓ {re.escape(name)}: .* - Connected")
    for raw in output.splitlines():
        line = _ANSI.sub("", raw).strip()
        if claude.fullmatch(line) or gemini.fullmatch(line):
            return True
    return False


def _read_object(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``; empty when the file does not exist."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return data


def _write_object(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


class Machine:
    """A home, a git project and plugman's folders of its own, the agents in `tools` on PATH;
    plugman run as a program there (`run`, `json`), as a user would."""

    def __init__(self, root: Path, tools: Iterable[Path]) -> None:
        self.home, self.project = root / "home", root / "project"
        self.home.mkdir()
        self.project.mkdir()
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        here = Path(sys.executable).parent
        self.env = agent_env(self.home, here) | {
            "PLUGMAN_HOME": str(root / "plugman"),
            "PLUGMAN_MANAGED_DIR": str(root / "managed"),
            "PLUGMAN_CLAUDE_MANAGED_DIR": str(root / "claude-managed"),
        }
        found = [*tools, here, Path("/usr/bin"), Path("/bin")]
        self.env["PATH"] = os.pathsep.join(map(str, found))

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "plugman", "--project", str(self.project), *args],
            cwd=self.project, env=self.env, capture_output=True, text=True, timeout=300,
            check=False,
        )  # fmt: skip

    def json(self, *args: str) -> Any:
        done = self.run(*args, "--json")
        found = json.loads(done.stdout) if done.stdout.startswith("{") else {}
        assert done.returncode == 0, (args, found.get("problems"), done.stderr)
        return found

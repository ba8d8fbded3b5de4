"""A pytest plugin (`-p tests.open_audit`) that holds a test run inside its own folders.

Every `open` the test process makes (Python's audit event, raised by `open()`, `os.open`,
`pathlib` and everything built on them) is checked before it happens:

- a write (a mode with `w`, `a`, `x` or `+`, or write/create flags) is allowed only under the
  temporary folder, the repository's caches (`.pytest_cache`, `.hypothesis`, `__pycache__`,
  `.venv`, and `.tools` where the pinned agents are installed) and `/dev`; any other write is
  refused (`PermissionError`: nothing is written) and recorded;
- a read of a file beside the clone (under the repository's parent folder, outside the
  repository and the temporary folder: a `../shared` checkout, say) is refused and recorded.

The session fails if anything was recorded, naming each path. `pyproject.toml`'s `addopts`
loads it for every run (`make test`, `make test-quick`, each xdist worker);
`tests/unit/test_stands_alone.py` shows in a child pytest that it catches both kinds of escape.
Subprocesses (git, the agents, plugman run as a program) are not audited here: they run with a
temporary HOME and working folder.
"""

# lexical os.path strings, not resolved Paths: .tools may link outside, and this runs per open
# ruff: noqa: PTH100, PTH118, PTH119, PTH120
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

ROOT = os.path.abspath(os.environ.get("OPEN_AUDIT_ROOT") or Path(__file__).resolve().parents[1])
PARENT = os.path.dirname(ROOT)
TEMP = os.path.abspath(tempfile.gettempdir())
REAL_TEMP = os.path.realpath(TEMP)
# the repository's own caches: test tools, and the pinned agents npm installs (bench.claude_code)
CACHES = (".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache", ".venv", ".tools")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

_offences: list[str] = []


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _writing(mode: Any, flags: Any) -> bool:
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return True
    return isinstance(flags, int) and bool(flags & WRITE_FLAGS)


def _write_allowed(path: str) -> bool:
    if any(_under(path, folder) for folder in (TEMP, REAL_TEMP, "/dev")):
        return True
    if "/__pycache__/" in path:
        return True
    # pytest's cache provider makes .pytest_cache through a pytest-cache-files-* folder beside it
    if os.path.basename(os.path.dirname(path)).startswith("pytest-cache-files-"):
        return _under(path, ROOT)
    return any(_under(path, os.path.join(ROOT, cache)) for cache in CACHES)


def _read_allowed(path: str) -> bool:
    if PARENT in ("/", "") or not _under(path, PARENT):
        return True
    return any(_under(path, folder) for folder in (ROOT, TEMP, REAL_TEMP))


def check(event: str, args: tuple[Any, ...]) -> None:
    if event != "open" or not args or not isinstance(args[0], str | bytes):
        return
    path = os.path.abspath(os.fsdecode(args[0]))
    mode, flags = (args[1], args[2]) if len(args) >= 3 else (None, 0)
    if _writing(mode, flags):
        if not _write_allowed(path):
            _offences.append(f"write {path}")
            raise PermissionError(f"open_audit: a test wrote outside its temp folders: {path}")
    elif not _read_allowed(path):
        _offences.append(f"read {path}")
        raise PermissionError(f"open_audit: a test read beside the clone: {path}")


def pytest_configure(config: pytest.Config) -> None:
    sys.addaudithook(check)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _offences:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for offence in dict.fromkeys(_offences):
        terminalreporter.write_line(f"OUTSIDE: {offence}")

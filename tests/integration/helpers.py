"""Shared helpers for tests that run plugman for real, in-process or as subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from plugman.cli import invoke


def snapshot(*roots: Path) -> dict[str, tuple[str, bytes]]:
    """Every file, folder and link under `roots` (missing roots included), for byte comparison."""
    found: dict[str, tuple[str, bytes]] = {}
    for root in roots:
        if not root.exists():
            found[str(root)] = ("absent", b"")
            continue
        if root.is_file():
            found[str(root)] = ("file", root.read_bytes())
            continue
        for path in sorted(root.rglob("*")):
            if path.is_symlink():
                found[str(path)] = ("link", str(path.readlink()).encode())
            elif path.is_dir():
                found[str(path)] = ("dir", b"")
            else:
                found[str(path)] = ("file", path.read_bytes())
    return found


def run(*args: str, project: Path | None = None) -> Any:
    """Run a plugman command in-process with --json; its parsed output (asserts success)."""
    argv = ([] if project is None else ["--project", str(project)]) + list(args) + ["--json"]
    result = invoke(argv)
    assert result.exit_code == 0, (argv, result.output, result.exception)
    return json.loads(result.stdout)


def fails(*args: str, project: Path | None = None) -> str:
    argv = ([] if project is None else ["--project", str(project)]) + list(args)
    result = invoke(argv)
    assert result.exit_code != 0, (argv, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.output


def spawn(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.Popen[str]:
    """Start `python -m plugman ARGS` as a real process."""
    return subprocess.Popen(
        [sys.executable, "-m", "plugman", *args],
        env={**os.environ, **(env or {})},
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def git(cwd: Path, *args: str) -> str:
    """`git ARGS` in `cwd` with a throwaway identity; its stdout (fails on a non-zero exit)."""
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd, capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return done.stdout


@contextmanager
def serving(handler: Callable[..., BaseHTTPRequestHandler]) -> Iterator[str]:
    """A real HTTP server on a free 127.0.0.1 port, in a thread, answering with `handler`;
    yields its base URL (`http://127.0.0.1:PORT`) and stops it afterwards."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()

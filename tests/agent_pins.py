"""Which pinned agent is older than the newest one published on npm.

`make test` names each (tests/conftest.py: a warning in the summary, never a failure, since the
registry may be unreachable): the real-agent tests and the Claude rules table should move to the
newest agents. The lookups (`npm view PACKAGE version`, a few seconds at most) start with the
session, in the background, and are read at its end.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from bench.claude_code import CLAUDE_PACKAGE, CLAUDE_VERSION
from tests.integration.agents import (
    CODEX_PACKAGE,
    CODEX_VERSION,
    COPILOT_PACKAGE,
    COPILOT_VERSION,
    GEMINI_PACKAGE,
    GEMINI_VERSION,
)

PINS = {
    CLAUDE_PACKAGE: CLAUDE_VERSION,
    CODEX_PACKAGE: CODEX_VERSION,
    GEMINI_PACKAGE: GEMINI_VERSION,
    COPILOT_PACKAGE: COPILOT_VERSION,
}
TIMEOUT_S = 8

Lookup = Callable[[str], str | None]
# the environment the session started with: tests swap HOME (and with it npm's configured
# registry) while the lookups run
_ENV = dict(os.environ)


def npm_latest(package: str) -> str | None:
    """The newest published version of `package`, or None (no npm, no registry, no answer)."""
    npm = shutil.which("npm", path=_ENV.get("PATH"))
    if npm is None:
        return None
    try:
        done = subprocess.run(
            [npm, "view", package, "version"],
            capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
            stdin=subprocess.DEVNULL, env=_ENV,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = done.stdout.strip()
    return found if done.returncode == 0 and _key(found) is not None else None


def _key(version: str) -> tuple[int, ...] | None:
    match = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", version)
    return tuple(int(part) for part in match.groups()) if match else None


def older(pins: dict[str, str], latest: dict[str, str | None]) -> list[str]:
    """One line per pinned package older than its newest published version."""
    lines = []
    for package, pinned in pins.items():
        newest = latest.get(package)
        have, best = _key(pinned), _key(newest or "")
        if have is not None and best is not None and best > have:
            lines.append(f"{package} is pinned at {pinned}; {newest} is published")
    return lines


def start(lookup: Lookup = npm_latest) -> dict[str, Future[str | None]]:
    """The lookups, running in the background."""
    pool = ThreadPoolExecutor(max_workers=len(PINS), thread_name_prefix="agent-pins")
    futures = {package: pool.submit(lookup, package) for package in PINS}
    pool.shutdown(wait=False)
    return futures


def finish(futures: dict[str, Future[str | None]]) -> tuple[list[str], list[str]]:
    """The pins that are behind, and the packages the registry did not answer for."""
    latest: dict[str, str | None] = {}
    for package, future in futures.items():
        try:
            latest[package] = future.result(timeout=TIMEOUT_S + 2)
        except Exception:  # a lookup that failed in any way: unknown
            latest[package] = None
    unknown = [package for package, found in latest.items() if found is None]
    return older(PINS, latest), unknown

"""Fault injection for tests: `PLUGMAN_FAULT=<point>[:<n>]` acts the n-th time (default 1st)
the process reaches `point`.

Points `journal`, `write`, `store` and `commit` are the transaction's journaled steps: reaching
one kills the process (SIGKILL); `pause-<step>` instead stops the process there (it writes its
pid to the file `PLUGMAN_FAULT_FLAG` names, then sleeps), for a test to interrupt it (Ctrl-C).
Points `enospc` and `eacces` are reached by every durable file write: reaching one makes that
write fail as a full disk or a denied permission would.

`PLUGMAN_WRITES=<file>` appends the path of every durable write to that file, one a line, so a
test can check that a transaction writes each file once.
"""

from __future__ import annotations

import errno
import os
import signal
import time
from pathlib import Path

_reached: dict[str, int] = {}
_ERRORS = {"enospc": errno.ENOSPC, "eacces": errno.EACCES}


def _due(point: str) -> bool:
    fault = os.environ.get("PLUGMAN_FAULT")
    if not fault:
        return False
    name, _, count = fault.partition(":")
    if name != point:
        return False
    _reached[point] = _reached.get(point, 0) + 1
    return _reached[point] == int(count or 1)


def checkpoint(point: str) -> None:
    """A place where a crash is survivable; tests kill the process here."""
    if _due(point):
        os.kill(os.getpid(), signal.SIGKILL)
    if _due(f"pause-{point}"):
        flag = os.environ.get("PLUGMAN_FAULT_FLAG")
        if flag:
            Path(flag).write_text(str(os.getpid()))
        time.sleep(600)


def before_write(path: Path) -> None:
    """Every durable write passes here; tests make it fail like a full disk or a denied path."""
    trace = os.environ.get("PLUGMAN_WRITES")
    if trace:
        with Path(trace).open("a", encoding="utf-8") as handle:
            handle.write(f"{path}\n")
    for point, code in _ERRORS.items():
        if _due(point):
            raise OSError(code, os.strerror(code), str(path))

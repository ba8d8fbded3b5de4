"""`plugman ARGS` run in this process, its output captured: the CLI runner of the tests (and of
plugman.testing). Standard streams, the environment and the working verbosity are put back
after each run."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from plugman.cli.app import run


@dataclass(frozen=True)
class Result:
    """What one run did: its exit code, stdout, stderr, both as written (`output`), and what
    escaped the command's own reporting (None: nothing did)."""

    exit_code: int
    stdout: str
    stderr: str
    output: str
    exception: BaseException | None = None


class _Tee(io.StringIO):
    """One stream of the run, each write copied into both streams' `output`."""

    def __init__(self, both: io.StringIO) -> None:
        super().__init__()
        self.both = both

    def write(self, text: str) -> int:
        self.both.write(text)
        return super().write(text)


def invoke(
    argv: list[str], input: str | None = None, env: Mapping[str, str | None] | None = None
) -> Result:
    """Run `plugman ARGV` with `input` on stdin and `env` over this process's environment (a
    None value unsets that variable)."""
    both = io.StringIO()
    out, err = _Tee(both), _Tee(both)
    saved = sys.stdin, sys.stdout, sys.stderr
    saved_env = dict(os.environ)
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(input or ""), out, err
    for name, value in (env or {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    exception: BaseException | None = None
    try:
        code = run([str(arg) for arg in argv])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except Exception as exc:  # a bug: kept for the test to show
        exception, code = exc, 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        os.environ.clear()
        os.environ.update(saved_env)
    return Result(code, out.getvalue(), err.getvalue(), both.getvalue(), exception)

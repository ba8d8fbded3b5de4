"""`plugman ARGS` in a test's environment: in this process, through the program's own entry
point (`plugman.cli.main`), or as a subprocess (`python -m plugman`)."""

from __future__ import annotations

import contextlib
import io
import json as jsonlib
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plugman.testing.env import PlugmanEnv

TIMEOUT = 300  # seconds a subprocess may take


@dataclass(frozen=True)
class Result:
    """What one run of `plugman ARGS` gave."""

    argv: tuple[str, ...]  # the arguments after `plugman`
    code: int  # the exit code
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        """stdout parsed as JSON (run with `--json`); AssertionError saying what came when it
        is not JSON."""
        try:
            return jsonlib.loads(self.stdout)
        except ValueError:
            raise AssertionError(f"plugman {self.shown()} printed no JSON:\n{self}") from None

    def shown(self) -> str:
        return " ".join(self.argv)

    def __str__(self) -> str:
        return f"exit code {self.code}\n--- stdout\n{self.stdout}--- stderr\n{self.stderr}"


class Runner:
    """The `plugman_cli` fixture: `plugman_cli("list", "--json")` runs `plugman --project
    PROJECT list --json` in the test's environment (`in_process=False`: as a subprocess, which
    reads the extensions' entry points itself)."""

    def __init__(self, env: PlugmanEnv, project: Path | None = None) -> None:
        self.env = env
        self.project = env.project if project is None else project

    def __call__(self, *args: str, input: str | None = None, in_process: bool = True) -> Result:
        argv = ("--project", str(self.project), *args)
        if in_process:
            return self._here(argv, input)
        done = subprocess.run(
            [sys.executable, "-m", "plugman", *argv],
            input=input, cwd=self.project, capture_output=True, text=True, timeout=TIMEOUT,
        )  # fmt: skip
        return Result(argv, done.returncode, done.stdout, done.stderr)

    def json(self, *args: str, in_process: bool = True) -> Any:
        """`plugman ARGS --json`, which must succeed: its parsed output."""
        result = self(*args, "--json", in_process=in_process)
        assert result.code == 0, f"plugman {result.shown()} failed:\n{result}"
        return result.json

    def fails(self, *args: str, in_process: bool = True) -> Result:
        """`plugman ARGS`, which must fail as plugman fails: a non-zero exit code and a
        message, never a traceback."""
        result = self(*args, in_process=in_process)
        assert result.code != 0, f"plugman {result.shown()} succeeded:\n{result}"
        assert "Traceback" not in result.stderr, f"plugman {result.shown()} crashed:\n{result}"
        return result

    def _here(self, argv: tuple[str, ...], input: str | None) -> Result:
        from plugman.cli import main  # lazy: the CLI, only an in-process run needs it

        out, err = _stream(), _stream()
        with (
            _stdin(input),
            contextlib.chdir(self.project),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            try:
                code = main(list(argv))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
        return Result(argv, code, _text(out), _text(err))


def _stream(data: bytes = b"") -> io.TextIOWrapper:
    """A text stream with a `buffer` (for code writing bytes), as sys.stdout has."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline="", write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8", errors="replace")


@contextlib.contextmanager
def _stdin(text: str | None) -> Iterator[None]:
    saved = sys.stdin
    sys.stdin = _stream((text or "").encode())
    try:
        yield
    finally:
        sys.stdin = saved

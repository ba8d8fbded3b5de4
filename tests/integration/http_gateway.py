"""One owner for "a gateway over HTTP as a subprocess" in the tests.

`http_gateway` starts `plugman mcp serve --transport http --port 0 OPTIONS` (or another
command that serves the same way), waits for its `listening on URL` line, yields a `Gateway`,
and on exit stops it (SIGTERM, bounded) and checks what every gateway test checked: the exit
code (0 unless the test expects another), nothing on stdout, no Traceback on stderr.
`environment` is the environment such a gateway runs with.
"""

from __future__ import annotations

import os
import queue
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.integration.test_gateway import START_TIMEOUT, first_line, plugman_argv


@dataclass
class Gateway:
    """A running gateway: its URL, the lines it said (stderr at start, then stdout and
    stderr once stopped), the process, and its whole stderr once stopped."""

    url: str
    said: list[str]
    proc: subprocess.Popen[str]
    err: str = field(default="")

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/")[0])

    @property
    def base(self) -> str:
        return self.url.removesuffix("/mcp")


def environment(home: Path, **more: str) -> dict[str, str]:
    """This process's environment with `home` as PLUGMAN_HOME, file secrets, no inherited
    gateway token, and `more`."""
    env = {**os.environ, "PLUGMAN_HOME": str(home), "PLUGMAN_SECRETS": "file"}
    env.pop("PLUGMAN_GATEWAY_TOKEN", None)
    return {**env, **more}


@contextmanager
def http_gateway(
    project: Path,
    env: Mapping[str, str],
    *options: str,
    command: Sequence[str] | None = None,
    until: str | None = None,
    more_lines: int = 0,
    said: list[str] | None = None,
    stop_within: float = 30,
    returncode: int = 0,
) -> Iterator[Gateway]:
    """`plugman --project PROJECT mcp serve --transport http --port 0 OPTIONS` with `env`.

    `command` replaces everything before `--port 0` (a gateway with a test layer); readiness
    is its first stderr line, or with `until` the stderr lines up to the one containing it;
    `more_lines` more stderr lines are read after that (what is written with the first);
    what it said is appended to `said` when given (several gateways into one list)."""
    project.mkdir(parents=True, exist_ok=True)
    argv = command or plugman_argv("--project", str(project), "mcp", "serve", "--transport", "http")
    proc = subprocess.Popen(
        [*argv, "--port", "0", *options],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(env),
    )
    lines = [] if said is None else said
    found: Gateway | None = None
    try:
        start = len(lines)
        lines += lines_until(proc, until) if until else [first_line(proc, START_TIMEOUT)]
        assert lines[start].startswith("listening on http://"), lines[start:]
        assert proc.stderr is not None
        lines += [proc.stderr.readline().strip() for _ in range(more_lines)]
        found = Gateway(lines[start].removeprefix("listening on "), lines, proc)
        yield found
    finally:
        if proc.poll() is None:
            proc.terminate()
        out, err = proc.communicate(timeout=stop_within)
        lines += [out, err]
        if found is not None:
            found.err = err
    assert proc.returncode == returncode, err
    assert out == "", "the gateway printed to stdout"
    assert "Traceback" not in err, err


def lines_until(proc: subprocess.Popen[str], marker: str) -> list[str]:
    """stderr lines up to the one containing `marker`, within START_TIMEOUT (read by a
    thread: a text pipe's buffer may hold lines that select() cannot see)."""
    assert proc.stderr is not None
    stderr = proc.stderr
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for _ in range(20):  # the start-up lines; the rest is read at exit
            line = stderr.readline()
            lines.put(line.strip())
            if not line or marker in line:
                return

    threading.Thread(target=read, daemon=True).start()
    found: list[str] = []
    while not any(marker in line for line in found):
        try:
            found.append(lines.get(timeout=START_TIMEOUT))
        except queue.Empty:
            raise AssertionError(f"the gateway did not start: {found}") from None
        assert found[-1] or proc.poll() is None, f"the gateway stopped: {found}"
    return found


def refused_start(
    project: Path, env: Mapping[str, str], *options: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`plugman --project PROJECT mcp serve --transport http --port 0 OPTIONS` run to its end,
    for a start that is refused: its exit code and output, for the test to check."""
    argv = plugman_argv("--project", str(project), "mcp", "serve", "--transport", "http")
    return subprocess.run(
        [*argv, "--port", "0", *options],
        capture_output=True,
        text=True,
        env=dict(env),
        timeout=timeout,
    )

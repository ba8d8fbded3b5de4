"""`headersHelper`: the headers of an http, sse or ws server computed by a command, as Claude Code.

An entry may carry `"headersHelper": "<shell command>"`. Before every connection plugman runs
it through the shell (`/bin/sh -c`), stdin closed, in the project folder, with the caller's
environment (which holds `CLAUDE_PROJECT_DIR`) plus the entry's own `env`, for at most
HELPER_TIMEOUT seconds. A server from a plugin or from a project's files runs its helper
without the variables whose name looks like a credential (`scrubbed`), as Claude Code does: a
command someone else wrote gets none of the user's tokens. Its stdout must be one JSON object
of string to string; those headers go over the entry's static `headers`, replacing a
same-name header whatever its case. (Claude Code runs a plugin's helper in the plugin root and
a user server's in `~/.claude`; plugman runs every helper in the project folder.)

A helper that cannot start, times out, exits non-zero, or prints anything else fails the
connection with a PlugmanError saying which of these happened (with the end of its stderr,
masked by plugman.config.redact). Header values, and the helper's stdout, are never shown:
they are the credentials.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

import anyio.to_thread

from plugman.config import redact
from plugman.config.merge import Server
from plugman.core.errors import PlugmanError

HELPER_TIMEOUT = 10.0
STDERR_CHARS = 200
# Claude Code runs a plugin's or a project's helper without variables whose name has a
# `_`-separated part like these: another's command gets none of the user's credentials.
CREDENTIAL_PARTS = frozenset(
    {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "KEY", "AUTH", "COOKIE", "PAT"}
    | {"DSN", "CREDENTIAL", "CREDENTIALS"}
)


async def entry_headers(
    entry: Mapping[str, Any], env: Mapping[str, str] | None, cwd: Path | None, shared: bool
) -> dict[str, str]:
    """The entry's `headers`, with what its `headersHelper` prints over them (if it has one).
    `shared`: the entry comes from a plugin or a project's files, so the helper runs without
    credential-looking variables (`scrubbed`)."""
    headers = {str(k): str(v) for k, v in (entry.get("headers") or {}).items()}
    helper = entry.get("headersHelper")
    if helper is None or helper == "":
        return headers
    if not isinstance(helper, str):
        raise PlugmanError("headersHelper must be a shell command (a string)")
    base = dict(os.environ if env is None else env)
    base = scrubbed(base) if shared else base
    base.update({str(k): str(v) for k, v in (entry.get("env") or {}).items()})
    run = partial(run_helper, helper, env=base, cwd=cwd)
    found = await anyio.to_thread.run_sync(run)
    return merged(headers, found)


def shared(servers: Mapping[str, Server]) -> frozenset[str]:
    """The names of the servers that come from a plugin or from a project's files."""
    return frozenset(
        name
        for name, server in servers.items()
        if server.origin.plugin is not None or server.origin.scope == "project"
    )


def scrubbed(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without the variables whose name has a credential-looking part (`GITHUB_TOKEN`,
    `AWS_SECRET_ACCESS_KEY`, `PGPASSWORD` is kept: its one part is not `PASSWORD`)."""
    return {
        name: value
        for name, value in env.items()
        if not CREDENTIAL_PARTS.intersection(name.upper().split("_"))
    }


def merged(static: Mapping[str, str], helped: Mapping[str, str]) -> dict[str, str]:
    """`static` with `helped` over it; header names compare without case."""
    replaced = {name.lower() for name in helped}
    kept = {name: value for name, value in static.items() if name.lower() not in replaced}
    return {**kept, **helped}


def run_helper(
    command: str, *, env: Mapping[str, str], cwd: Path | None, timeout: float = HELPER_TIMEOUT
) -> dict[str, str]:
    """Run `command`; the headers it printed, or a PlugmanError saying why there are none."""
    folder = cwd if cwd is not None and cwd.is_dir() else None
    try:
        done = subprocess.run(  # a shell command is what headersHelper is
            command,
            shell=True,
            cwd=folder,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise PlugmanError(f"headersHelper timed out after {timeout:g} s") from None
    except OSError as exc:
        raise PlugmanError(f"headersHelper could not start: {exc.strerror or exc}") from None
    if done.returncode != 0:
        raise PlugmanError(
            f"headersHelper exited with code {done.returncode}{_stderr(done.stderr)}"
        )
    return parse(done.stdout)


def parse(stdout: bytes) -> dict[str, str]:
    """The JSON object of string headers in `stdout` (its text is never repeated)."""
    try:
        found = json.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise PlugmanError(
            "headersHelper did not print a JSON object (its output is not shown: it may hold "
            "credentials)"
        ) from None
    if not isinstance(found, dict):
        raise PlugmanError(f"headersHelper printed JSON {type(found).__name__}, not an object")
    bad = sorted(str(k) for k, v in found.items() if not isinstance(v, str))
    if bad:
        raise PlugmanError(f"headersHelper: the value of header {', '.join(bad)} is not a string")
    return {str(k): v for k, v in found.items()}


def _stderr(raw: bytes) -> str:
    lines = [line.strip() for line in raw.decode("utf-8", "replace").splitlines() if line.strip()]
    if not lines:
        return " (nothing on stderr)"
    tail = redact.text(lines[-1])
    return ": " + (tail if len(tail) <= STDERR_CHARS else tail[:STDERR_CHARS] + "…")

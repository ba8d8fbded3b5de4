"""Running the resolved hooks of one event, for agents that have no hook system
(docs/claude-format.md#hooks).

Every matching handler runs at once, each in its own thread. `command` handlers run through
`sh -c` (or `bash`/`pwsh` when `shell` says so; exec form when `args` is given) in a new process
group that is killed whole on timeout, with the event JSON on stdin. `http` handlers POST that
JSON. `prompt`, `agent` and `mcp_tool` handlers need a model or an MCP session: they are
reported as skipped, never dropped silently. Meaning is given by plugman.runtime.hooks.outcome.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from plugman.config import redact
from plugman.config.merge import Hook
from plugman.config.resolution import resolve
from plugman.core.errors import UsageError
from plugman.core.jsonvalue import HookEntry, Payload
from plugman.manifest import schema
from plugman.runtime.hooks.match import if_matches, matches
from plugman.runtime.hooks.outcome import HandlerResult, HookRun, Raw, combine, interpret, tail

if TYPE_CHECKING:
    from plugman.core.paths import Paths

__all__ = [
    "HandlerResult",
    "HookRun",
    "check_event",
    "matches",
    "run_hooks",
    "selected",
]

DEFAULT_TIMEOUT = {"command": 600.0, "http": 600.0, "mcp_tool": 600.0, "prompt": 30.0}
EVENT_TIMEOUT = {"UserPromptSubmit": 30.0, "MessageDisplay": 10.0, "SessionEnd": 1.5}
SESSION_END_CEILING = 60.0
SHELLS = {"bash": ["bash", "-c"], "powershell": ["pwsh", "-NoProfile", "-Command"]}
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_background: list[subprocess.Popen[bytes]] = []  # async hooks: started, never awaited


def selected(hook: Hook, event: str, payload: Payload) -> bool:
    """Whether `hook` runs for this event: its event, its matcher and its `if` rule."""
    if hook.event != event or not matches(event, hook.matcher, payload):
        return False
    return "if" not in hook.handler or if_matches(event, hook.handler["if"], payload)


def check_event(event: str) -> None:
    """A UsageError for an event name Claude Code does not have (names are case-sensitive)."""
    known = sorted(schema.load("hooks.schema.json")["$defs"]["eventMap"]["properties"])
    if event in known:
        return
    close = difflib.get_close_matches(event, known, n=1) or [
        name for name in known if name.lower() == event.lower()
    ]
    hint = f"did you mean {close[0]}?" if close else "events: " + ", ".join(known)
    raise UsageError(f"unknown hook event {event!r}", hint=hint)


def run_hooks(
    event: str,
    payload: Payload,
    hooks: list[Hook],
    *,
    cwd: Path,
    env: Mapping[str, str],
    project_dir: Path,
    plugin_data: Callable[[str], Path] | None = None,
) -> HookRun:
    """Run every hook `event` selects, in parallel, and combine what they say."""
    chosen = [hook for hook in hooks if selected(hook, event, payload)]
    body = json.dumps({**payload, "hook_event_name": event, "cwd": payload.get("cwd", str(cwd))})
    base = {**env, "CLAUDE_PROJECT_DIR": str(project_dir)}

    # lazy: concurrent is not loaded by `plugman hooks exec` (+4 ms)
    from concurrent.futures import ThreadPoolExecutor

    def one(hook: Hook) -> HandlerResult:
        raw = _execute(hook, event, body, cwd, env_of(hook, base, plugin_data))
        result = _result(hook, raw)
        interpret(event, payload, raw, result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, len(chosen))) as pool:
        results = list(pool.map(one, chosen))
    return combine(event, results)


def env_of(
    hook: Hook, base: dict[str, str], plugin_data: Callable[[str], Path] | None
) -> dict[str, str]:
    """A plugin hook also gets its root (origin.file is the store folder), data folder and
    options (CLAUDE_PLUGIN_OPTION_<KEY>)."""
    if hook.origin.scope != "plugin" or not hook.origin.plugin:
        return base
    found = {**base, **dict(hook.env), "CLAUDE_PLUGIN_ROOT": hook.origin.file}
    if plugin_data is not None:
        data = plugin_data(hook.origin.plugin)
        data.mkdir(parents=True, exist_ok=True)  # created on first reference
        found["CLAUDE_PLUGIN_DATA"] = str(data)
    return found


def timeout_of(handler: HookEntry, event: str) -> float:
    kind = str(handler.get("type", "command"))
    value = handler.get("timeout")
    given = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    if event == "SessionEnd":
        return min(given or EVENT_TIMEOUT[event], SESSION_END_CEILING)
    if given is not None and given > 0:
        return given
    return EVENT_TIMEOUT.get(event) or DEFAULT_TIMEOUT.get(kind, 60.0)


def _result(hook: Hook, raw: Raw) -> HandlerResult:
    handler = hook.handler
    target = handler.get("url") if handler.get("type") == "http" else handler.get("command")
    if handler.get("args"):
        target = " ".join([str(target), *map(str, handler["args"])])
    return HandlerResult(
        origin=hook.origin,
        type=str(handler.get("type", "")),
        target=str(target or handler.get("prompt") or handler.get("tool") or ""),
        exit_code=raw.exit_code,
        status=raw.status,
        duration=round(raw.duration, 3),
        stdout=tail(raw.stdout),
        stderr=tail(raw.stderr),
        timed_out=raw.timed_out,
        skipped=raw.skipped,
    )


def _execute(hook: Hook, event: str, body: str, cwd: Path, env: dict[str, str]) -> Raw:
    kind = hook.handler.get("type")
    timeout = timeout_of(hook.handler, event)
    if kind == "command":
        return run_command(hook.handler, body, cwd, env, timeout)
    if kind == "http":
        return _http(hook.handler, body, env, timeout)
    if kind in ("prompt", "agent", "mcp_tool"):
        return Raw(skipped=f"skipped: plugman cannot run {kind} hooks")
    return Raw(skipped=f"skipped: unknown hook type {kind!r}")


def handler_argv(handler: HookEntry) -> list[str] | None:
    command = handler.get("command")
    if not isinstance(command, str) or not command:
        return None
    args = handler.get("args")
    if isinstance(args, list):
        return [command, *map(str, args)]  # exec form: no shell
    return [*SHELLS.get(str(handler.get("shell")), ["sh", "-c"]), command]


def secret_in_argv(argv: list[str]) -> str | None:
    """Why `argv` may not be started: it carries a sensitive value (a plugin's sensitive
    option put into an exec-form handler's args), which every user of the machine can read
    on its command line (`ps`). The handler gets each option in its environment too
    (CLAUDE_PLUGIN_OPTION_<KEY>), which only the user can read."""
    if not any(redact.holds_sensitive(word) for word in argv):
        return None
    return (
        "the hook was not run: its command line would carry a secret value, which every user "
        "of this machine can read (ps); it gets each plugin option in its environment "
        "(CLAUDE_PLUGIN_OPTION_<KEY>): read it from there"
    )


def run_command(
    handler: HookEntry, body: str, cwd: Path, env: dict[str, str], timeout: float
) -> Raw:
    argv = handler_argv(handler)
    if argv is None:
        return Raw(error="the handler has no command")
    refused = secret_in_argv(argv)
    if refused:
        return Raw(exit_code=1, error=refused)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL if handler.get("async") else subprocess.PIPE,
            stderr=subprocess.DEVNULL if handler.get("async") else subprocess.PIPE,
            start_new_session=True,  # its own process group, killed whole on timeout
        )
    except OSError as exc:
        return Raw(exit_code=127, error=f"could not start {argv[0]}: {exc.strerror or exc}")
    if handler.get("async"):
        return _detach(proc, body)
    return _wait(proc, body, timeout, started)


def _wait(proc: subprocess.Popen[bytes], body: str, timeout: float, started: float) -> Raw:
    try:
        out, err = proc.communicate(body.encode(), timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        out, err = _kill(proc)
        timed_out = True
    return Raw(
        exit_code=None if timed_out else proc.returncode,
        stdout=out.decode(errors="replace"),
        stderr=err.decode(errors="replace"),
        duration=time.monotonic() - started,
        timed_out=timed_out,
    )


def _kill(proc: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """Kill the hook's whole process group; what it printed before, if it can be had."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        return proc.communicate(timeout=2)
    except subprocess.TimeoutExpired:  # something left the group and holds the pipes open
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
        proc.wait()
        return b"", b""


def _detach(proc: subprocess.Popen[bytes], body: str) -> Raw:
    """An `async` hook: fed its input, then left running; it cannot decide anything."""

    def feed() -> None:
        with suppress(OSError):
            assert proc.stdin is not None
            proc.stdin.write(body.encode())
            proc.stdin.close()

    threading.Thread(target=feed, daemon=True).start()
    _background.append(proc)
    return Raw(skipped="async: started in the background, not awaited (it cannot decide)")


def _http(handler: HookEntry, body: str, env: dict[str, str], timeout: float) -> Raw:
    import urllib.error  # only http hooks need it: the launcher starts without it
    import urllib.request

    url = handler.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return Raw(error=f"not an http(s) URL: {url!r}")
    headers = {"Content-Type": "application/json", **_headers(handler, env)}
    request = urllib.request.Request(url, body.encode(), headers, method="POST")
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, text = response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        status, text = exc.code, exc.read().decode(errors="replace")
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        timed_out = isinstance(reason, TimeoutError)
        duration = time.monotonic() - started
        return Raw(duration=duration, timed_out=timed_out, error=f"request failed: {reason}")
    duration = time.monotonic() - started
    if not 200 <= status < 300:
        return Raw(status=status, stdout=text, duration=duration, error=f"HTTP {status}")
    return Raw(status=status, stdout=text, duration=duration)


def _headers(handler: HookEntry, env: dict[str, str]) -> dict[str, str]:
    """`$VAR`/`${VAR}` resolve only for names in allowedEnvVars; any other becomes empty."""
    allowed = handler.get("allowedEnvVars")
    names = {str(n) for n in allowed} if isinstance(allowed, list) else set()

    def value(found: re.Match[str]) -> str:
        name = found.group(1) or found.group(2)
        return env.get(name, "") if name in names else ""

    headers = handler.get("headers")
    if not isinstance(headers, dict):
        return {}
    return {str(k): _ENV_REF.sub(value, str(v)) for k, v in headers.items()}


def run_here(paths: Paths, event: str, payload: Payload, env: Mapping[str, str]) -> HookRun:
    """Run `event`'s hooks of the config resolved here with the event JSON `payload`, in the
    event's `cwd` when it is a folder (else the project folder)."""
    check_event(event)
    cwd = payload.get("cwd")
    return run_hooks(
        event,
        payload,
        resolve(paths, env).hooks,
        cwd=Path(cwd) if isinstance(cwd, str) and Path(cwd).is_dir() else paths.project_dir,
        env=env,
        project_dir=paths.project_dir,
        plugin_data=paths.plugin_data,
    )

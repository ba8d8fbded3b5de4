"""The launchers' fast path: `plugman hooks exec AGENT EVENT HOOK-ID` and `plugman mcp run NAME`
from a plan (plugman.runtime.launch.plans), before plugman imports anything else.

`main` calls `launch(args)` first: it finds the project as core.paths does, loads the plan
written for this launch there (plugman.runtime.launch.planfile: this version, this environment,
every watched file as it was) and does what the full launcher would: a hook's event JSON in
Claude's shape, its matcher and `if` rule tested, the handler run with the event on stdin and
plugman's environment, its timeout enforced, its output and exit code passed back exactly as
plugman.cli.hook_launcher passes them; a server exec'd with its planned environment. It
returns None whenever it has any doubt (no plan, a stale one, stdin that is not an object, a
platform without `memfd`/`pidfd`), and the full launcher runs as if it had not been there (the
event JSON it read is put back on stdin). Imports: `os`, `sys`, `json` (loaded by then),
`select` and the builtin `_signal` and sha256.
"""

# ruff: noqa: PTH103, PTH109, PTH112, PTH118, PTH119, PTH208
# (os.path on strings: pathlib is not loaded on the fast path, +3 ms)
from __future__ import annotations

import json
import os
import sys

from plugman.runtime.launch import planfile, shplan

TYPE_CHECKING = False  # (not typing's: importing typing costs ~5 ms on the fast path)
if TYPE_CHECKING:
    from collections.abc import Mapping

KILL_GRACE = 2.0  # seconds to collect a killed handler's output (runtime.hooks.run._kill)


def launch(args: list[str]) -> int | None:
    """The exit code of a launch made from its plan; None: the full launcher runs."""
    env = os.environ
    if not planfile.usable(env):
        return None
    if len(args) == 5 and args[:2] == ["hooks", "exec"]:
        return _hook(args[2], args[3], args[4], env)
    if len(args) == 3 and args[:2] == ["mcp", "run"]:
        return _server(args[2], env)
    return None


def _where(env: Mapping[str, str]) -> tuple[str, str] | None:
    state = planfile.state_dir(env)
    if state is None or _journal_left(os.path.join(state, "journal")):
        return None
    try:
        project = planfile.find_project(os.getcwd())
    except OSError:
        return None
    return state, project


def _journal_left(folder: str) -> bool:
    """core.fs.journal_left: an open transaction (the full launcher recovers or waits)."""
    try:
        return bool(os.listdir(folder))
    except OSError:
        return False


def _hook(agent: str, event: str, ref: str, env: Mapping[str, str]) -> int | None:
    where = _where(env)
    if where is None:
        return None
    state, project = where
    key: dict[str, object] = {
        "kind": "hook",
        "agent": agent,
        "event": event,
        "ref": ref,
        "project": project,
        "env": planfile.env_key(env),
    }
    file = os.path.join(
        planfile.project_folder(state, project), planfile.hook_name(agent, event, ref)
    )
    plan = planfile.load(file, key)
    if plan is None:
        return None
    shplan.refresh(plan, state, project, env)  # the direct form's plan, for the next call
    text = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    payload = _payload(text)
    if payload is None:
        _put_back(text)
        return None
    tools = plan.get("tools")
    back = tools if isinstance(tools, dict) else {}
    found = {**payload, "hook_event_name": event}
    tool = found.get("tool_name")
    if isinstance(tool, str) and tool in back:
        found["tool_name"] = back[tool]
    planfile.trace(env, "plan", ["hooks", "exec", agent, event, ref])
    if not (_matches(plan.get("match"), event, found) and _if(plan.get("if"), found)):
        return 0
    given = found.get("cwd")
    cwd = given if isinstance(given, str) and os.path.isdir(given) else os.getcwd()
    body = json.dumps({**found, "cwd": found.get("cwd", cwd)})
    return _run(plan, body, cwd, {**env, "CLAUDE_PROJECT_DIR": project})


def _payload(text: str) -> dict[str, object] | None:
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _put_back(text: str) -> None:
    """What the fast path read of stdin, for the full launcher to read again."""
    import io  # lazy: only on a fallback after stdin was read (loaded at start-up anyway)

    sys.stdin = io.StringIO(text)


def _matches(match: object, event: str, payload: Mapping[str, object]) -> bool:
    """runtime.hooks.match.matches, from the plan's precompiled form."""
    if isinstance(match, bool) or not isinstance(match, dict):
        return match is True
    value = None
    for field in match.get("fields", []):
        found = payload.get(field)
        if isinstance(found, str):
            value = os.path.basename(found) if match.get("basename") else found
            break
    if value is None:
        return False
    if "names" in match:
        return value in match["names"]
    import re  # lazy: loaded by json already; only a regex matcher needs it here

    try:
        return re.search(str(match.get("regex")), value) is not None
    except re.error:
        return False


def _if(rule: object, payload: Mapping[str, object]) -> bool:
    """runtime.hooks.match.if_matches, from the plan's precompiled form (None: no `if`)."""
    if rule is None:
        return True
    if not isinstance(rule, dict) or rule.get("never"):
        return False
    import re  # lazy: loaded by json already; only an `if` rule needs it here

    name = payload.get("tool_name")
    if not isinstance(name, str) or re.fullmatch(rule["tool"], name, re.DOTALL) is None:
        return False
    pattern = rule.get("pattern")
    if pattern is None:
        return True
    tool_input, field = payload.get("tool_input"), rule["inputs"].get(name)
    subject = tool_input.get(field) if field and isinstance(tool_input, dict) else None
    if not isinstance(subject, str):
        return False
    if "prefix" in pattern:
        return bool(subject == pattern["prefix"] or subject.startswith(pattern["prefix"] + " "))
    if re.fullmatch(pattern["glob"], subject, re.DOTALL):
        return True
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and subject.startswith(cwd.rstrip("/") + "/"):
        rest = subject[len(cwd.rstrip("/")) + 1 :]
        return re.fullmatch(pattern["glob"], rest, re.DOTALL) is not None
    return False


def _run(plan: Mapping[str, object], body: str, cwd: str, base: dict[str, str]) -> int | None:
    """runtime.launch.hook.launch from here on: the handler with the event on stdin, its output
    collected and written as plugman.cli.hook_launcher writes it, its exit code returned."""
    argv, added, data = plan.get("argv"), plan.get("env"), plan.get("data")
    if not isinstance(argv, list) or not isinstance(added, dict):
        return None
    if not hasattr(os, "memfd_create") or not hasattr(os, "pidfd_open"):
        return None
    full = {**base, **added}
    if isinstance(data, str):
        os.makedirs(data, exist_ok=True)
        full["CLAUDE_PLUGIN_DATA"] = data
    stdin = _filled(body.encode())
    if plan.get("background"):
        null = os.open(os.devnull, os.O_RDWR)
        pid, failed = _spawn(argv, cwd, full, (stdin, null, null))
        return _report(b"", b"", failed, argv, exit_code=0) if failed else 0
    out, err = os.memfd_create("stdout"), os.memfd_create("stderr")
    pid, failed = _spawn(argv, cwd, full, (stdin, out, err))
    if failed:
        return _report(b"", b"", failed, argv, exit_code=127)
    timeout = plan.get("timeout")
    code = _wait(pid, float(timeout) if isinstance(timeout, int | float) else 600.0)
    return _report(_read(out), _read(err), None, argv, exit_code=code)


def _filled(data: bytes) -> int:
    fd = os.memfd_create("stdin")
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _read(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _spawn(
    argv: list[str], cwd: str, env: dict[str, str], fds: tuple[int, int, int]
) -> tuple[int, str | None]:
    """Start `argv` in its own session (killed whole on timeout) with `fds` as its stdin, stdout
    and stderr, as subprocess.Popen does; what stopped it from starting, if anything."""
    import _signal  # type: ignore[import-not-found]  # lazy: the builtin (signal's Python module imports enum: +3 ms)

    ready, report = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: nothing here may raise out
        try:
            os.setsid()
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
            os.chdir(cwd)
            os.closerange(3, report)
            os.closerange(report + 1, 1 << 16)
            for name in ("SIGPIPE", "SIGXFSZ"):
                if hasattr(_signal, name):
                    _signal.signal(getattr(_signal, name), _signal.SIG_DFL)
            os.execvpe(argv[0], argv, env)
        except OSError as exc:
            os.write(report, (exc.strerror or str(exc)).encode(errors="replace"))
        finally:
            os._exit(127)
    os.close(report)
    said = b""
    while chunk := os.read(ready, 4096):
        said += chunk
    os.close(ready)
    if said:
        os.waitpid(pid, 0)
        return pid, said.decode(errors="replace")
    return pid, None


def _wait(pid: int, timeout: float) -> int | None:
    """The handler's exit code (negative: the signal that ended it); None when it outlived
    `timeout` and its group was killed."""
    import select  # lazy: only a handler that runs is waited for

    handle = os.pidfd_open(pid)
    ready, _, _ = select.select([handle], [], [], timeout)
    os.close(handle)
    if not ready:
        import _signal  # lazy: the builtin, as in _spawn

        try:  # noqa: SIM105 (contextlib is not loaded on the fast path)
            os.killpg(pid, _signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        os.waitpid(pid, 0)
        return None
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _report(
    out: bytes, err: bytes, failed: str | None, argv: list[str], exit_code: int | None
) -> int:
    """What plugman.cli.hook_launcher writes for the same run, and its exit code."""
    sys.stdout.write(out.decode(errors="replace"))
    sys.stderr.write(err.decode(errors="replace"))
    if failed is not None:
        sys.stderr.write(f"plugman hooks exec: could not start {argv[0]}: {failed}\n")
        return 127
    if exit_code is None:
        sys.stderr.write("plugman hooks exec: the hook timed out\n")
        return 1
    return exit_code


def _server(name: str, env: Mapping[str, str]) -> int | None:
    """`mcp run NAME` from its plan (plugman.runtime.launch.server_start: the entry expanded,
    the secrets read from the file store now): exec the server; None (the full launcher) on
    any doubt."""
    where = _where(env)
    if where is None:
        return None
    state, project = where
    key: dict[str, object] = {
        "kind": "server",
        "name": name,
        "project": project,
        "env": planfile.env_key(env),
    }
    file = os.path.join(planfile.project_folder(state, project), planfile.server_name(name))
    plan = planfile.load(file, key)
    if plan is None:
        return None
    from plugman.runtime.launch import server_start  # lazy: only a planned server start

    ready = server_start.prepared(plan, env)
    if ready is None:
        return None
    command, args, full, cwd = ready
    planfile.trace(env, "plan", ["mcp", "run", name])
    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        sys.stdout.flush()
        sys.stderr.flush()
        os.execvpe(command, [command, *args], full)
    except OSError:
        os.chdir(here)  # the full launcher finds the project from here and says why
    return None

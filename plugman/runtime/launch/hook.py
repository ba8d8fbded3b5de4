"""The hook launcher: one resolved handler run for an agent, exactly as Claude Code would run it
(`plugman hooks exec AGENT EVENT HOOK-ID`).

Every agent's hooks file names this command instead of a handler that needs approval (the
project's own, an unconsented plugin's), so the approval (project, entry, digests of the files
it runs) is checked at each call: a handler whose script changed since it was approved is not
found here (it waits for approval again) and does not run. Claude Code's file names it for
those only (`AGENT` claude-code, which runs `async` itself). Every other agent's file names it
for a plugin's handler too (see `plugman.agents.targets.hooks`), so the file holds neither a
machine path nor a secret, and a
condition the agent cannot spell (`if`, `async`, `shell`, `args`) is still honoured: the
launcher reads the event JSON the agent pipes on stdin, puts it in Claude's shape (the agent's
tool names back to Claude's: Gemini's `run_shell_command` is `Bash`), finds the one handler by
its id in the config resolved here, tests Claude's matcher and `if` rule, and runs it once with
Claude's environment (`CLAUDE_PLUGIN_ROOT`, `CLAUDE_PLUGIN_DATA`, `CLAUDE_PLUGIN_OPTION_*`,
sensitive values from the secret store). What the handler prints and its exit code are passed
back as they are, so the agent reads them as it would have read the handler run directly; a
handler the event does not select prints nothing and exits 0.

A hook's id is `OWNER#N`: OWNER the plugin's id (`name@marketplace`) or, for a hook of the
user's or project's own config, its scope (`user`, `project`, `local`); N the handler's
position among that owner's resolved handlers of the event, in the order they run. It holds no
path and no content, so it is the same on every machine and stays put when `configure` or
`update` changes what the handler says (plugman rewrites the agent files after both anyway).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from plugman.config.merge import Dropped, Hook
from plugman.config.redact import message
from plugman.config.resolution import resolve
from plugman.core.errors import PlugmanError
from plugman.runtime.hooks.outcome import Raw
from plugman.runtime.hooks.run import (
    check_event,
    env_of,
    handler_argv,
    run_command,
    secret_in_argv,
    selected,
    timeout_of,
)

if TYPE_CHECKING:
    from plugman.core.paths import Paths

# Handler fields the launcher delivers exactly; any other one (asyncRewake, once, onFailure,
# ...) cannot be, and a handler that has one is left out of the agent's file with a warning.
DELIVERED = frozenset({"type", "command", "args", "shell", "timeout", "if", "async"})
COSMETIC = frozenset({"statusMessage", "holdsTools"})  # kept where the agent takes it, else left
# out with a note: without them the hook runs the same (holdsTools only lets Claude Code go on
# without waiting for it, for its official security plugin)
LAUNCH_MARGIN = 5  # seconds the agent waits beyond the handler's own timeout
NOT_FOUND_HINT = (
    "the agent's hooks file names a hook the config resolved here does not have: is its plugin "
    "installed and approved in this project ('plugman sync', then 'plugman trust approve')? "
    "'plugman hooks list' shows the hooks; 'plugman agents add AGENT' rewrites the agent's files"
)


class Ref(NamedTuple):
    owner: str  # a plugin's id, or a scope for a hook of the config's own
    n: int  # its position among the owner's handlers of the event

    def __str__(self) -> str:
        return f"{self.owner}#{self.n}"


def owner(hook: Hook) -> str:
    return hook.origin.plugin or hook.origin.scope


def refs(hooks: list[Hook]) -> dict[int, Ref]:
    """Each hook's id: its owner and its `slot` (its place among its owner's hooks of its event
    before any was dropped: plugman.config.merge); by its position in `hooks` where no slot is
    set."""
    counts: dict[tuple[str, str], int] = {}
    found: dict[int, Ref] = {}
    for position, hook in enumerate(hooks):
        key = (owner(hook), hook.event)
        found[position] = Ref(key[0], hook.slot if hook.slot >= 0 else counts.get(key, 0))
        counts[key] = counts.get(key, 0) + 1
    return found


def parse_ref(text: str) -> Ref:
    head, sep, tail = text.rpartition("#")
    if not sep or not head or not tail.isdigit():
        raise PlugmanError(
            f"not a hook id: {text!r}",
            hint="a hook id is OWNER#N (a plugin's id or a scope, and a position), "
            "as plugman writes it into an agent's hooks file",
        )
    return Ref(head, int(tail))


def find(hooks: list[Hook], event: str, ref: Ref) -> Hook:
    """The one handler `ref` names among the resolved `hooks` of `event`."""
    for position, found in refs(hooks).items():
        if found == ref and hooks[position].event == event:
            return hooks[position]
    raise PlugmanError(f"no {event} hook {ref} in the config resolved here", hint=NOT_FOUND_HINT)


def claude_payload(tools: Mapping[str, str], event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The agent's event JSON in Claude Code's shape: Claude's event and tool names (`tools`:
    the agent's renames of Claude's tools, its `HookSpelling.tools`)."""
    back = {theirs: ours for ours, theirs in tools.items()}
    found = {**payload, "hook_event_name": event}
    tool = found.get("tool_name")
    if isinstance(tool, str) and tool in back:
        found["tool_name"] = back[tool]
    return found


EXAMPLE = 'echo \'{"tool_name": "Bash", "tool_input": {"command": "ls"}}\''


def read_payload(
    text: str, error: type[PlugmanError] = PlugmanError, command: str = "exec AGENT EVENT HOOK-ID"
) -> dict[str, Any]:
    """The event JSON on stdin: an object, or nothing (an empty object). A bad one is an
    `error`: the launcher's own failure exits 1, which blocks no agent; `hooks run` reports a
    usage error (2)."""
    hint = f"pipe one JSON object, e.g. {EXAMPLE} | plugman hooks {command}"
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(
            f"the event JSON on stdin is invalid: {exc.msg} at line {exc.lineno} column "
            f"{exc.colno}; no hook ran",
            hint=hint,
        ) from None
    if not isinstance(data, dict):
        raise error(
            f"the event JSON on stdin must be an object, not {type(data).__name__}; no hook ran",
            hint=hint,
        )
    return data


def launch(
    hook: Hook,
    event: str,
    payload: dict[str, Any],
    *,
    cwd: Path,
    env: Mapping[str, str],
    project_dir: Path,
    plugin_data: Callable[[str], Path] | None = None,
    background: bool = True,
) -> Raw:
    """Run `hook` for this event once when Claude's matcher and `if` select it (else a Raw
    that says so, exit 0 and no output). An `async` handler is started and left running
    (`background`; False: the agent runs the launcher itself in the background)."""
    if not selected(hook, event, payload):
        return Raw(exit_code=0, skipped="not selected")
    body = json.dumps({**payload, "cwd": payload.get("cwd", str(cwd))})
    full = env_of(hook, {**env, "CLAUDE_PROJECT_DIR": str(project_dir)}, plugin_data)
    if hook.handler.get("type", "command") != "command":
        return Raw(error=f"plugman runs no {hook.handler.get('type')!r} hooks for an agent")
    if hook.handler.get("async") and background:
        return _background(hook.handler, body, cwd, full)
    sync = {k: v for k, v in hook.handler.items() if k != "async"}
    return run_command(sync, body, cwd, full, timeout_of(hook.handler, event))


def _background(handler: dict[str, Any], body: str, cwd: Path, env: dict[str, str]) -> Raw:
    """Claude's `async`: started in its own session with the event on stdin, never awaited
    (its output cannot decide anything)."""
    argv = handler_argv(handler)
    if argv is None:
        return Raw(error="the handler has no command")
    refused = secret_in_argv(argv)
    if refused:
        return Raw(exit_code=1, error=refused)
    with tempfile.TemporaryFile() as stdin:
        stdin.write(body.encode())
        stdin.seek(0)
        try:
            subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=stdin,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            return Raw(exit_code=127, error=f"could not start {argv[0]}: {exc.strerror or exc}")
    return Raw(exit_code=0, skipped="async: started in the background")


def run_here(
    paths: Paths,
    tools: Mapping[str, str],
    event: str,
    ref: str,
    stdin: str,
    env: Mapping[str, str],
    background: bool = True,
    found: Callable[[Hook], None] | None = None,
) -> Raw:
    """`hooks exec`: the handler `ref` names in the config resolved in this project, run for
    the agent's event JSON `stdin` (`tools`: the agent's tool renames). A PlugmanError (exit 1)
    for a bad id or input, or a handler that waits for approval. `found` is told the handler
    before it runs (the launch plan for the next call: runtime.launch.plans)."""
    try:
        check_event(event)
    except PlugmanError as exc:  # a usage error exits 2, which blocks in the agent: not here
        raise PlugmanError(exc.message, hint=exc.hint) from None
    wanted = parse_ref(ref)
    payload = claude_payload(tools, event, read_payload(stdin))
    resolution = resolve(paths, env)
    stopped = next((p for p in resolution.plugins if p.blocked and p.id == wanted.owner), None)
    if stopped is not None:  # managed policy: none of the plugin's hooks runs
        raise PlugmanError(
            f"hook {wanted} is not run: plugin {stopped.id} is {stopped.blocked}",
            hint="managed policy blocks it; ask your administrator",
        )
    try:
        hook = find(resolution.hooks, event, wanted)
    except PlugmanError:
        waiting(resolution.pending(), event, wanted)
        raise
    if found is not None:
        found(hook)
    given = payload.get("cwd")
    cwd = Path(given) if isinstance(given, str) and Path(given).is_dir() else Path.cwd()
    return launch(
        hook,
        event,
        payload,
        cwd=cwd,
        env=env,
        project_dir=paths.project_dir,
        plugin_data=paths.plugin_data,
        background=background,
    )


def waiting(pending: list[Dropped], event: str, ref: Ref) -> None:
    """Raise, saying why and how to approve, when a hook of `ref`'s owner and `event` waits for
    approval (never approved here, or a file it runs changed since): the launcher runs none."""
    for drop in pending:
        mine = (drop.origin.plugin or drop.origin.scope) == ref.owner
        if drop.kind == "hook" and mine and drop.name.partition(":")[0] == event:
            why = f" ({drop.why})" if drop.why else ""
            how = drop.detail.removeprefix("run: ")
            raise PlugmanError(
                f"the {event} hook {ref} waits for approval{why}; it did not run",
                hint=f"review it with 'plugman trust list', then: {how}",
            )


def exit_code(raw: Raw) -> int:
    """What the launcher exits with: the handler's own code; 1 (an agent's non-blocking
    error) when it timed out or could not start."""
    if raw.timed_out or raw.exit_code is None:
        return 1
    return raw.exit_code


def failure(raw: Raw, timeout: float | None = None) -> str:
    """The line the launcher adds on stderr when the handler did not end by itself."""
    if raw.timed_out:
        return f"plugman hooks exec: the hook timed out{f' after {timeout:g}s' if timeout else ''}"

    return message(f"plugman hooks exec: {raw.error}") if raw.error else ""

"""One `tools/call` through the gateway, as Claude Code runs an MCP tool (hooks:
docs/claude-format.md#hook-exit-codes-and-output).

1. `--deny-destructive` refuses a tool whose `destructiveHint` is true (an explicit hint only:
   the MCP default, destructive unless annotated, would refuse nearly every tool).
2. The resolved `PreToolUse` hooks run with `{tool_name, tool_input, session_id, cwd}`, the tool
   named as an agent connected to its server would name it (`mcp__<server>__<tool>`, not the
   gateway's listed name), so the plugins' matchers hold through the gateway: deny
   (a JSON decision or exit 2) refuses the call, and so do `ask` and `defer` (nobody can answer
   them here) and `continue: false`; `updatedInput` replaces the arguments.
3. The backend gets the call with a read timeout of `call_timeout` (through
   plugman.runtime.gateway.forward: an expired HTTP session is re-established and the call sent once
   more; connection errors are counted towards a reconnection). A timeout, a lost connection
   or any other failure comes back as an error result that says why.
4. Text over 100,000 characters is cut, ending in `… [cut by plugman: N characters]` (N: how
   many were cut); so is every string that long inside the structured content.
5. `PostToolUse` hooks (with `tool_response`), or `PostToolUseFailure` (with `error`) after an
   error result, run last. What they say (a block's reason, exit-2 stderr, additional context)
   is appended to the result as feedback: the call already happened. A PostToolUse
   `updatedToolOutput` replaces the content.

Hooks run in a worker thread, so a slow hook never stalls the event loop; when no hook matches,
no thread is used at all. Refusals are `CallToolResult(is_error=True)` with one text block.

Each call comes back as `Called`: its result and its outcome for the call log and metrics
(plugman.runtime.gateway.observe): ok; error (the backend's error result, or a failure it
reported); refused (--deny-destructive or a PreToolUse hook); timeout (--call-timeout);
unavailable (not connected, or the connection was lost during the call).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import anyio
import anyio.to_thread

from plugman.config.merge import Hook
from plugman.core.jsonvalue import Payload
from plugman.runtime.gateway.catalog import Route
from plugman.runtime.gateway.forward import UnansweredError, send
from plugman.runtime.hooks.run import HookRun, run_hooks, selected
from plugman.runtime.transport.failure import CONNECTION_CLOSED, REQUEST_TIMEOUT

if TYPE_CHECKING:
    from mcp import Client
    from mcp.types import CallToolResult

log = logging.getLogger("plugman.gateway")

LIMIT = 100_000
SESSION_ID = "plugman-gateway"


@dataclass(frozen=True)
class Guard:
    hooks: tuple[Hook, ...] = ()
    project: Path = Path()
    env: Mapping[str, str] | None = None
    plugin_data: Callable[[str], Path] | None = None
    call_timeout: float = 60.0
    deny_destructive: bool = False


class Called(NamedTuple):  # a NamedTuple: a dataclass costs ~1 ms to define on the stdio path
    result: CallToolResult
    outcome: str  # ok, error, refused, timeout, unavailable (unknown: no such tool, in server)


class HookError(Exception):
    """The hook machinery itself failed (not a hook saying no)."""


async def call_tool(route: Route, arguments: Payload, guard: Guard) -> Called:
    tool = route.item
    hints = tool.annotations
    if guard.deny_destructive and hints is not None and hints.destructive_hint is True:
        return refused(
            f"{tool.name} is marked destructive (destructiveHint) and plugman mcp serve runs "
            "with --deny-destructive: not called"
        )
    agent = route.agent or tool.name  # hooks match `mcp__<server>__<tool>`, as in an agent
    payload = {"tool_name": agent, "tool_input": arguments, "session_id": SESSION_ID}
    payload["cwd"] = str(guard.project)
    try:
        pre = await hooks("PreToolUse", payload, guard)
    except HookError as exc:
        return refused(f"PreToolUse hooks failed, so {tool.name} was not called: {exc}")
    if pre is not None:
        why = _refused(pre)
        if why is not None:
            return refused(f"{tool.name} was not called: {why}")
        if pre.updated_input is not None:
            arguments = pre.updated_input
            payload = {**payload, "tool_input": arguments}
    forwarded = await forward(route, arguments, guard.call_timeout)
    result = await _after(cut_result(forwarded.result), payload, guard)
    return Called(result, forwarded.outcome)


def refused(text: str, outcome: str = "refused") -> Called:
    return Called(refusal(text), outcome)


def refusal(text: str) -> CallToolResult:
    # lazy: mcp takes ~683 ms to import, only this path needs it
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(is_error=True, content=[TextContent(type="text", text=text)])


async def hooks(event: str, payload: Payload, guard: Guard) -> HookRun | None:
    """The hooks `event` selects, run in a worker thread; None when none is selected."""
    if not wanted(event, payload, guard):
        return None
    run = partial(
        run_hooks,
        event,
        payload,
        list(guard.hooks),
        cwd=guard.project,
        env=dict(guard.env or {}),
        project_dir=guard.project,
        plugin_data=guard.plugin_data,
    )
    try:
        return await anyio.to_thread.run_sync(run)
    except Exception as exc:
        log.exception("%s hooks failed", event)
        raise HookError(str(exc) or type(exc).__name__) from exc


def wanted(event: str, payload: Payload, guard: Guard) -> bool:
    return any(selected(hook, event, payload) for hook in guard.hooks)


def _refused(pre: HookRun) -> str | None:
    if not pre.continue_:
        return f"a PreToolUse hook stopped everything: {pre.stop_reason or 'continue is false'}"
    if pre.blocked:
        return f"blocked by a PreToolUse hook: {pre.reason or 'denied'}"
    if pre.decision in ("ask", "defer"):
        why = f" ({pre.reason})" if pre.reason else ""
        return f"a PreToolUse hook answered {pre.decision!r}{why}, and nobody can confirm here"
    return None


async def forward(route: Route, arguments: Payload, timeout: float) -> Called:
    """The call on the route's backend (plugman.runtime.gateway.forward: waits for a reconnecting
    backend, retries once on an expired session); any failure as an error result."""
    from mcp import MCPError  # lazy: mcp takes ~750 ms to import, only this path needs it

    backend = route.backend

    async def request(client: Client) -> CallToolResult:
        try:
            return await client.call_tool(route.name, arguments, read_timeout_seconds=timeout)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                backend.dropped(client, exc.message)
            raise

    late = f"{backend.name} did not answer within {timeout:g} s (--call-timeout)"
    try:
        result = await send(backend, request, timeout)
    except UnansweredError as exc:
        return refused(str(exc), "unavailable")
    except MCPError as exc:
        if exc.code == CONNECTION_CLOSED:
            lost = f"{backend.name}: the connection was lost during the call"
            return refused(lost, "unavailable")
        if exc.code == REQUEST_TIMEOUT:
            return refused(late, "timeout")
        return refused(f"{backend.name}: {exc.message}", "error")
    except TimeoutError:
        return refused(late, "timeout")
    except Exception as exc:  # output-schema validation, transport errors: the call failed
        log.warning("%s: %s failed: %r", backend.name, route.name, exc)
        return refused(f"{backend.name}: {exc or type(exc).__name__}", "error")
    return Called(result, "error" if result.is_error else "ok")


def cut_text(text: str) -> str:
    if len(text) <= LIMIT:
        return text
    return f"{text[:LIMIT]}… [cut by plugman: {len(text) - LIMIT} characters]"


def _over(text: str) -> bool:
    return len(text) > LIMIT


def _cut_value(value: Any) -> Any:
    if isinstance(value, str):
        return cut_text(value)
    if isinstance(value, list):
        return [_cut_value(item) for item in value]
    if isinstance(value, dict):
        return {key: _cut_value(item) for key, item in value.items()}
    return value


def cut_result(result: CallToolResult) -> CallToolResult:
    """`result` with every text block and structured string over LIMIT characters cut."""
    from mcp.types import TextContent  # lazy: mcp takes ~683 ms to import, only this path needs it

    long = {id(b) for b in result.content if isinstance(b, TextContent) and _over(b.text)}
    structured = result.structured_content
    big = structured is not None and _over(json.dumps(structured, default=str))
    if not long and not big:
        return result
    content = [
        b.model_copy(update={"text": cut_text(b.text)})
        if isinstance(b, TextContent) and id(b) in long
        else b
        for b in result.content
    ]
    return result.model_copy(
        update={"content": content, "structured_content": _cut_value(structured)}
    )


async def _after(result: CallToolResult, payload: Payload, guard: Guard) -> CallToolResult:
    from mcp.types import TextContent  # lazy: mcp takes ~683 ms to import, only this path needs it

    event = "PostToolUseFailure" if result.is_error else "PostToolUse"
    if not wanted(event, payload, guard):
        return result
    dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    extra = {"error": _text_of(result)} if result.is_error else {"tool_response": dumped}
    try:
        post = await hooks(event, {**payload, **extra}, guard)
    except HookError as exc:
        post, notes = None, [f"{event} hooks failed: {exc}"]
    else:
        notes = []
    if post is not None:
        replaced = post.hook_specific.get("updatedToolOutput")
        if event == "PostToolUse" and replaced is not None:
            text = replaced if isinstance(replaced, str) else json.dumps(replaced)
            result = result.model_copy(update={"content": [TextContent(type="text", text=text)]})
        notes += [post.reason] if post.blocked and post.reason else []
        notes += post.additional_context
        notes += [] if post.continue_ else [f"stop: {post.stop_reason or 'continue is false'}"]
    if not notes:
        return result
    feedback = [TextContent(type="text", text=f"{event} hook: {note}") for note in notes]
    return result.model_copy(update={"content": [*result.content, *feedback]})


def _text_of(result: CallToolResult) -> str:
    from mcp.types import TextContent  # lazy: mcp takes ~683 ms to import, only this path needs it

    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))

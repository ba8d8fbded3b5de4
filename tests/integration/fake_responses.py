"""Tiny model endpoints on 127.0.0.1 that make a real agent run one shell command.

`responses_server`: OpenAI's Responses API, for Codex 0.171 (model `gpt-4.1`, a custom
`model_providers` entry with `wire_api = "responses"`), which POSTs `/v1/responses` and reads a
server-sent event stream. The first request (no tool output in its input yet) is answered with
one `exec_command` function call running `command`; the next one (carrying the call's output)
with a final assistant message, which ends the turn.

`gemini_server`: the Gemini API, for Gemini CLI 0.61 (`GOOGLE_GEMINI_BASE_URL`, a fixed model
so that no routing request is made): a `streamGenerateContent` request without a function
response yet gets a `run_shell_command` call, any other one the text "done".

`chat_server`: OpenAI's Chat Completions API, for Copilot CLI 1.0.102 (BYOK:
`COPILOT_PROVIDER_BASE_URL`): a request with tools and no tool message yet gets a `bash` call,
any other one the text "done", each as a streamed completion.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.integration.helpers import serving


def _stream(events: list[dict[str, Any]]) -> bytes:
    return b"".join(
        f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode() for event in events
    )


def answer(body: dict[str, Any], command: str) -> bytes:
    """The event stream for one request: the shell call first, then a closing message."""
    done = any(item.get("type") == "function_call_output" for item in body.get("input", []))
    if done:
        item: dict[str, Any] = {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "done", "annotations": []}],
        }
    else:
        arguments = json.dumps({"cmd": command})
        item = {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "exec_command",
            "arguments": arguments,
        }
    rid = "resp_2" if done else "resp_1"
    usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
    return _stream(
        [
            {"type": "response.created", "response": {"id": rid}},
            {"type": "response.output_item.done", "item": item},
            {"type": "response.completed", "response": {"id": rid, "usage": usage}},
        ]
    )


def gemini_answer(body: dict[str, Any], command: str) -> bytes:
    """One `streamGenerateContent?alt=sse` chunk: the shell call first, then "done"."""
    parts = [p for c in body.get("contents", []) for p in c.get("parts", [])]
    if body.get("tools") and not any("functionResponse" in p for p in parts):
        said: dict[str, Any] = {
            "functionCall": {"name": "run_shell_command", "args": {"command": command}}
        }
    else:
        said = {"text": "done"}
    chunk = {
        "candidates": [
            {"content": {"role": "model", "parts": [said]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    }
    return f"data: {json.dumps(chunk)}\n\n".encode()


def chat_answer(body: dict[str, Any], command: str) -> bytes:
    """A streamed chat completion: the `bash` tool call first, then "done"."""
    answered = any(m.get("role") == "tool" for m in body.get("messages", []))
    delta: dict[str, Any] = {"role": "assistant", "content": "done"}
    finish = "stop"
    if body.get("tools") and not answered:
        call = {"name": "bash", "arguments": json.dumps({"command": command, "description": "run"})}
        delta = {
            "role": "assistant",
            "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": call}],
        }
        finish = "tool_calls"
    head = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    chunks = [
        {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage},
    ]
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


@contextmanager
def chat_server(command: str, heard: list[dict[str, Any]] | None = None) -> Iterator[str]:
    """Serve on a free loopback port; yields the base URL (`http://127.0.0.1:PORT/v1`). Each
    request's body is appended to `heard`."""
    with _serving(command, chat_answer, heard) as url:
        yield f"{url}/v1"


@contextmanager
def responses_server(command: str, heard: list[dict[str, Any]] | None = None) -> Iterator[str]:
    """Serve on a free loopback port; yields the base URL (`http://127.0.0.1:PORT/v1`). Each
    request's body is appended to `heard` (its `tools`: what Codex offers the model)."""
    with _serving(command, answer, heard) as url:
        yield f"{url}/v1"


@contextmanager
def gemini_server(command: str, heard: list[dict[str, Any]] | None = None) -> Iterator[str]:
    """Serve on a free loopback port; yields the base URL (`http://127.0.0.1:PORT`). Each
    request's body is appended to `heard`."""
    with _serving(command, gemini_answer, heard) as url:
        yield url


@contextmanager
def _serving(
    command: str,
    reply: Callable[[dict[str, Any], str], bytes],
    heard: list[dict[str, Any]] | None = None,
) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if heard is not None:
                heard.append(body)
            data = reply(body, command)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # a WebSocket attempt: not offered
            self.send_response(404)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    with serving(Handler) as url:
        yield url


def codex_exec_args(base_url: str) -> list[str]:
    """`codex exec` options pointing Codex at the fake endpoint (key read from FAKE_OPENAI_KEY)."""
    provider = "model_providers.fake"
    return [
        "exec",
        "-m",
        "gpt-4.1",
        "-c",
        "model_provider=fake",
        "-c",
        f"{provider}.name=fake",
        "-c",
        f"{provider}.base_url={base_url}",
        "-c",
        f'{provider}.env_key="FAKE_OPENAI_KEY"',
        "-c",
        f"{provider}.wire_api=responses",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
    ]

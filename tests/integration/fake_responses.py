"""A tiny OpenAI Responses endpoint on 127.0.0.1 that makes Codex run one shell command.

Codex 0.169 (model `gpt-4.1`, a custom `model_providers` entry with `wire_api = "responses"`)
POSTs `/v1/responses` and reads a server-sent event stream. The first request (no tool output
in its input yet) is answered with one `exec_command` function call running `command`; the
next one (carrying the call's output) with a final assistant message, which ends the turn.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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


@contextmanager
def responses_server(command: str) -> Iterator[str]:
    """Serve on a free loopback port; yields the base URL (`http://127.0.0.1:PORT/v1`)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            data = answer(json.loads(self.rfile.read(length) or b"{}"), command)
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

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


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

"""The loopback redirect target of an OAuth login (RFC 8252 §7.3): an HTTP server on 127.0.0.1,
on a free port, that takes the first `GET /callback?code=...&state=...` (or `error=...`) and
answers the browser with a short page. The mcp SDK has none (credentials.md, pitfall 2).

It runs in a daemon thread (the standard library's server), so the event loop that drives the
login only polls for the answer, and cancelling the login never waits on a socket.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlparse

import anyio

from plugman.core.errors import PlugmanError

PATH = "/callback"
POLL = 0.05
PAGE = (
    "<!doctype html><meta charset=utf-8><title>plugman</title>"
    "<p>{text}</p><p>You can close this window and return to the terminal.</p>"
)


@dataclass(frozen=True)
class Answer:
    code: str | None
    state: str | None
    iss: str | None
    error: str | None
    error_description: str | None


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        parsed = urlparse(self.path)
        if parsed.path != PATH:
            self._reply(404, "Not the login callback.")
            return
        query = {k: v[0] for k, v in parse_qs(parsed.query).items() if v}
        answer = Answer(
            query.get("code"),
            query.get("state"),
            query.get("iss"),
            query.get("error"),
            query.get("error_description"),
        )
        if answer.code is None and answer.error is None:
            self._reply(400, "The callback carries neither a code nor an error.")
            return
        ok = answer.error is None
        self._reply(200, "Logged in." if ok else "The login was refused.")
        self.server.deliver(answer)

    def _reply(self, status: int, text: str) -> None:
        body = PAGE.format(text=text).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # the query holds the code
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    answer: Answer | None = None

    def deliver(self, answer: Answer) -> None:
        if self.answer is None:
            self.answer = answer


class Callback:
    """`with Callback() as cb:` listens; `cb.redirect_uri`; `await cb.wait(timeout)`."""

    def __init__(self) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self.port: int = self._server.server_address[1]
        self.redirect_uri = f"http://127.0.0.1:{self.port}{PATH}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Callback:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

    async def wait(self, timeout: float) -> Answer:
        """The browser's answer; PlugmanError after `timeout` seconds without one."""
        with anyio.move_on_after(timeout):
            while self._server.answer is None:
                await anyio.sleep(POLL)
        answer = self._server.answer
        if answer is None:
            raise PlugmanError(
                f"no answer from the browser within {timeout:g} s",
                hint="open the authorization URL and approve, or raise --timeout",
            )
        if answer.error is not None:
            detail = f": {answer.error_description}" if answer.error_description else ""
            raise PlugmanError(
                f"the authorization server refused the login ({answer.error}{detail})",
                hint="check the account you approved with, then run the login again",
            )
        return answer

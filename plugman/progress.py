"""Progress messages from long steps (clones, downloads), for whoever listens.

Core code calls `say`; the CLI decides whether and how to show it (on a terminal only), so the
core still never prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Listener = Callable[[str], None]
_listener: ContextVar[Listener | None] = ContextVar("plugman_progress", default=None)


def say(message: str) -> None:
    listener = _listener.get()
    if listener is not None:
        listener(message)


@contextmanager
def listening(listener: Listener | None) -> Iterator[None]:
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)

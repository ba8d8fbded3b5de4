"""Progress messages from long steps (clones, downloads) and warnings, for whoever listens.

Core code calls `say` (progress), `step` (one of a known number of steps: the 12th plugin of
40 being fetched, which a terminal shows as a line rewritten in place) and `warn` (something
the user should know that does not fail the command, e.g. a cleanup after a commit that could
not finish: a sentence, or a typed value `plugman.output` renders, such as a deployment's
`agents.warnings.Warned`); the CLI decides whether and how to show them (progress on a
terminal only, unless -v; warnings always on stderr), so the core still never prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import NamedTuple


class Step(NamedTuple):
    """Step `number` (from 1) of `total` of a long operation, and what it does now."""

    number: int
    total: int
    what: str


Listener = Callable[["str | Step"], None]
Warner = Callable[[object], None]
_listener: ContextVar[Listener | None] = ContextVar("plugman_progress", default=None)
_warner: ContextVar[Warner | None] = ContextVar("plugman_warnings", default=None)


def say(message: str) -> None:
    listener = _listener.get()
    if listener is not None:
        listener(message)


def step(number: int, total: int, what: str) -> None:
    """Step `number` of `total` starts: `what` (`fetching guardrails@samples`)."""
    listener = _listener.get()
    if listener is not None:
        listener(Step(number, total, what))


def warn(message: object) -> None:
    warner = _warner.get()
    if warner is not None:
        warner(message)


@contextmanager
def listening(listener: Listener | None, warner: Warner | None = None) -> Iterator[None]:
    """Send progress to `listener` and warnings to `warner` while the block runs."""
    tokens = _listener.set(listener), _warner.set(warner)
    try:
        yield
    finally:
        _listener.reset(tokens[0])
        _warner.reset(tokens[1])

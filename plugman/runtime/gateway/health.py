"""How the gateway keeps a backend up: timeouts, reconnection backoff, error counts.

`Health` holds the numbers (plugman.runtime.gateway.backends uses them); PLUGMAN_GATEWAY_BACKOFF
sets the first reconnection delay, PLUGMAN_GATEWAY_FIRST_LIST_WAIT (or `mcp serve
--first-list-wait`, which wins) the seconds a list may wait, from the gateway's start, for backends
still starting that it remembers nothing of (default FIRST_LIST_WAIT; 0: never wait). MAX_ERRORS is
Claude Code's MAX_ERRORS_BEFORE_RECONNECT: that many consecutive terminal connection errors on a
backend's calls close its transport and reconnect it at once (a call that reaches the server resets
the count).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from plugman.core.errors import PlugmanError

BACKOFF_ENV = "PLUGMAN_GATEWAY_BACKOFF"
WAIT_ENV = "PLUGMAN_GATEWAY_FIRST_LIST_WAIT"
FIRST_LIST_WAIT = 5.0
MAX_ERRORS = 3


@dataclass(frozen=True)
class Health:
    connect_timeout: float = 30.0
    ping_every: float = 1.0
    ping_timeout: float = 10.0
    base: float = 1.0
    cap: float = 30.0
    attempts: int = 5
    first_list_wait: float = FIRST_LIST_WAIT

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str],
        connect_timeout: float = 30.0,
        first_list_wait: float | None = None,
    ) -> Health:
        """The defaults, with the first reconnection delay from PLUGMAN_GATEWAY_BACKOFF and the
        first list's wait from `first_list_wait`, else PLUGMAN_GATEWAY_FIRST_LIST_WAIT."""
        base = _seconds(env, BACKOFF_ENV, 1.0, zero=False)
        if first_list_wait is None:
            first_list_wait = _seconds(env, WAIT_ENV, FIRST_LIST_WAIT, zero=True)
        return cls(connect_timeout=connect_timeout, base=base, first_list_wait=first_list_wait)

    def delay(self, attempt: int) -> float:
        """Seconds to wait before reconnection attempt `attempt` (1-based)."""
        return float(min(self.base * 2 ** (attempt - 1), self.cap))


def _seconds(env: Mapping[str, str], variable: str, default: float, *, zero: bool) -> float:
    text = env.get(variable, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
        what = "a number of seconds, 0 or more" if zero else "a positive number of seconds"
        raise PlugmanError(f"{variable} is set to {text}, which is not {what}")
    return value

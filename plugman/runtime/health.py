"""How the gateway keeps a backend up: timeouts, reconnection backoff, error counts.

`Health` holds the numbers (plugman.runtime.backends uses them); PLUGMAN_GATEWAY_BACKOFF sets
the first reconnection delay. MAX_ERRORS is Claude Code's MAX_ERRORS_BEFORE_RECONNECT: that
many consecutive terminal connection errors on a backend's calls close its transport and
reconnect it at once (a call that reaches the server resets the count).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from plugman.core.errors import PlugmanError

BACKOFF_ENV = "PLUGMAN_GATEWAY_BACKOFF"
MAX_ERRORS = 3


@dataclass(frozen=True)
class Health:
    connect_timeout: float = 30.0
    ping_every: float = 1.0
    ping_timeout: float = 10.0
    base: float = 1.0
    cap: float = 30.0
    attempts: int = 5

    @classmethod
    def from_env(cls, env: Mapping[str, str], connect_timeout: float = 30.0) -> Health:
        """The defaults, with the first reconnection delay from PLUGMAN_GATEWAY_BACKOFF."""
        text = env.get(BACKOFF_ENV, "").strip()
        if not text:
            return cls(connect_timeout=connect_timeout)
        try:
            base = float(text)
        except ValueError:
            base = math.nan
        if not math.isfinite(base) or base <= 0:
            raise PlugmanError(f"{BACKOFF_ENV}={text!r} is not a positive number of seconds")
        return cls(connect_timeout=connect_timeout, base=base)

    def delay(self, attempt: int) -> float:
        """Seconds to wait before reconnection attempt `attempt` (1-based)."""
        return float(min(self.base * 2 ** (attempt - 1), self.cap))

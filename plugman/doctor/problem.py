"""A problem `plugman doctor` reports: how bad, where, what, and what to do."""

from __future__ import annotations

from typing import NamedTuple

ERROR, WARNING = "error", "warning"


class Problem(NamedTuple):
    severity: str
    where: str
    message: str
    hint: str

"""Rendering what the agents' own CLIs said they loaded (`doctor`, `list --check`,
`info --check`)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plugman.agents.readback import Item, Report


def summary(reports: list[Report]) -> list[str]:
    """One line per agent asked: what it was asked and how many things it said what of."""
    lines = []
    for report in reports:
        if not report.checked:
            lines.append(f"{report.agent}: not checked ({report.reason})")
            continue
        counts = Counter(item.state for item in report.items)
        said = ", ".join(f"{n} {state}" for state, n in sorted(counts.items())) or "nothing of ours"
        lines.append(f"{report.agent}: asked `{report.command}`: {said}")
    return lines


def said(agent: str, items: list[Item]) -> list[str]:
    """What `agent` said of one plugin's items, in its own words."""
    return [f"{agent} says {item.name}: {item.state}: {item.detail}" for item in items]

"""Rendering `plugman export` and `plugman doctor` results."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from plugman.config import redact
from plugman.output.common import display_path, envelope
from plugman.output.readback import summary

if TYPE_CHECKING:
    from plugman.agents.export import FileChange, Outcome
    from plugman.agents.readback import Report
    from plugman.doctor.problem import Problem


def exported(outcome: Outcome, dry_run: bool, as_json: bool, show_secrets: bool = False) -> str:
    """The export's result; a diff's secret values are masked unless `show_secrets`."""
    if as_json:
        return envelope(
            "export",
            target=outcome.target,
            scope=outcome.scope,
            dry_run=dry_run,
            changes=[
                {
                    "path": str(c.path),
                    "action": action(c),
                    "diff": _shown(c, outcome, show_secrets),
                }
                for c in outcome.changes
            ],
            entries=outcome.entries,
            notes=outcome.notes,
        )
    if dry_run:
        diffs = [_shown(c, outcome, show_secrets) for c in outcome.changes]
        return "".join(diffs) or "nothing would change"
    lines = [f"{action(c)} {display_path(str(c.path))}" for c in outcome.changes]
    owned = sum(len(ids) for ids in outcome.entries.values())
    entries = "1 entry" if owned == 1 else f"{owned} entries"
    ours = f"plugman owns {entries} there now" if owned else "nothing of plugman's there now"
    lines.append(f"{outcome.target} ({outcome.scope}): {ours}")
    return "\n".join(lines)


def action(change: FileChange) -> str:
    if change.after is None:
        return "deleted"
    return "created" if change.before is None else "updated"


def _shown(change: FileChange, outcome: Outcome, show_secrets: bool) -> str:
    text = _diff(change)
    return text if show_secrets else redact.text(text, outcome.secrets)


def _diff(change: FileChange) -> str:
    name = str(change.path)
    lines = difflib.unified_diff(
        (change.before or "").splitlines(keepends=True),
        (change.after or "").splitlines(keepends=True),
        "/dev/null" if change.before is None else name,
        "/dev/null" if change.after is None else name,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def doctor_report(
    problems: list[Problem],
    as_json: bool,
    secret_store: str = "",
    agents: list[Report] | None = None,
) -> str:
    """The problems found, and (first, when given) which secret store is in use and what each
    linked agent was asked."""
    if as_json:
        return envelope(
            "doctor",
            problems=[p._asdict() for p in problems],
            secret_store=secret_store or None,
            agents=[r.as_json() for r in agents or []],
        )
    head = [f"secret store: {secret_store}"] if secret_store else []
    head += summary(agents or [])
    if not problems:
        return "\n".join([*head, "no problems found"])
    lines = [f"{p.severity}: {p.where}: {p.message}\n  hint: {p.hint}" for p in problems]
    return "\n".join(head + lines)

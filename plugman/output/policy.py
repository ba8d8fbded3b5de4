"""The result of `plugman policy explain`: a verdict, the rule and where it is written."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plugman.output.common import display_path, envelope

if TYPE_CHECKING:
    from plugman.plugins.catalog.policy_explain import Explained


def _where(origin: str) -> str:
    """A rule's file (shortened) and key path."""
    file, sep, key = origin.partition(": ")
    return f"{display_path(file)}{sep}{key}" if file else ""


def policy_explained(found: Explained, as_json: bool) -> str:
    verdict = "allowed" if found.allowed else "refused"
    caller = {}
    if found.kind == "gateway":
        caller = {"server": found.subject, "tool": found.tool, "groups": list(found.groups)}
    if as_json:
        return envelope(
            "policy explain",
            subject=found.subject,
            kind=found.kind,
            **caller,
            verdict=verdict,
            rule=found.why,
            where=_where(found.origin) or None,
            notes=list(found.notes),
            files=[display_path(f) for f in found.files],
        )
    lines = [f"{found.kind} {found.subject}: {verdict}", f"  rule   {found.why}"]
    if found.kind == "gateway":
        asked = f"tool {found.tool}" if found.tool is not None else "the server itself"
        groups = ", ".join(found.groups) or "none (the shared token's caller has none)"
        lines[0] = f"gateway {found.subject}, {asked}: {verdict}"
        lines.insert(1, f"  groups {groups}")
    if found.origin:
        lines.append(f"  where  {_where(found.origin)}")
    lines += [f"  note   {note}" for note in found.notes]
    read = ", ".join(display_path(f) for f in found.files) or "none (no managed policy)"
    lines.append(f"  read   {read}")
    return "\n".join(lines)

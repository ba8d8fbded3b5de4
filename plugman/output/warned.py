"""Rendering the warnings of a deployment (`agents.warnings.Warned`): what a mutating command
brought, and what stands (`plugman agents list`). One line per distinct warning, naming every
agent and scope it applies to once; paths short (a store tree by its plugin, a project path
relative to the project, a home path as `~/…`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from plugman.manifest.diagnostics import printable

if TYPE_CHECKING:
    from plugman.agents.warnings import Warned


def deploy_warnings(message: object) -> str:
    """The warnings a deployment brought (`agents.warnings.Warned`), one `warning:` line per
    distinct warning naming every agent and scope it applies to, paths short."""
    # lazy: agents.warnings takes ~18 ms to import, only this path needs it
    from plugman.agents.warnings import Warned

    if not isinstance(message, Warned):
        return f"warning: {printable(str(message))}"
    return "\n".join(f"warning: {line}" for line in grouped(message))


def grouped(warned: Warned) -> list[str]:
    whom: dict[str, dict[str, None]] = {}
    for n in warned.notices:
        label = f"{n.agent} ({n.scope})" if n.agent else ""
        whom.setdefault(short(n.note, warned), {})[label] = None
    lines = []
    for note, labels in whom.items():
        named = [label for label in labels if label]
        lines.append(f"{', '.join(named)}: {note}" if named else note)
    return lines


def short(text: str, warned: Warned) -> str:
    """`text` with a store tree named by its plugin, a project path relative to the project,
    a path in the home folder as `~/…`."""
    for tree, plugin in sorted(warned.stores.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(tree, f"<{plugin}>")
    text = text.replace(f"{warned.project}{os.sep}", "")
    home = str(warned.home)
    return printable(text.replace(f"{home}{os.sep}", f"~{os.sep}") if home != os.sep else text)

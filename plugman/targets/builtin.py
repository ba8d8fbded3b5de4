"""The built-in targets, registered through the same hook third-party extensions use."""

from __future__ import annotations

from plugman.hookspecs import hookimpl
from plugman.targets import Target, claude_code, codex, cursor, gemini, vscode


@hookimpl
def plugman_targets() -> list[Target]:
    return [claude_code.TARGET, cursor.TARGET, vscode.TARGET, codex.TARGET, gemini.TARGET]

"""The built-in targets, registered through the same hook third-party extensions use."""

from __future__ import annotations

from plugman.agents.targets import (
    Target,
    claude_code,
    codex,
    continue_,
    copilot_cli,
    cursor,
    gemini,
    goose,
    kiro,
    opencode,
    vscode,
    windsurf,
    zed,
)
from plugman.hookspecs import hookimpl


@hookimpl
def plugman_targets() -> list[Target]:
    return [
        claude_code.TARGET,
        cursor.TARGET,
        vscode.TARGET,
        codex.TARGET,
        gemini.TARGET,
        zed.TARGET,
        windsurf.TARGET,
        opencode.TARGET,
        goose.TARGET,
        continue_.TARGET,
        copilot_cli.TARGET,
        kiro.TARGET,
    ]

"""Rendering results for people (text) and machines (JSON, SARIF, GitHub annotations).

The renderers return strings; `emit` is the one place that writes to the terminal. One module
per family of results; this package re-exports them all.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plugman.core.errors import PlugmanError

from plugman.manifest.diagnostics import printable

FORMAT_VERSION = 1


def emit(text: str, *, err: bool = False) -> None:
    stream = sys.stderr if err else sys.stdout
    stream.write(text if text.endswith("\n") or not text else text + "\n")


def progress_listener() -> Callable[[str], None] | None:
    """Show progress messages on a terminal (stderr), and nowhere else."""
    if not sys.stderr.isatty():
        return None
    from rich.console import Console
    from rich.markup import escape

    console = Console(stderr=True)
    return lambda message: console.print(
        f"[dim]… {escape(message)}[/dim]", highlight=False, soft_wrap=True
    )


def warning_listener() -> Callable[[str], None]:
    """Show warnings on stderr, always (stdout stays the command's result, e.g. its JSON)."""
    return lambda message: emit(f"warning: {printable(message)}", err=True)


def envelope(command: str, **body: Any) -> str:
    """The versioned JSON document every `--json` output uses."""
    return json.dumps({"format": FORMAT_VERSION, "command": command, **body}, indent=2)


def error_envelope(failure: PlugmanError, command: str | None) -> str:
    """What a failed command prints on stdout under --json (stderr still has `error:`)."""
    error = {
        "message": failure.message,
        "where": failure.where,
        "hint": failure.hint,
        "exit_code": int(failure.exit_code),
    }
    return json.dumps({"format": FORMAT_VERSION, "command": command, "error": error}, indent=2)


def display_path(file: str) -> str:
    """A path relative to the working directory when it is below it."""
    try:
        rel = os.path.relpath(file)
    except ValueError:
        return file
    return file if rel.startswith("..") else rel


def error(exc: Exception) -> str:
    """A user-facing error for stderr."""
    return f"error: {exc}"


from plugman.output.config import (  # noqa: E402 (they use the helpers above)
    connectors_synced,
    diagnostic_dict,
    envelope_doc,
    explained,
    mcp_changed,
    mcp_got,
    mcp_listed,
    problems,
    resolved,
    trust_changed,
    trusted,
)
from plugman.output.export import doctored, exported  # noqa: E402
from plugman.output.plugins import (  # noqa: E402
    changes,
    installed,
    markets,
    outdated_line,
    plugin_info,
    rows,
)
from plugman.output.runtime import hook_block_reason, hook_run, hooks_listed, probed, tool_pool  # noqa: E402
from plugman.output.validation import FORMATS, validation  # noqa: E402

__all__ = [
    "FORMATS",
    "FORMAT_VERSION",
    "changes",
    "connectors_synced",
    "diagnostic_dict",
    "display_path",
    "doctored",
    "emit",
    "envelope",
    "envelope_doc",
    "error",
    "error_envelope",
    "explained",
    "exported",
    "hook_block_reason",
    "hook_run",
    "hooks_listed",
    "installed",
    "markets",
    "mcp_changed",
    "mcp_got",
    "mcp_listed",
    "outdated_line",
    "plugin_info",
    "probed",
    "problems",
    "progress_listener",
    "resolved",
    "rows",
    "tool_pool",
    "trust_changed",
    "trusted",
    "validation",
    "warning_listener",
]

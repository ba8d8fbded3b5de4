"""Rendering results for people (text) and machines (JSON, SARIF, GitHub annotations).

The renderers return strings; `emit` is the one place that writes to the terminal. One module
per family of results; this package re-exports them all.
"""

from __future__ import annotations

from plugman.output.agents import agents_listed, deployed
from plugman.output.common import (
    FORMAT_VERSION,
    announced,
    display_path,
    emit,
    envelope,
    error,
    error_envelope,
    progress_listener,
    warning_listener,
)
from plugman.output.config import (
    connectors_synced,
    diagnostic_dict,
    mcp_changed,
    problems,
    trust_changed,
    trusted,
)
from plugman.output.export import doctored, exported
from plugman.output.oauth import logged_in, logged_out
from plugman.output.plugins import (
    changes,
    configured,
    installed,
    locked,
    markets,
    outdated,
    plugin_info,
    searched,
)
from plugman.output.registry import registry_logged_in, registry_logged_out
from plugman.output.resolution import explained, mcp_got, mcp_listed, resolved, status_row
from plugman.output.runtime import hook_block_reason, hook_run, hooks_listed, probed, tool_pool
from plugman.output.validation import FORMATS, validation

__all__ = [
    "FORMATS",
    "FORMAT_VERSION",
    "agents_listed",
    "announced",
    "changes",
    "configured",
    "connectors_synced",
    "deployed",
    "diagnostic_dict",
    "display_path",
    "doctored",
    "emit",
    "envelope",
    "error",
    "error_envelope",
    "explained",
    "exported",
    "hook_block_reason",
    "hook_run",
    "hooks_listed",
    "installed",
    "locked",
    "logged_in",
    "logged_out",
    "markets",
    "mcp_changed",
    "mcp_got",
    "mcp_listed",
    "outdated",
    "plugin_info",
    "probed",
    "problems",
    "progress_listener",
    "registry_logged_in",
    "registry_logged_out",
    "resolved",
    "searched",
    "status_row",
    "tool_pool",
    "trust_changed",
    "trusted",
    "validation",
    "warning_listener",
]

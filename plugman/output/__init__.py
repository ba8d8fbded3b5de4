"""Rendering results for people (text) and machines (JSON, SARIF, GitHub annotations).

The renderers return strings; `emit` is the one place that writes to the terminal. One module
per family of results; this package re-exports them all, each module imported when a name of
its own is first asked for (PEP 562): a command loads only the renderers it uses. Each name is
listed once, in the import lines below that type checkers read; the table `__getattr__` looks a
name up in (`HOME`) is read from those lines.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names, for type checkers (`X as X`: re-exported)
    from plugman.output.agents import agents_listed as agents_listed
    from plugman.output.agents import deployed as deployed
    from plugman.output.audit import audited as audited
    from plugman.output.author import built as built
    from plugman.output.author import packed as packed
    from plugman.output.author import plugin_warnings as plugin_warnings
    from plugman.output.author import published as published
    from plugman.output.author import scaffolded as scaffolded
    from plugman.output.author import tagged as tagged
    from plugman.output.capabilities import capability_diff as capability_diff
    from plugman.output.capabilities import updated as updated
    from plugman.output.common import FORMAT_VERSION as FORMAT_VERSION
    from plugman.output.common import announced as announced
    from plugman.output.common import ask as ask
    from plugman.output.common import display_path as display_path
    from plugman.output.common import emit as emit
    from plugman.output.common import envelope as envelope
    from plugman.output.common import error as error
    from plugman.output.common import error_envelope as error_envelope
    from plugman.output.common import located as located
    from plugman.output.common import progress_listener as progress_listener
    from plugman.output.common import set_verbosity as set_verbosity
    from plugman.output.common import verbosity as verbosity
    from plugman.output.common import warning_listener as warning_listener
    from plugman.output.common import warnings as warnings
    from plugman.output.config import connectors_synced as connectors_synced
    from plugman.output.config import diagnostic_dict as diagnostic_dict
    from plugman.output.config import mcp_changed as mcp_changed
    from plugman.output.config import mcp_import_warnings as mcp_import_warnings
    from plugman.output.config import mcp_imported as mcp_imported
    from plugman.output.config import problems as problems
    from plugman.output.config import trust_changed as trust_changed
    from plugman.output.config import trusted as trusted
    from plugman.output.config import var_changed as var_changed
    from plugman.output.config import vars_listed as vars_listed
    from plugman.output.export import doctor_report as doctor_report
    from plugman.output.export import exported as exported
    from plugman.output.findings import FORMATS as FORMATS
    from plugman.output.findings import validation as validation
    from plugman.output.gateway import gateway_token as gateway_token
    from plugman.output.importing import import_undone as import_undone
    from plugman.output.importing import imported as imported
    from plugman.output.oauth import logged_in as logged_in
    from plugman.output.oauth import logged_out as logged_out
    from plugman.output.plugins import changes as changes
    from plugman.output.plugins import configured as configured
    from plugman.output.plugins import installed as installed
    from plugman.output.plugins import locked as locked
    from plugman.output.plugins import markets as markets
    from plugman.output.plugins import outdated as outdated
    from plugman.output.plugins import plugin_info as plugin_info
    from plugman.output.plugins import registry_searched as registry_searched
    from plugman.output.plugins import sbom_written as sbom_written
    from plugman.output.plugins import searched as searched
    from plugman.output.policy import policy_explained as policy_explained
    from plugman.output.registry import registry_logged_in as registry_logged_in
    from plugman.output.registry import registry_logged_out as registry_logged_out
    from plugman.output.resolution import explained as explained
    from plugman.output.resolution import mcp_got as mcp_got
    from plugman.output.resolution import mcp_listed as mcp_listed
    from plugman.output.resolution import resolved as resolved
    from plugman.output.resolution import status_row as status_row
    from plugman.output.runtime import hook_block_reason as hook_block_reason
    from plugman.output.runtime import hook_run as hook_run
    from plugman.output.runtime import hooks_listed as hooks_listed
    from plugman.output.runtime import probed as probed
    from plugman.output.runtime import tool_pool as tool_pool
    from plugman.output.signing import key_generated as key_generated
    from plugman.output.signing import signed as signed


_LINE = "    from plugman.output."


def _homes() -> dict[str, str]:
    """Each name imported above and the module it lives in, read from those lines themselves:
    they are the one list of the names (the type checkers' view too)."""
    found = {}  # str methods, not a regex: compiling one costs more than the whole read
    for line in Path(__file__).read_text(encoding="utf-8").splitlines():
        if line.startswith(_LINE):
            module, _, name, _, alias = line.removeprefix(_LINE).split()
            if name == alias:
                found[name] = module
    return found


HOME = _homes()


def __getattr__(name: str) -> Any:
    if name not in HOME:
        raise AttributeError(f"module 'plugman.output' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"plugman.output.{HOME[name]}"), name)
    globals()[name] = value
    return value

"""plugman holds to Claude Code's load rules: each row of `tests/claude_rules/rules.json` (what the
real Claude Code 2.1.332 did with one mutated manifest, see tests/claude_rules/generate.py) is
rebuilt and given to plugman, whose verdicts must agree with Claude's:

- `validate`: an error where `claude plugin validate` has one (and none where it has none);
- install: what Claude installs, plugman installs, with a warning where Claude's validate
  flags it; what Claude refuses, plugman refuses;
- loads: what Claude will not load is not delivered to Claude: plugman refuses it, and
  `plugin.claude_refusal` (over `acceptance.claude_refusal`) names Claude's reason, so the
  native Claude deployment leaves it out with that note; what Claude loads, it lets through.

Where plugman is stricter on purpose (STRICTER, STRICTER_INSTALL), the test asserts plugman's own
refusal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plugman.cli import invoke
from plugman.extensions import source_locations
from plugman.manifest import acceptance, plugin
from plugman.manifest.validate import validate
from tests.claude_rules import build, load_table

ROWS = load_table()
# Where plugman is stricter than Claude Code on purpose, and why.
STRICTER = {
    "manifest-duplicate-key": "a duplicate key is refused: a reviewer reads the first value "
    "while the agent uses the last (Claude Code warns and installs)",
}
# Where plugman refuses an install Claude Code makes (its validate agreeing), and why.
STRICTER_INSTALL = {
    "optional-dependencies-also-required": "a required dependency that cannot be installed "
    "refuses the install (Claude Code installs the plugin, warns, and then fails to load it)",
}


def _target(row: dict[str, Any], folder: Path, root: Path) -> Path:
    return root if row["mutation"]["kind"] == "plugin" else folder


@pytest.fixture(params=ROWS, ids=[row["mutation"]["id"] for row in ROWS])
def row(request: pytest.FixtureRequest) -> dict[str, Any]:
    found: dict[str, Any] = request.param
    return found


def test_the_table_covers_the_cases_of_issue_23() -> None:
    by_id = {row["mutation"]["id"]: row for row in ROWS}
    assert by_id["agents-folder-list"]["install"]["verdict"] == "refused"
    assert by_id["agents-folder-list"]["load"]["verdict"] == "failed"
    assert by_id["author-string"]["install"]["verdict"] == "installed"
    assert by_id["author-string"]["validate"]["verdict"] == "error"
    assert len(ROWS) > 140


def test_validate_agrees_with_claude_plugin_validate(row: dict[str, Any], tmp_path: Path) -> None:
    mutation = row["mutation"]
    folder = tmp_path / "market"
    root = build(folder, mutation, mutation["id"], "rules")
    result = validate([_target(row, folder, root)], source_keys=source_locations)
    claude = row["validate"]
    shown = [acceptance.where(d, folder) for d in result.diagnostics]
    if mutation["id"] in STRICTER:  # plugman's own error, where Claude only warns
        assert result.errors and claude["verdict"] == "warning", (claude, shown)
        return
    assert bool(result.errors) == (claude["verdict"] == "error"), (claude, shown)


def test_install_and_load_agree_with_claude(
    row: dict[str, Any], tmp_path: Path, isolated_home: Path
) -> None:
    mutation = row["mutation"]
    folder = tmp_path / "market"
    root = build(folder, mutation, mutation["id"], "rules")
    name = entry_name(folder) or mutation["id"]
    added = invoke(["marketplace", "add", str(folder)])
    installed = added.exit_code == 0
    output = added.output
    if installed:
        done = invoke(["install", f"{name}@rules"])
        installed, output = done.exit_code == 0, output + done.output
    claude = row["install"]
    if mutation["id"] in STRICTER | STRICTER_INSTALL:  # plugman refuses what Claude installs
        assert not installed and claude["verdict"] == "installed", (claude, output)
        return
    assert installed == (claude["verdict"] == "installed"), (claude, output)
    if installed and row["validate"]["verdict"] == "error":
        assert "warning" in output.lower(), (row["validate"], output)
    if any("malformed and ignored" in note for note in row["load"].get("notes", [])):
        assert "Claude Code ignores this field" in output, output
    load = row["load"]
    if load["verdict"] == "unknown":
        return
    # what decides whether plugman's native deployment hands the plugin to Claude
    reason = plugin.claude_refusal(root) if mutation["kind"] == "plugin" else None
    if mutation["kind"] != "plugin" and installed:
        reason = acceptance.claude_refusal(
            validate([folder], source_keys=source_locations).diagnostics
        )
    if load["verdict"] == "failed":
        assert reason or not installed, (load, output)
        assert reason or mutation["kind"] != "plugin", load
    else:
        assert reason is None, (load, reason)


def entry_name(folder: Path) -> str | None:
    """The name of the marketplace's first entry (what `install NAME@rules` names)."""
    doc = json.loads((folder / ".claude-plugin" / "marketplace.json").read_text())
    plugins = doc.get("plugins") if isinstance(doc, dict) else None
    first = plugins[0] if isinstance(plugins, list) and plugins else None
    name = first.get("name") if isinstance(first, dict) else None
    return name if isinstance(name, str) else None

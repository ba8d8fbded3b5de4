"""The gateway's instructions: how sections are composed and what is remembered."""

from __future__ import annotations

import json
from pathlib import Path

from plugman.runtime.instructions import HEADLINE, LIMIT, Remembered, compose

ENTRY = {"type": "http", "url": "https://mcp.example/mcp", "headers": {"X-Key": "s3cret"}}


def test_sections_in_order_cut_and_empty_ones_left_out() -> None:
    text = compose(
        [("web", "Use add."), ("quiet", "  "), ("plugin:p:s", "x" * (LIMIT + 10)), ("none", None)]
    )
    parts = text.split("\n\n")
    assert parts[0] == HEADLINE
    assert parts[1] == "## web (tools mcp__web__*)\nUse add."
    assert parts[2] == f"## plugin:p:s (tools mcp__plugin_p_s__*)\n{'x' * LIMIT}… [cut by plugman]"
    assert len(parts) == 3


def test_remembered_across_processes_until_the_entry_changes(tmp_path: Path) -> None:
    path = tmp_path / "state" / "gateway-instructions.json"
    Remembered(path).put("web", ENTRY, "Use add.")
    again = Remembered(path)
    assert again.get("web", ENTRY) == "Use add."
    assert again.get("web", {**ENTRY, "headers": {"X-Key": "rotated"}}) == "Use add."
    assert again.get("web", {**ENTRY, "url": "https://elsewhere.example/mcp"}) is None
    assert again.get("other", ENTRY) is None
    assert "s3cret" not in path.read_text()
    stamp = path.stat().st_mtime_ns
    again.put("web", ENTRY, "Use add.")  # unchanged: not written
    assert path.stat().st_mtime_ns == stamp


def test_an_unreadable_memory_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "gateway-instructions.json"
    for junk in ("{not json", json.dumps([1, 2]), json.dumps({"web": "flat"})):
        path.write_text(junk)
        assert Remembered(path).get("web", ENTRY) is None
    assert Remembered().get("web", ENTRY) is None

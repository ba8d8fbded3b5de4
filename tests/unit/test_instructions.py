"""The gateway's instructions and memory: how sections are composed and what is remembered."""

from __future__ import annotations

import json
from pathlib import Path

from mcp import types

from plugman.runtime.gateway.instructions import HEADLINE, LIMIT, compose
from plugman.runtime.gateway.memory import Memory, Recalled

ENTRY = {"type": "http", "url": "https://mcp.example/mcp", "headers": {"X-Key": "s3cret"}}


def test_sections_in_order_cut_and_empty_ones_left_out() -> None:
    text = compose(
        [("web", "Use add."), ("quiet", "  "), ("plugin:p:s", "x" * (LIMIT + 10)), ("none", None)]
    )
    parts = text.split("\n\n")
    assert parts[0] == HEADLINE
    assert parts[1] == "## web (tools web__*)\nUse add."
    assert parts[2] == f"## plugin:p:s (tools plugin_p_s__*)\n{'x' * LIMIT}… [cut by plugman]"
    assert len(parts) == 3


def offer(*tools: str) -> Recalled:
    return Recalled(
        [
            types.Tool(name=t, description=f"does {t}", input_schema={"type": "object"})
            for t in tools
        ],
        [types.Prompt(name="summarize", arguments=[types.PromptArgument(name="style")])],
        [types.Resource(name="index", uri="notes://index")],
        [types.ResourceTemplate(name="note", uri_template="notes://note/{title}")],
    )


def test_remembered_across_processes_until_the_entry_changes(tmp_path: Path) -> None:
    path = tmp_path / "state" / "gateway-memory.json"
    Memory(path).keep("web", ENTRY, "Use add.", offer("add"))
    again = Memory(path)
    assert again.instructions("web", ENTRY) == "Use add."
    rotated = {**ENTRY, "headers": {"X-Key": "rotated"}}
    assert again.instructions("web", rotated) == "Use add."
    assert again.recall("web", rotated) == offer("add")  # the same items, read back
    assert again.instructions("web", {**ENTRY, "url": "https://elsewhere.example/mcp"}) is None
    assert again.recall("web", {**ENTRY, "url": "https://elsewhere.example/mcp"}) is None
    assert again.recall("other", ENTRY) is None
    assert "s3cret" not in path.read_text() and "X-Key" not in path.read_text()
    stamp = path.stat().st_mtime_ns
    again.keep("web", ENTRY, "Use add.", offer("add"))  # unchanged: not written
    assert path.stat().st_mtime_ns == stamp


def test_a_write_keeps_what_other_gateways_remembered(tmp_path: Path) -> None:
    path = tmp_path / "gateway-memory.json"
    mine, theirs = Memory(path), Memory(path)
    theirs.keep("theirs", ENTRY, None, offer("a"))
    mine.keep("mine", ENTRY, None, offer("b"))
    assert Memory(path).recall("theirs", ENTRY) == offer("a")
    assert Memory(path).recall("mine", ENTRY) == offer("b")


def test_an_unreadable_memory_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "gateway-memory.json"
    for junk in ("{not json", json.dumps([1, 2]), json.dumps({"web": "flat"})):
        path.write_text(junk)
        assert Memory(path).instructions("web", ENTRY) is None
        assert Memory(path).recall("web", ENTRY) is None
    assert Memory().recall("web", ENTRY) is None
    Memory(path).keep("web", ENTRY, "x", offer("add"))
    record = json.loads(path.read_text())
    record["web"]["tools"] = [{"name": 3}]  # another version's shape
    path.write_text(json.dumps(record))
    assert Memory(path).recall("web", ENTRY) is None
    assert Memory(path).instructions("web", ENTRY) == "x"

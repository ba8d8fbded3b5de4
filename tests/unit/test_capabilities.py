"""plugman.plugins.supply_chain.capabilities.compare on two real plugin trees: what is gained and
lost."""

from __future__ import annotations

import json
from pathlib import Path

from plugman.plugins.supply_chain.capabilities import CapabilityChange, compare


def tree(
    root: Path, servers: dict[str, object], hooks: dict[str, object], files: dict[str, str]
) -> Path:
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "p"}))
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    (root / "hooks").mkdir()
    (root / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def stop(command: str) -> dict[str, object]:
    return {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}


def test_gained_and_lost(tmp_path: Path) -> None:
    old = tree(
        tmp_path / "old",
        {"a": {"command": "node", "args": ["a.js"]}, "gone": {"command": "x"}},
        stop("sh stop.sh"),
        {"bin/tool": "v1", "commands/c.md": "short"},
    )
    new = tree(
        tmp_path / "new",
        {
            "a": {"command": "node", "args": ["a.js"]},
            "web": {"type": "http", "url": "https://mcp.example.com/x"},
        },
        {},
        {
            "bin/tool": "v2",
            "bin/more": "x",
            "commands/c.md": "a much longer command text",
            "settings.json": json.dumps({"agent": "reviewer", "ignored": 1}),
        },
    )
    found = compare("p@m", old, new)
    server = "http https://mcp.example.com/x (host mcp.example.com)"
    rows = {(c.kind, c.name, c.before is None): c.after for c in found.gained}
    assert rows.keys() == {
        ("server", "web", True),
        ("executable", "bin/more", True),
        ("executable", "bin/tool", False),  # changed bytes
        ("setting", "agent", True),  # only the keys Claude Code honours
        ("context", "always-on text", False),
    }
    assert rows[("server", "web", True)] == server
    assert rows[("setting", "agent", True)] == '"reviewer"'
    assert (found.context_before, found.context_after) == (5, 26)
    assert set(found.lost) == {
        CapabilityChange("server", "gone", "x", None),
        CapabilityChange("hook", "Stop:*", "command sh stop.sh", None),
    }
    assert compare("p@m", new, new).empty

#!/usr/bin/env python3
"""PostToolUse / Stop hook: append one JSON line per event to a log file.

Usage: log_event.py LOGFILE   (hooks.json passes "${CLAUDE_PLUGIN_DATA}/activity.jsonl").
Without an argument it falls back to $CLAUDE_PLUGIN_DATA/activity.jsonl. The hook never
blocks: it always exits 0 and prints nothing.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime
from pathlib import Path


def log_path(argv: list[str]) -> Path | None:
    if len(argv) > 1 and argv[1]:
        return Path(argv[1])
    data_dir = os.environ.get("CLAUDE_PLUGIN_DATA")
    return Path(data_dir) / "activity.jsonl" if data_dir else None


def main() -> int:
    try:
        payload = json.load(sys.stdin)
    except (json.JSONDecodeError, UnicodeDecodeError):
        payload = {}
    if not isinstance(payload, dict):
        payload = {}
    tool_input = payload.get("tool_input")
    record = {
        "time": datetime.now().astimezone().isoformat(timespec="seconds"),
        "event": payload.get("hook_event_name"),
        "session_id": payload.get("session_id"),
        "tool": payload.get("tool_name"),
        "file": tool_input.get("file_path") if isinstance(tool_input, dict) else None,
    }
    path = log_path(sys.argv)
    if path is None:
        return 0
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
    except OSError as exc:
        print(f"guardrails: could not write {path}: {exc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""SessionStart hook (matcher "startup"): tell Claude which guardrails are active."""

import json
import sys

CONTEXT = (
    "The guardrails plugin is active: Bash commands that run `rm -rf /` are blocked, "
    "prompts that contain private keys or cloud access keys are rejected, and every "
    "Write/Edit is logged to the plugin's data directory."
)


def main() -> int:
    # The input is read only to drain stdin; this hook needs nothing from it.
    sys.stdin.read()
    output = {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": CONTEXT,
        }
    }
    print(json.dumps(output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
